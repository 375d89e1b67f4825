# mcp-bridge — every target a newcomer needs. `make run` and `make test` are the two that matter.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

ROOT       := $(abspath .)
TOOLS      := $(ROOT)/.tools
TOOLS_BIN  := $(TOOLS)/bin
NODE_DIR   := $(TOOLS)/node
BIN        := $(ROOT)/bin/mcp-bridge
export PATH := $(TOOLS_BIN):$(NODE_DIR)/node_modules/.bin:$(PATH)

# Pinned code generators, installed from the Go module proxy into .tools/bin.
PROTOC_GEN_GO_VERSION       := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION  := v1.6.2
GRPC_GATEWAY_VERSION        := v2.32.0
# Helm for `make test-helm`, from the Go module proxy.
HELM_VERSION                := v3.19.5
HELM                        := $(TOOLS_BIN)/helm
HELM_CHART                  := deploy/helm/mcp-bridge
# grpcurl for the README's gRPC examples (`make grpcurl`), from the Go module proxy.
GRPCURL_VERSION             := v1.9.4
# Pinned linter (.golangci.yml), installed from the Go module proxy into .tools/bin by `make lint`.
GOLANGCI_LINT_VERSION       := v2.15.0
GOLANGCI_LINT               := $(TOOLS)/.golangci-lint-$(GOLANGCI_LINT_VERSION)

GO_PACKAGES := ./...
# e2e/ builds and runs the real binary; `make test-e2e` runs it on its own.
GO_UNIT_PACKAGES := $$(go list ./... | grep -v /e2e)

.PHONY: bench-compare build run test test-go test-e2e test-fault test-python test-python-frameworks test-java test-java-frameworks conformance lint generate check-generate \
        tools node-tools python-peer redis-peer bench clean fmt check-third-party test-scale test-helm helm image test-image \
        help test-unit fuzz test-console grpcurl test-list-rss

help: ## List the targets.
	@awk -F':.*## ' '/^[a-zA-Z0-9_-]+:.*## / { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## Build bin/mcp-bridge.
	go build -o $(BIN) ./cmd/mcp-bridge

# STATE is the state file `make run` keeps sessions in, so that they survive a restart; STATE= keeps them in
# memory.
STATE ?= $(ROOT)/.run/state.db

run: build ## Serve gRPC on 127.0.0.1:50051 and REST on 127.0.0.1:8080 in front of the demo server; state in .run/.
	$(BIN) $(if $(STATE),--state-file $(STATE)) $(ARGS)

tools: $(TOOLS)/.go-tools-$(PROTOC_GEN_GO_VERSION)-$(PROTOC_GEN_GO_GRPC_VERSION)-$(GRPC_GATEWAY_VERSION) node-tools ## Pinned code generators (Go module proxy) and node-tools.

$(TOOLS)/.go-tools-%:
	mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(TOOLS_BIN) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	GOBIN=$(TOOLS_BIN) go install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(GRPC_GATEWAY_VERSION)
	GOBIN=$(TOOLS_BIN) go install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@$(GRPC_GATEWAY_VERSION)
	touch $@

node-tools: $(NODE_DIR)/.installed ## buf, googleapis protos, MCP conformance suite and reference servers (npm, pinned).

$(NODE_DIR)/.installed: tools/package.json tools/package-lock.json
	mkdir -p $(NODE_DIR)
	cp tools/package.json tools/package-lock.json $(NODE_DIR)/
	cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

redis-peer: ## Debian's redis-server (installed when missing) for the Redis state engine's tests.
	scripts/install-redis.sh

python-peer: ## A venv with the official MCP Python SDK (pinned) for the Python peer server in tests.
	tools/python-peer/install.sh >/dev/null

generate: tools ## Regenerate gen/ from proto/ (buf, local plugins, no network registry).
	scripts/generate.sh

check-generate: tools ## Regenerate and fail if gen/ differs from what is committed.
	scripts/check-generate.sh

$(GOLANGCI_LINT):
	mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	touch $@

lint: tools $(GOLANGCI_LINT) ## buf lint + buf format check + go vet + golangci-lint (.golangci.yml) + ruff (Python client).
	buf lint
	buf format --diff --exit-code
	go vet $(GO_PACKAGES)
	golangci-lint run ./...
	cd clients/python && "$$($(ROOT)/scripts/pyclient-venv.sh)" -m ruff check --no-cache .
	go vet -tags benchdebug ./cmd/mcp-bridge
	cd bench && go vet ./...

check-third-party: ## third_party/go-sdk is exactly upstream v1.8.0 plus third_party/patches, and its tests pass.
	scripts/check-third-party.sh

test: export MCPBRIDGE_REQUIRE_PEERS := 1
test: tools lint check-generate check-third-party test-go test-e2e test-python test-python-frameworks test-java conformance test-scale test-helm ## Everything CI runs.

test-unit: ## Start here: Go unit tests only — offline, no peers, no binary, seconds (-short).
	go test -short -count=1 $(GO_UNIT_PACKAGES)

