// Package check renders the mcp-bridge Helm chart with `helm template` and checks the manifests offline: each
// document is decoded strictly (unknown fields and wrong types are errors) into the Kubernetes API types of
// k8s.io/api, and the chart's promises are asserted (non-root, read-only root filesystem, probes, drain bounds,
// native sidecar). It is its own module so that the project's go.mod does not carry k8s.io/api.
//
// Run by `make test-helm` (HELM names the helm binary).
package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// bridgeDrainSeconds is the bridge's own bound on its drain after SIGTERM (cmd/mcp-bridge/serve.go,
// shutdownTimeouts.total; docs/adr/0008).
const bridgeDrainSeconds = 25

const kubeVersion = "1.31.0"

func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := os.Getenv("HELM")
	if bin == "" {
		bin = "helm"
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// rendered is one rendered chart, by kind.
type rendered struct {
	statefulSets []appsv1.StatefulSet
	deployments  []appsv1.Deployment
	services     []corev1.Service
	configMaps   []corev1.ConfigMap
	pdbs         []policyv1.PodDisruptionBudget
	accounts     []corev1.ServiceAccount
	policies     []networkingv1.NetworkPolicy
	monitors     []serviceMonitor
}

// serviceMonitor is the part of a prometheus-operator ServiceMonitor (monitoring.coreos.com/v1) the chart
// sets; the CRD's Go types are not in k8s.io/api.
type serviceMonitor struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Scheme   string `json:"scheme"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// strict decodes one YAML document into v, refusing unknown fields.
func strict(doc []byte, v any) error {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func render(t *testing.T, set ...string) rendered {
	t.Helper()
	chart, err := filepath.Abs("../mcp-bridge")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"template", "t", chart, "--kube-version", kubeVersion}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out := helm(t, args...)
	var r rendered
	for i, doc := range bytes.Split(out, []byte("\n---")) {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, doc)
		}
		var err error
		switch meta.APIVersion + " " + meta.Kind {
		case " ":
			continue // only comments
		case "apps/v1 StatefulSet":
			var v appsv1.StatefulSet
			err = strict(doc, &v)
			r.statefulSets = append(r.statefulSets, v)
		case "apps/v1 Deployment":
			var v appsv1.Deployment
			err = strict(doc, &v)
			r.deployments = append(r.deployments, v)
		case "v1 Service":
			var v corev1.Service
			err = strict(doc, &v)
			r.services = append(r.services, v)
		case "v1 ConfigMap":
			var v corev1.ConfigMap
			err = strict(doc, &v)
			r.configMaps = append(r.configMaps, v)
		case "v1 ServiceAccount":
			var v corev1.ServiceAccount
			err = strict(doc, &v)
			r.accounts = append(r.accounts, v)
		case "networking.k8s.io/v1 NetworkPolicy":
			var v networkingv1.NetworkPolicy
			err = strict(doc, &v)
			r.policies = append(r.policies, v)
		case "monitoring.coreos.com/v1 ServiceMonitor":
			var v serviceMonitor
			js, jerr := yaml.YAMLToJSON(doc)
			if err = jerr; err == nil {
				err = json.Unmarshal(js, &v)
			}
			r.monitors = append(r.monitors, v)
		case "policy/v1 PodDisruptionBudget":
			var v policyv1.PodDisruptionBudget
			err = strict(doc, &v)
			r.pdbs = append(r.pdbs, v)
		default:
			err = fmt.Errorf("unexpected kind %s %s", meta.APIVersion, meta.Kind)
		}
		if err != nil {
			t.Fatalf("document %d (%s): %v\n%s", i, meta.Kind, err, doc)
		}
	}
	return r
}

// checkPod asserts what every pod of the chart promises, for the bridge container c.
func checkPod(t *testing.T, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("pod securityContext %+v: want non-root", spec.SecurityContext)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.Capabilities == nil || len(sc.Capabilities.Drop) == 0 {
		t.Errorf("container securityContext %+v: want non-root, read-only root, no privilege escalation, capabilities dropped", sc)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.GRPC == nil || c.StartupProbe == nil || c.StartupProbe.GRPC == nil {
		t.Errorf("liveness/startup probes %+v %+v: want gRPC health", c.LivenessProbe, c.StartupProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v: want GET /readyz", c.ReadinessProbe)
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatalf("preStop %+v: want a sleep", c.Lifecycle)
	}
	if grace, pre := spec.TerminationGracePeriodSeconds, c.Lifecycle.PreStop.Sleep.Seconds; grace == nil || *grace < pre+bridgeDrainSeconds {
		t.Errorf("terminationGracePeriodSeconds %v < preStop %d s + the bridge's drain %d s", grace, pre, bridgeDrainSeconds)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want requests and a memory limit", c.Resources)
	}
	mounted := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounted[m.MountPath] = true
	}
	if !mounted["/tmp"] || !mounted["/etc/mcp-bridge/config"] {
		t.Errorf("mounts %v: want the config and a writable /tmp", c.VolumeMounts)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the bridge needs no Kubernetes API token: automountServiceAccountToken should be false")
	}
}

func TestSharedService(t *testing.T) {
	r := render(t, "replicas=3", "tokens.existingSecret=bridge-tokens", "upstreamSecrets[0]=search-keys")
	if len(r.statefulSets) != 1 || len(r.deployments) != 0 {
		t.Fatalf("want one StatefulSet and no Deployment, got %d, %d", len(r.statefulSets), len(r.deployments))
	}
	sts := r.statefulSets[0]
	if *sts.Spec.Replicas != 3 || sts.Spec.ServiceName != "t-mcp-bridge-headless" {
		t.Errorf("statefulset spec: replicas %d, serviceName %q", *sts.Spec.Replicas, sts.Spec.ServiceName)
	}
	pod := sts.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("containers: %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	checkPod(t, pod, c)
	if !contains(c.Args, "--replica=$(POD_NAME)") {
		t.Errorf("args %v: each replica must be named after its pod", c.Args)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "search-keys" {
		t.Errorf("envFrom %+v: want the upstream secret", c.EnvFrom)
	}
	var tokens bool
	for _, v := range pod.Volumes {
		tokens = tokens || (v.Secret != nil && v.Secret.SecretName == "bridge-tokens")
	}
	if !tokens {
		t.Error("the tokens Secret is not mounted")
	}
	var headless, any bool
	for _, s := range r.services {
		ports := map[string]int32{}
		for _, p := range s.Spec.Ports {
			ports[p.Name] = p.Port
		}
		if ports["grpc"] != 50051 || ports["http"] != 8080 {
			t.Errorf("service %s ports %v", s.Name, ports)
		}
		headless = headless || s.Spec.ClusterIP == corev1.ClusterIPNone
		any = any || s.Spec.ClusterIP == ""
	}
	if !headless || !any {
		t.Errorf("services: want a headless one (per replica) and a ClusterIP one (any replica): %d", len(r.services))
	}
	if len(r.pdbs) != 1 {
		t.Errorf("want a PodDisruptionBudget with 3 replicas, got %d", len(r.pdbs))
	}
	if len(r.configMaps) != 1 {
		t.Fatalf("configmaps: %d", len(r.configMaps))
	}
	var cfg struct {
		Listen map[string]string `json:"listen"`
		Auth   map[string]string `json:"auth"`
	}
	if err := yaml.Unmarshal([]byte(r.configMaps[0].Data["bridge.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Listen["grpc"] != "0.0.0.0:50051" || cfg.Auth["tokensFile"] != "/etc/mcp-bridge/tokens/tokens.txt" {
		t.Errorf("bridge.yaml listen %v auth %v", cfg.Listen, cfg.Auth)
	}
}

func TestPerReplicaServices(t *testing.T) {
	r := render(t, "replicas=2", "perReplicaServices=true")
	want := map[string]bool{"t-mcp-bridge-0": true, "t-mcp-bridge-1": true}
	for _, s := range r.services {
		if pod := s.Spec.Selector["statefulset.kubernetes.io/pod-name"]; pod != "" {
			if pod != s.Name || !want[pod] {
				t.Errorf("service %s selects pod %q", s.Name, pod)
			}
			delete(want, pod)
		}
	}
	if len(want) != 0 {
		t.Errorf("no Service for %v", want)
	}
}

func TestOneReplicaHasNoDisruptionBudget(t *testing.T) {
	if r := render(t); len(r.pdbs) != 0 {
		t.Errorf("a PodDisruptionBudget with maxUnavailable 1 and one replica blocks node drains")
	}
}

func TestNativeSidecar(t *testing.T) {
	r := render(t, "mode=sidecar", "sidecar.app.image=example.com/app:1")
	if len(r.deployments) != 1 || len(r.statefulSets) != 0 || len(r.services) != 0 {
		t.Fatalf("want one Deployment only: %d deployments, %d statefulsets, %d services", len(r.deployments), len(r.statefulSets), len(r.services))
	}
	pod := r.deployments[0].Spec.Template.Spec
	if len(pod.InitContainers) != 1 || len(pod.Containers) != 1 {
		t.Fatalf("init containers %d, containers %d", len(pod.InitContainers), len(pod.Containers))
	}
	bridge, app := pod.InitContainers[0], pod.Containers[0]
	if bridge.RestartPolicy == nil || *bridge.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("the bridge init container's restartPolicy = %v, want Always (a native sidecar)", bridge.RestartPolicy)
	}
	checkPod(t, pod, bridge)
	if contains(bridge.Args, "--replica=$(POD_NAME)") {
		t.Error("a sidecar serves one pod: no replica name")
	}
	var target string
	for _, e := range app.Env {
		if e.Name == "MCP_BRIDGE_TARGET" {
			target = e.Value
		}
	}
	if target != "unix:///run/mcp-bridge/grpc.sock" || app.Image != "example.com/app:1" {
		t.Errorf("app: image %q, MCP_BRIDGE_TARGET %q", app.Image, target)
	}
	socket := map[string]bool{}
	for _, m := range append(bridge.VolumeMounts, app.VolumeMounts...) {
		if m.MountPath == "/run/mcp-bridge" {
			socket[m.Name] = true
		}
	}
	var emptyDir bool
	for _, v := range pod.Volumes {
		emptyDir = emptyDir || (socket[v.Name] && v.EmptyDir != nil)
	}
	if !emptyDir {
		t.Error("the socket directory is not a shared emptyDir")
	}
}

// The values schema refuses what the chart cannot honour.
func TestValuesSchema(t *testing.T) {
	chart, _ := filepath.Abs("../mcp-bridge")
	for _, set := range []string{"mode=daemon", "securityContext.readOnlyRootFilesystem=false", "drain.terminationGracePeriodSeconds=10", "config.listen.grpc=0.0.0.0:1", "config.state.file=/x", "state.mountPath=relative", "metrics.port=0", "metrics.serviceMonitor.interval=often"} {
		cmd := exec.Command(helmBin(), "template", "t", chart, "--kube-version", kubeVersion, "--set", set)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("--set %s rendered; want a schema error\n%s", set, out)
		}
	}
}

func helmBin() string {
	if b := os.Getenv("HELM"); b != "" {
		return b
	}
	return "helm"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// The hand-written example deploy/kubernetes/sidecar.yaml decodes strictly too, and is a native sidecar.
func TestSidecarExample(t *testing.T) {
	data, err := os.ReadFile("../../kubernetes/sidecar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var deployments int
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ConfigMap":
			var v corev1.ConfigMap
			if err := strict(doc, &v); err != nil {
				t.Fatal(err)
			}
		case "Deployment":
			deployments++
			var v appsv1.Deployment
			if err := strict(doc, &v); err != nil {
				t.Fatal(err)
			}
			ic := v.Spec.Template.Spec.InitContainers
			if len(ic) != 1 || ic[0].RestartPolicy == nil || *ic[0].RestartPolicy != corev1.ContainerRestartPolicyAlways {
				t.Errorf("the bridge is not a native sidecar: %+v", ic)
			}
		default:
			t.Errorf("unexpected kind %q", meta.Kind)
		}
	}
	if deployments != 1 {
		t.Errorf("deployments: %d", deployments)
	}
}

// Shared state in an existing Redis: the bridge's configuration names it, the state key and the password come
// from the Secret as environment variables (never in the ConfigMap), and the chart ships no Redis.
func TestSharedStateRedis(t *testing.T) {
	r := render(t, "replicas=3", "sharedState.redis.address=redis.data:6379", "sharedState.redis.existingSecret=bridge-state", "sharedState.redis.tls=true")
	var cfg struct {
		State struct {
			KeyEnv string `json:"keyEnv"`
			Redis  struct {
				Address     string `json:"address"`
				PasswordEnv string `json:"passwordEnv"`
				TLS         bool   `json:"tls"`
				LeaseTTL    string `json:"leaseTTL"`
			} `json:"redis"`
		} `json:"state"`
	}
	data := r.configMaps[0].Data["bridge.yaml"]
	if err := yaml.Unmarshal([]byte(data), &cfg); err != nil {
		t.Fatal(err)
	}
	st := cfg.State
	if st.KeyEnv != "MCPBRIDGE_STATE_KEY" || st.Redis.Address != "redis.data:6379" || st.Redis.PasswordEnv != "MCPBRIDGE_REDIS_PASSWORD" || !st.Redis.TLS || st.Redis.LeaseTTL != "5s" {
		t.Errorf("bridge.yaml state = %+v\n%s", st, data)
	}
	env := map[string]string{}
	for _, e := range r.statefulSets[0].Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			env[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	if env["MCPBRIDGE_STATE_KEY"] != "bridge-state/state-key" || env["MCPBRIDGE_REDIS_PASSWORD"] != "bridge-state/redis-password" {
		t.Errorf("secret env = %v", env)
	}
	for _, s := range r.statefulSets {
		if strings.Contains(s.Name, "redis") {
			t.Errorf("the chart ships a Redis: %s", s.Name)
		}
	}
	// Without the Secret the chart refuses: the replicas could not share a key.
	cmd := exec.Command(helmBin(), "template", "t", "../mcp-bridge", "--kube-version", kubeVersion, "--set", "sharedState.redis.address=r:6379")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "existingSecret is required") {
		t.Errorf("template without the Secret: %v\n%s", err, out)
	}
}

// The state store: a claim per replica in shared mode, an emptyDir in sidecar mode, mounted where
// bridge.yaml's state.file points; the key from a Secret when one is named; nothing when disabled.
func TestStateVolume(t *testing.T) {
	type stateCfg struct {
		State *struct {
			File    string `json:"file"`
			KeyFile string `json:"keyFile"`
			FSync   *bool  `json:"fsync"`
		} `json:"state"`
	}
	bridgeYAML := func(t *testing.T, r rendered) stateCfg {
		t.Helper()
		var cfg stateCfg
		if len(r.configMaps) != 1 {
			t.Fatalf("configmaps: %d", len(r.configMaps))
		}
		if err := yaml.Unmarshal([]byte(r.configMaps[0].Data["bridge.yaml"]), &cfg); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	mountOf := func(c corev1.Container, name string) string {
		for _, m := range c.VolumeMounts {
			if m.Name == name {
				return m.MountPath
			}
		}
		return ""
	}
	volume := func(spec corev1.PodSpec, name string) *corev1.Volume {
		for i := range spec.Volumes {
			if spec.Volumes[i].Name == name {
				return &spec.Volumes[i]
			}
		}
		return nil
	}

	t.Run("shared", func(t *testing.T) {
		r := render(t, "replicas=2", "state.persistence.storageClassName=fast", "state.key.existingSecret=bridge-state")
		sts := r.statefulSets[0]
		if n := len(sts.Spec.VolumeClaimTemplates); n != 1 {
			t.Fatalf("volumeClaimTemplates: %d, want 1", n)
		}
		vct := sts.Spec.VolumeClaimTemplates[0]
		if vct.Name != "state" || vct.Spec.StorageClassName == nil || *vct.Spec.StorageClassName != "fast" ||
			vct.Spec.Resources.Requests.Storage().String() != "1Gi" || vct.Spec.AccessModes[0] != corev1.ReadWriteOnce {
			t.Errorf("volumeClaimTemplate %+v", vct)
		}
		c := sts.Spec.Template.Spec.Containers[0]
		cfg := bridgeYAML(t, r)
		if cfg.State == nil || cfg.State.File != mountOf(c, "state")+"/state.db" || cfg.State.File != "/var/lib/mcp-bridge/state.db" {
			t.Errorf("state %+v, mounted at %q", cfg.State, mountOf(c, "state"))
		}
		if cfg.State.KeyFile != mountOf(c, "state-key")+"/state.key" || cfg.State.FSync == nil || !*cfg.State.FSync {
			t.Errorf("state %+v, key mounted at %q", cfg.State, mountOf(c, "state-key"))
		}
		if v := volume(sts.Spec.Template.Spec, "state-key"); v == nil || v.Secret == nil || v.Secret.SecretName != "bridge-state" {
			t.Errorf("state-key volume %+v", v)
		}
		if v := volume(sts.Spec.Template.Spec, "state"); v != nil {
			t.Errorf("a pod volume named state (%+v) would hide the claim", v)
		}
	})
	t.Run("sidecar", func(t *testing.T) {
		r := render(t, "mode=sidecar")
		pod := r.deployments[0].Spec.Template.Spec
		c := pod.InitContainers[0]
		if v := volume(pod, "state"); v == nil || v.EmptyDir == nil {
			t.Errorf("state volume %+v, want an emptyDir", v)
		}
		cfg := bridgeYAML(t, r)
		if cfg.State == nil || cfg.State.File != mountOf(c, "state")+"/state.db" || cfg.State.KeyFile != "" {
			t.Errorf("state %+v, mounted at %q; want a generated key", cfg.State, mountOf(c, "state"))
		}
	})
	t.Run("disabled", func(t *testing.T) {
		r := render(t, "state.enabled=false")
		if n := len(r.statefulSets[0].Spec.VolumeClaimTemplates); n != 0 {
			t.Errorf("volumeClaimTemplates: %d, want none", n)
		}
		if cfg := bridgeYAML(t, r); cfg.State != nil {
			t.Errorf("state %+v, want none (memory)", cfg.State)
		}
	})
}

// bridgeConfig is the bridge.yaml the chart renders.
func bridgeConfig(t *testing.T, r rendered) (listen, auth map[string]string) {
	t.Helper()
	if len(r.configMaps) != 1 {
		t.Fatalf("configmaps: %d", len(r.configMaps))
	}
	var cfg struct {
		Listen map[string]string `json:"listen"`
		Auth   map[string]string `json:"auth"`
	}
	if err := yaml.Unmarshal([]byte(r.configMaps[0].Data["bridge.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Listen, cfg.Auth
}

// Without metrics.enabled there is no admin listener and nothing for a scraper.
func TestMetricsOffByDefault(t *testing.T) {
	r := render(t, "tokens.existingSecret=bridge-tokens")
	if listen, _ := bridgeConfig(t, r); listen["admin"] != "" {
		t.Errorf("listen.admin = %q without metrics.enabled", listen["admin"])
	}
	for _, s := range r.services {
		if strings.HasSuffix(s.Name, "-metrics") {
			t.Errorf("service %s without metrics.enabled", s.Name)
		}
	}
	if len(r.monitors)+len(r.policies) != 0 {
		t.Errorf("%d ServiceMonitors, %d NetworkPolicies without metrics.enabled", len(r.monitors), len(r.policies))
	}
}

// With tokens the API port does not serve /metrics (docs/adr/0030): metrics.enabled turns on the admin
// listener, a Service for it, the ServiceMonitor that scrapes it, and a NetworkPolicy that keeps everyone
// but the scraper off that port and nothing else.
func TestMetricsOnTheAdminPort(t *testing.T) {
	for _, mode := range []string{"shared", "sidecar"} {
		t.Run(mode, func(t *testing.T) {
			r := render(t, "mode="+mode, "tokens.existingSecret=bridge-tokens", "metrics.enabled=true", "metrics.port=9191",
				"metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=kps",
				"metrics.networkPolicy.allowFrom[0].namespaceSelector.matchLabels.team=monitoring")
			if listen, auth := bridgeConfig(t, r); listen["admin"] != "0.0.0.0:9191" || auth["tokensFile"] == "" {
				t.Errorf("bridge.yaml listen %v auth %v: want the admin listener on 9191 and tokens", listen, auth)
			}
			var pod corev1.PodSpec
			var c corev1.Container
			if mode == "shared" {
				pod = r.statefulSets[0].Spec.Template.Spec
				c = pod.Containers[0]
			} else {
				pod = r.deployments[0].Spec.Template.Spec
				c = pod.InitContainers[0]
			}
			var containerPort bool
			for _, p := range c.Ports {
				containerPort = containerPort || (p.Name == "metrics" && p.ContainerPort == 9191)
			}
			if !containerPort {
				t.Errorf("container ports %v: want metrics 9191", c.Ports)
			}
			var svc *corev1.Service
			for i, s := range r.services {
				if s.Name == "t-mcp-bridge-metrics" {
					svc = &r.services[i]
				}
			}
			if svc == nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].Port != 9191 {
				t.Fatalf("metrics service = %+v", svc)
			}
			if len(r.monitors) != 1 {
				t.Fatalf("ServiceMonitors: %d", len(r.monitors))
			}
			sm := r.monitors[0]
			for k, v := range sm.Spec.Selector.MatchLabels {
				if svc.Labels[k] != v {
					t.Errorf("the ServiceMonitor selects %s=%s, which the metrics Service does not have (%v)", k, v, svc.Labels)
				}
			}
			for _, s := range r.services { // only the metrics Service: no target scraped twice
				if s.Name != svc.Name && s.Labels["app.kubernetes.io/component"] == "metrics" {
					t.Errorf("service %s also matches the ServiceMonitor", s.Name)
				}
			}
			if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" || sm.Metadata.Labels["release"] != "kps" {
				t.Errorf("ServiceMonitor = %+v", sm)
			}
			if len(r.policies) != 1 {
				t.Fatalf("NetworkPolicies: %d", len(r.policies))
			}
			np := r.policies[0]
			open := func(rule networkingv1.NetworkPolicyIngressRule, port int32) bool {
				for _, p := range rule.Ports {
					if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
						continue
					}
					if p.Port == nil {
						return true
					}
					end := p.Port.IntVal
					if p.EndPort != nil {
						end = *p.EndPort
					}
					if p.Port.IntVal <= port && port <= end {
						return true
					}
				}
				return false
			}
			for _, port := range []int32{50051, 8080, 9191, 3000} {
				var fromAnyone, fromScraper bool
				for _, rule := range np.Spec.Ingress {
					if !open(rule, port) && !(port == 9191 && len(rule.Ports) == 1 && rule.Ports[0].Port.StrVal == "metrics") {
						continue
					}
					if len(rule.From) == 0 {
						fromAnyone = true
					} else if rule.From[0].NamespaceSelector.MatchLabels["team"] == "monitoring" {
						fromScraper = true
					}
				}
				if port == 9191 && (fromAnyone || !fromScraper) {
					t.Errorf("the metrics port: open to anyone %v, to the scraper %v", fromAnyone, fromScraper)
				}
				if port != 9191 && !fromAnyone {
					t.Errorf("port %d is no longer open", port)
				}
			}
		})
	}
}

// The configuration is mounted as a directory (no subPath), so that the kubelet updates it in place and the
// bridge reloads it (docs/kubernetes.md, "Configuration changes"); with configChange: reload only a change of
// a key that needs a restart changes the pods' checksum (rolls them), with roll every change does.
func TestConfigChangeRollsOrReloads(t *testing.T) {
	sum := func(set ...string) string {
		t.Helper()
		r := render(t, set...)
		if len(r.statefulSets) != 1 {
			t.Fatalf("%d StatefulSets", len(r.statefulSets))
		}
		pod := r.statefulSets[0].Spec.Template
		c := pod.Spec.Containers[0]
		if !slices.Contains(c.Args, "--config=/etc/mcp-bridge/config/bridge.yaml") {
			t.Errorf("args %v: want --config=/etc/mcp-bridge/config/bridge.yaml", c.Args)
		}
		for _, m := range c.VolumeMounts {
			if m.Name == "config" && (m.SubPath != "" || m.MountPath != "/etc/mcp-bridge/config") {
				t.Errorf("config mount %+v: want the directory /etc/mcp-bridge/config without subPath (a subPath is never updated)", m)
			}
		}
		return pod.Annotations["checksum/config"]
	}
	base := sum()
	if base == "" {
		t.Fatal("no checksum/config annotation")
	}
	if got := sum("config.mcpServers.extra.url=http://search:8080/mcp", "config.rateLimits.callsPerSecond=5"); got != base {
		t.Error("configChange=reload: a change of servers and rate limits rolls the pods; the bridge applies it live")
	}
	if got := sum("config.sessions.idleTimeout=1h"); got == base {
		t.Error("configChange=reload: a change that needs a restart (sessions.idleTimeout) does not roll the pods")
	}
	roll := sum("configChange=roll")
	if got := sum("configChange=roll", "config.mcpServers.extra.url=http://search:8080/mcp"); got == roll {
		t.Error("configChange=roll: a change of servers does not roll the pods")
	}
}
