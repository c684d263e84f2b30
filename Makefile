# Orca's build, test and benchmark entry points. `make up` brings up a
# single-node cluster; `make test` runs the whole test suite (what CI runs).

GO        ?= go
BIN       ?= bin/orca
# kubectl reads its own version from client-go and component-base; the
# flags set it (and Orca's own version) at link time.
LDFLAGS   ?= $(shell hack/ldflags.sh)
export LDFLAGS
# The kube-apiserver binary `make bench-upstream` compares with.
UPSTREAM  ?= _output/upstream/kube-apiserver

.PHONY: all build images up down killall conformance conformance-smoke gateway-conformance test test-unit test-integration fuzz bench bench-extensions bench-upstream bench-scheduler bench-pods bench-proxy bench-dns bench-workloads bench-snapshot bench-failover bench-ha-failover bench-ingress bench-netpol bench-storage bench-metrics bench-console scale vet clean

all: build

## build: compile bin/orca and bin/orca-pause (the pod sandbox program)
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/orca
	CGO_ENABLED=0 $(GO) build -ldflags "-s -w" -o $(dir $(BIN))orca-pause ./cmd/orca-pause

## images: write Orca's pause and busybox images to _output/images/{pause,busybox}.tar
images: build
	$(BIN) images build --output _output/images

## up: build, install what is missing, and start a single-node cluster
up: build
	hack/up.sh

## down: stop the cluster started by `make up` (its data stays)
down:
	hack/down.sh

## killall: stop the `make up` cluster and everything it runs (pods, containerd); PURGE=1 also removes its data
killall:
	hack/killall.sh $(if $(PURGE),--purge)

## conformance: upstream's [Conformance] tests on a fresh 3-node cluster (FOCUS=REGEXP for a subset); report in _output/conformance
conformance: build
	FOCUS='$(FOCUS)' hack/conformance.sh

## conformance-smoke: the conformance specs named in test/conformance/smoke.txt
conformance-smoke: build
	FOCUS_FILE=test/conformance/smoke.txt hack/conformance.sh

## gateway-conformance: the Gateway API's conformance suite (GATEWAY-HTTP) on a fresh one-node cluster (root;
## RUN_TEST=NAME for one test); report in _output/gateway-conformance
gateway-conformance: build
	RUN_TEST='$(RUN_TEST)' hack/gateway-conformance.sh

## test: the whole test suite, as CI runs it
test:
	hack/test.sh

## test-unit: fast tests only
test-unit:
	$(GO) test -short -ldflags "$(LDFLAGS)" ./internal/... ./cmd/...

## fuzz: fuzz the API server's create and patch paths for FUZZTIME (30000x: a count of
## inputs; Go 1.26's fuzzer can fail a duration's end with a spurious "context deadline exceeded")
fuzz:
	$(GO) test -ldflags "$(LDFLAGS)" -run '^$$' -fuzz FuzzCreate -fuzztime $${FUZZTIME:-30000x} ./internal/apiserver/fuzz/
	$(GO) test -ldflags "$(LDFLAGS)" -run '^$$' -fuzz FuzzPatch -fuzztime $${FUZZTIME:-30000x} ./internal/apiserver/fuzz/

## bench: run the benchmarks and print comparable figures (with UPSTREAM present, also against upstream kube-apiserver)
bench:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/apiserver $(if $(wildcard $(UPSTREAM)),-upstream $(UPSTREAM)) $(ARGS)
## bench-extensions: custom resource creates against ConfigMap creates, and the latency one validating webhook adds
bench-extensions:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/apiserver -extensions-only
## bench-upstream: ConfigMap creates on Orca's server against upstream kube-apiserver (UPSTREAM=PATH, built by
## hack/build-upstream-apiserver.sh) with its own etcd, same clients and load, alternating rounds (ARGS='-upstream-rounds N')
bench-upstream:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/apiserver -upstream-only -upstream $(UPSTREAM) $(ARGS)
## scale: upstream's scalability SLIs on orca server with 5,000 simulated nodes and 150,000 pods (not in CI;
## ARGS='-nodes N -pods M -rate PODS_PER_S'); report and profiles in _output/scale
scale: build
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/scale $(ARGS)
## bench-scheduler: scheduler benchmarks (ARGS='-run REGEXP' selects scenarios)
bench-scheduler:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/scheduler $(ARGS)
## bench-pods: pod start-up on one node with its own containerd (root; ARGS='-pods N')
bench-pods:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/podstartup $(ARGS)
## bench-proxy: service proxy rule sync in a private network namespace (root; ARGS='-services N -endpoints M')
bench-proxy:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/proxy $(ARGS)