fuzz: ## Each Go fuzz target for FUZZTIME (default 10s); failures land in testdata/fuzz.
	scripts/fuzz.sh

test-go: node-tools python-peer redis-peer ## Go unit and integration tests with the race detector.
	go test -race -count=1 $(GO_UNIT_PACKAGES)

test-e2e: build node-tools redis-peer ## End-to-end tests against the real binary and real MCP servers (and the console in headless Chromium); then the kept results' and the huge lists' RSS bounds on a build without the race detector.
	scripts/install-chromium.sh >/dev/null
	scripts/test-e2e.sh
	scripts/test-kept-rss.sh
	$(LIST_RSS_TEST)

# The huge lists' RSS bound against bin/mcp-bridge, which build makes without the race detector (whose shadow
# memory it would measure): four concurrent 100,000-tool ListTools, peak RSS under 4x the list's size each.
LIST_RSS_TEST = MCPBRIDGE_BIN=$(BIN) go test -count=1 -timeout 20m -run 'TestHostileHugeToolList' -v ./e2e/

test-list-rss: build ## Four concurrent 100,000-tool ListTools against a build without the race detector: peak RSS under 4x the list's size each (issue 31, ADRs 0097, 0107; part of test-e2e).
	$(LIST_RSS_TEST)

test-console: build ## The operator console's browser tests alone (Debian's chromium, installed when missing); screenshots in e2e/screenshots.
	scripts/install-chromium.sh >/dev/null
	GO_TEST_ARGS='-run TestConsole -v' scripts/test-e2e.sh

test-fault: build node-tools ## The fault suite alone (part of test-e2e): restarts, crashes, deadlines, shutdown, bad frames, leaks.
	GO_TEST_ARGS='-run TestFault|TestStatus' scripts/test-e2e.sh

test-scale: build redis-peer ## Three replicas behind HAProxy and a shared redis-server (installed from Debian when missing): routing, takeover, rolling restart, kill -9, SIGSTOP, Redis down.
	MCPBRIDGE_BIN=$(BIN) scripts/test-scale.sh

$(TOOLS)/.helm-$(HELM_VERSION):
	mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	touch $@

helm: $(TOOLS)/.helm-$(HELM_VERSION) ## Install helm into .tools/bin (Go module proxy).

$(TOOLS)/.grpcurl-$(GRPCURL_VERSION):
	mkdir -p $(TOOLS_BIN)
	GOBIN=$(TOOLS_BIN) go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)
	touch $@

grpcurl: $(TOOLS)/.grpcurl-$(GRPCURL_VERSION) ## Install grpcurl into .tools/bin (Go module proxy) for the README's gRPC examples.

test-helm: helm ## helm lint and template of deploy/helm/mcp-bridge, manifests checked offline against k8s.io/api types.
	$(HELM) lint $(HELM_CHART) --kube-version 1.31.0
	$(HELM) lint $(HELM_CHART) --kube-version 1.31.0 --set mode=sidecar
	$(HELM) template t $(HELM_CHART) --kube-version 1.31.0 --set replicas=3 >/dev/null
	$(HELM) lint $(HELM_CHART) --kube-version 1.31.0 --set replicas=3 --set sharedState.redis.address=redis:6379 --set sharedState.redis.existingSecret=bridge-state
	$(HELM) template t $(HELM_CHART) --kube-version 1.31.0 --set mode=sidecar >/dev/null
	cd deploy/helm/check && HELM=$(HELM) go test -count=1 ./...

image: ## The container image mcp-bridge:dev on scratch (static binary, CA certs, uid 65532) with podman; no Docker engine, no pulls.
	scripts/build-image.sh

test-image: image ## Run the image with podman: non-root, /healthz, /readyz, a demo session, clean exit on SIGTERM.
	scripts/test-image.sh

test-python: build node-tools ## Python client tests against the real binary.
	scripts/test-python.sh

test-python-frameworks: build ## The Python framework adapters (LangGraph, OpenAI Agents SDK, PydanticAI, Toolbox) in their own venv, against the real binary.
	scripts/test-python-frameworks.sh

test-java: build node-tools ## Java client tests against the real binary (then the framework adapters').
	scripts/test-java.sh

test-java-frameworks: build ## Java Spring AI and LangChain4j adapters' tests against the real binary.
	scripts/test-java-frameworks.sh

conformance: node-tools ## The official MCP conformance suite, client side, both requirement sets, mcpcore and the whole bridge.
	scripts/conformance.sh

bench: build node-tools ## Benchmarks; rewrites BENCHMARKS.md and bench/results.json.
	scripts/bench.sh

bench-compare: ## The tree's bridge against BASE=<git revision>, in turns in one run (ROUNDS=3, BENCH_STEPS="S1 ").
	scripts/bench-compare.sh

fmt: ## gofmt and buf format, in place.
	gofmt -w $$(git ls-files '*.go' | grep -v '^gen/')
	buf format -w

clean: ## Remove bin/ and .tools/.
	rm -rf bin .tools
