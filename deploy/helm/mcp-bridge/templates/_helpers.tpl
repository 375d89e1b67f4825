{{- define "mcp-bridge.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "mcp-bridge.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "mcp-bridge.labels" -}}
app.kubernetes.io/name: {{ include "mcp-bridge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "mcp-bridge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-bridge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "mcp-bridge.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The bridge's configuration file: the values' config, with the listeners and the tokens file the chart sets. */}}
{{- define "mcp-bridge.config" -}}
{{- $listen := dict "grpc" (printf "0.0.0.0:%v" .Values.ports.grpc) "http" (printf "0.0.0.0:%v" .Values.ports.http) -}}
{{- if eq .Values.mode "sidecar" -}}
{{- $_ := set $listen "grpcSocket" (printf "%s/grpc.sock" .Values.sidecar.socketDir) -}}
{{- end -}}
{{- if .Values.metrics.enabled -}}
{{- $_ := set $listen "admin" (printf "0.0.0.0:%v" .Values.metrics.port) -}}
{{- end -}}
{{- $cfg := deepCopy .Values.config | merge (dict "listen" $listen) -}}
{{- if .Values.tokens.existingSecret -}}
{{- $auth := get $cfg "auth" | default dict -}}
{{- $_ := set $auth "tokensFile" (printf "/etc/mcp-bridge/tokens/%s" .Values.tokens.key) -}}
{{- $_ := set $cfg "auth" $auth -}}
{{- end -}}
{{- if and .Values.sharedState.redis.address (eq .Values.mode "shared") -}}
{{- with .Values.sharedState.redis }}
{{- $redis := dict "address" .address "tls" .tls "keyPrefix" .keyPrefix "leaseTTL" .leaseTTL -}}
{{- if .passwordKey }}{{ $_ := set $redis "passwordEnv" "MCPBRIDGE_REDIS_PASSWORD" }}{{ end -}}
{{- if .usernameKey }}{{ $_ := set $redis "usernameEnv" "MCPBRIDGE_REDIS_USERNAME" }}{{ end -}}
{{- $_ := set $cfg "state" (dict "redis" $redis "keyEnv" "MCPBRIDGE_STATE_KEY") -}}
{{- end }}
{{- else if .Values.state.enabled -}}
{{- $state := dict "file" (printf "%s/state.db" .Values.state.mountPath) "fsync" .Values.state.fsync -}}
{{- if .Values.state.key.existingSecret -}}
{{- $_ := set $state "keyFile" (printf "/etc/mcp-bridge/state-key/%s" .Values.state.key.key) -}}
{{- end -}}
{{- $_ := set $cfg "state" $state -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* The bridge container, in both modes. */}}
{{- define "mcp-bridge.container" -}}
- name: mcp-bridge
  {{- if eq .Values.mode "sidecar" }}
  # A native sidecar: this init container keeps running, started before the app and stopped after it.
  restartPolicy: Always
  {{- end }}
  image: {{ include "mcp-bridge.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args:
    - --config=/etc/mcp-bridge/config/bridge.yaml
    - --log-format={{ .Values.logFormat }}
    - --log-level={{ .Values.logLevel }}
    {{- if eq .Values.mode "shared" }}
    - --replica=$(POD_NAME)
    {{- end }}
  env:
    - name: POD_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    {{- with .Values.sharedState.redis }}{{ if and .address (eq $.Values.mode "shared") }}
    {{- if not .existingSecret }}{{ fail "sharedState.redis.existingSecret is required with sharedState.redis.address (the state key all replicas share)" }}{{ end }}
    - name: MCPBRIDGE_STATE_KEY
      valueFrom:
        secretKeyRef: {name: {{ .existingSecret | quote }}, key: {{ .stateKeyKey | quote }}}
    {{- if .passwordKey }}
    - name: MCPBRIDGE_REDIS_PASSWORD
      valueFrom:
        secretKeyRef: {name: {{ .existingSecret | quote }}, key: {{ .passwordKey | quote }}}
    {{- end }}
    {{- if .usernameKey }}
    - name: MCPBRIDGE_REDIS_USERNAME
      valueFrom:
        secretKeyRef: {name: {{ .existingSecret | quote }}, key: {{ .usernameKey | quote }}}
    {{- end }}
    {{- end }}{{ end }}
  {{- with .Values.upstreamSecrets }}
  envFrom:
    {{- range . }}
    - secretRef:
        name: {{ . }}
    {{- end }}
  {{- end }}
  ports:
    - name: grpc
      containerPort: {{ .Values.ports.grpc }}
      protocol: TCP
    - name: http
      containerPort: {{ .Values.ports.http }}
      protocol: TCP
    {{- if .Values.metrics.enabled }}
    - name: metrics
      containerPort: {{ .Values.metrics.port }}
      protocol: TCP
    {{- end }}
  startupProbe:
    grpc:
      port: {{ .Values.ports.grpc }}
    periodSeconds: 2
    failureThreshold: 30
  livenessProbe:
    grpc:
      port: {{ .Values.ports.grpc }}
    periodSeconds: 20
    timeoutSeconds: 5
  readinessProbe:
    httpGet:
      path: /readyz
      port: http
    periodSeconds: 5
    timeoutSeconds: 5
  lifecycle:
    preStop:
      sleep:
        seconds: {{ .Values.drain.preStopSleepSeconds }}
  resources:
  {{- toYaml .Values.resources | nindent 4 }}
  securityContext:
  {{- toYaml .Values.securityContext | nindent 4 }}
  volumeMounts:
    # The ConfigMap as a directory, not a subPath: the kubelet then swaps its files (..data) when the
    # ConfigMap changes, and the bridge's watch applies the new file live (docs/kubernetes.md).
    - name: config
      mountPath: /etc/mcp-bridge/config
      readOnly: true
    - name: tmp
      mountPath: /tmp
    {{- if .Values.tokens.existingSecret }}
    - name: tokens
      mountPath: /etc/mcp-bridge/tokens
      readOnly: true
    {{- end }}
    {{- if eq .Values.mode "sidecar" }}
    - name: socket
      mountPath: {{ .Values.sidecar.socketDir }}
    {{- end }}
    {{- if .Values.state.enabled }}
    - name: state
      mountPath: {{ .Values.state.mountPath }}
    {{- if .Values.state.key.existingSecret }}
    - name: state-key
      mountPath: /etc/mcp-bridge/state-key
      readOnly: true
    {{- end }}
    {{- end }}
{{- end -}}

{{- define "mcp-bridge.volumes" -}}
- name: config
  configMap:
    name: {{ include "mcp-bridge.fullname" . }}
- name: tmp
  emptyDir: {}
{{- if .Values.tokens.existingSecret }}
- name: tokens
  secret:
    secretName: {{ .Values.tokens.existingSecret }}
    items:
      - key: {{ .Values.tokens.key }}
        path: {{ .Values.tokens.key }}
{{- end }}
{{- if eq .Values.mode "sidecar" }}
- name: socket
  emptyDir: {}
{{- if .Values.state.enabled }}
- name: state
  emptyDir: {}
{{- end }}
{{- end }}
{{- if and .Values.state.enabled .Values.state.key.existingSecret }}
- name: state-key
  secret:
    secretName: {{ .Values.state.key.existingSecret }}
    defaultMode: 0440  # group: the pod's fsGroup, which the bridge runs in
    items:
      - key: {{ .Values.state.key.key }}
        path: {{ .Values.state.key.key }}
{{- end }}
{{- end -}}

{{- define "mcp-bridge.podCommon" -}}
serviceAccountName: {{ include "mcp-bridge.fullname" . }}
automountServiceAccountToken: false
terminationGracePeriodSeconds: {{ .Values.drain.terminationGracePeriodSeconds }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
The pod annotation that rolls the pods on a configuration change (docs/kubernetes.md, "Configuration changes").
With configChange: reload (the default) it sums the configuration without the keys the bridge applies live
(internal/config/diff.go liveKeys), so that a change of servers, policy, rate limits or session limits is
applied by the running pods and only a change that needs a restart rolls them; with configChange: roll it
sums the whole configuration.
*/}}
{{- define "mcp-bridge.configChecksum" -}}
{{- $cfg := include "mcp-bridge.config" . | fromYaml -}}
{{- if eq .Values.configChange "reload" -}}
{{- $cfg = omit $cfg "mcpServers" "servers" "rateLimits" -}}
{{- with get $cfg "auth" }}{{ $_ := set $cfg "auth" (omit . "tokensFile" "oidc" "mtls") }}{{ end -}}
{{- with get $cfg "limits" }}{{ $_ := set $cfg "limits" (omit . "maxSessions" "maxSessionsPerPrincipal" "maxPendingPerSession") }}{{ end -}}
{{- end -}}
{{- toYaml $cfg | sha256sum -}}
{{- end -}}