## bench-dns: cluster DNS queries per second over UDP against a static miekg server (ARGS='-clients N')
bench-dns:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/dns $(ARGS)

## bench-workloads: Deployment reconcile and rolling update with a simulated kubelet, idle controller manager (ARGS='-replicas N -nodes M')
bench-workloads:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/workloads $(ARGS)

## bench-snapshot: etcd snapshot save, verify and restore of 100,000 keys, against etcdctl's snapshot save when installed (ARGS='-keys N -rounds M')
bench-snapshot:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/etcdsnapshot $(ARGS)
## bench-failover: time from a node's agent dying to its pod running Ready elsewhere, with upstream's node
## lifecycle settings (tolerationSeconds 0, and the default 300 s); a three-node cluster of the end-to-end harness
bench-failover:
	ORCA_BENCH_FAILOVER=1 $(GO) test -ldflags "$(LDFLAGS)" -count=1 -timeout 40m -run 'TestFailoverTimes' -v ./test/e2e/ 2>&1 | grep -E 'agent killed|^(--- |ok|FAIL)'

## bench-ha-failover: time from the etcd leader's server dying to the first write acknowledged through
## another server, p50/p99 over 10 kills, next to writes straight to a surviving etcd member in the same run
bench-ha-failover:
	ORCA_BENCH_HA_FAILOVER=1 $(GO) test -ldflags "$(LDFLAGS)" -count=1 -timeout 40m -run 'TestWriteFailoverTimes' -v ./test/e2e/ 2>&1 | grep -E 'round|write failover|^(--- |ok|FAIL)'

## bench-ingress: requests per second and latency through a node's ingress next to straight to the pod, and the time
## from an Ingress change to traffic following it; a one-node cluster of the end-to-end harness (root)
bench-ingress:
	ORCA_BENCH_INGRESS=1 $(GO) test -ldflags "$(LDFLAGS)" -count=1 -timeout 20m -run 'TestIngressThroughput' -v ./test/e2e/ 2>&1 | grep -E '^(\||Ingress|--- |ok|FAIL)'

## bench-storage: time from claim and pod creation to the pod Running with its local-path volume, 100 at once,
## next to the same pods with an emptyDir in the same run; a one-node cluster of the end-to-end harness (root)
bench-storage:
	ORCA_BENCH_STORAGE=1 $(GO) test -ldflags "$(LDFLAGS)" -count=1 -timeout 40m -run 'TestVolumeStartupTimes' -v ./test/e2e/ 2>&1 | grep -E '^ *(storage_bench_test.go:[0-9]+: )?(\||Storage)|^(--- |ok|FAIL)'

## bench-metrics: the agent's CPU and RSS with 100 pods while /stats/summary is scraped every 15 s, next to
## the same agent with nobody asking, in the same run; a one-node cluster of the end-to-end harness (root)
bench-metrics:
	ORCA_BENCH_METRICS=1 $(GO) test -ldflags "$(LDFLAGS)" -count=1 -timeout 30m -run 'TestMetricsOverhead' -v ./test/e2e/ 2>&1 | grep -E '^ *(metrics_bench_test.go:[0-9]+: )?(\||Metrics)|^(--- |ok|FAIL)'

## bench-netpol: network policy rule sync for 1,000 policies over 5,000 pods in a private network namespace,
## against nft -f of the same rules (root; ARGS='-pods N -policies M')
bench-netpol:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/netpol $(ARGS)

## bench-console: the web console in headless Chromium (Debian's chromium): time from a pod's status write to the
## pods view showing it (p50/p99 over 100 changes), and first paint, first rows and JS heap with 10,000 pods in the
## namespace; an in-process control plane with no node (ARGS='-changes N -pods M')
bench-console:
	$(GO) run -ldflags "$(LDFLAGS)" ./bench/console $(ARGS)

vet:
	$(GO) vet ./...

clean:
	rm -rf bin

include hack/openapi.mk
