#!/usr/bin/env bash
# Runs upstream's [Conformance] tests against a fresh Orca cluster: one
# server (with its own node) and two extra nodes in network namespaces.
# Builds the e2e suite at the Kubernetes version Orca reports and the
# suite's images from local sources (test/conformance), runs the parallel
# specs with ginkgo, then the [Serial] ones alone, and writes the JUnit
# reports, the logs and summary.md to _output/conformance/. Root only; the
# machine's `make up` cluster must be stopped (both use the same host
# networking), and the e2e tests must not run at the same time.
#
#   hack/conformance.sh                 every [Conformance] spec
#   FOCUS=REGEXP hack/conformance.sh    only specs whose text matches
#   FOCUS_FILE=FILE                     only the specs FILE names, a text per line
#   PROCS=N                             ginkgo processes for the parallel pass (12)
#   SKIP_BUILD=1                        reuse the binaries and images built before
#   KEEP=1                              leave the cluster running afterwards
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "conformance needs root (containers, network namespaces)" >&2; exit 1; }
export PATH=$PATH:/usr/local/go/bin
root=$PWD
out=$root/_output/conformance
bin=$out/bin
data=${ORCA_CONFORMANCE_DATA:-/var/lib/orca-conformance}
procs=${PROCS:-12}
focus=${FOCUS:-}
if [ -n "${FOCUS_FILE:-}" ]; then
	# Each line is literal text: escape what a regular expression reads.
	focus=$(grep -v '^#' "$FOCUS_FILE" | grep . | sed 's/[][\.*^$()+?{}|]/\\&/g' | paste -sd'|')
fi
nodes=(worker-1 worker-2)

. hack/one-cluster.sh

hack/install-deps.sh
# What the suite's images carry besides upstream's programs, and what
# builds them.
need=()
for p in curl:curl dig:bind9-dnsutils socat:socat ss:iproute2 iperf:iperf nc.openbsd:netcat-openbsd \
	gcc:gcc make:make bzip2:bzip2; do
	command -v "${p%%:*}" >/dev/null || need+=("${p#*:}")
done
# busybox is built statically from its source (test/conformance/images/busybox.sh).
dpkg -s libc6-dev >/dev/null 2>&1 || need+=(libc6-dev)
if ((${#need[@]})); then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

mkdir -p "$bin"
if [ -z "${SKIP_BUILD:-}" ] || [ ! -x "$bin/e2e.test" ]; then
	make build
	echo "building upstream's e2e suite, ginkgo and the test programs (test/conformance)"
	(
		cd test/conformance
		v=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
		minor=${v#v1.}
		minor=${minor%%.*}
		go test -c -o "$bin/e2e.test" -ldflags "-X k8s.io/component-base/version.gitVersion=$v \
			-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" ./e2e
		go build -o "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo
		CGO_ENABLED=0 go build -ldflags "-s -w" -o "$bin/agnhost" k8s.io/kubernetes/test/images/agnhost
		CGO_ENABLED=0 go build -o "$bin/nnp" k8s.io/kubernetes/test/images/nonewprivs
		go build -o "$bin/summary" ./summary/cmd
		go build -o "$bin/registry" ./registry/cmd
	)
	test/conformance/images/build.sh "$bin" "$out/images"
fi

registry_pid=
stop_cluster() {
	[ -n "$registry_pid" ] && kill "$registry_pid" 2>/dev/null || true
	rm -f "$data/registry.pid"
	for n in "${nodes[@]}"; do ORCA_DATA_DIR=$data hack/node.sh del "$n" >/dev/null 2>&1 || true; done
	hack/killall.sh "$data" >/dev/null 2>&1 || true
	# The server's node lives in this network namespace: its bridge,
	# orca-svc, nftables tables and routes go too (hack/killall.sh leaves
	# the network to the nodes' namespaces).
	[ -d "$data" ] && bin/orca killall --data-dir "$data" >/dev/null 2>&1 || true
}
stop_cluster
rm -rf "$data"
[ -n "${KEEP:-}" ] || trap stop_cluster EXIT

# The server's own node sits on the nodes' bridge, so that the extra nodes
# route to its pods through it.
hostip=$(hack/node.sh bridge)
# Specs that set imagePullPolicy Always pull for real: every node's
# containerd asks a registry on this machine, serving the images built
# above, in place of registry.k8s.io.
mkdir -p "$data/registries/registry.k8s.io"
cat >"$data/registries/registry.k8s.io/hosts.toml" <<TOML
server = "https://registry.k8s.io"

[host."http://$hostip:5000"]
  capabilities = ["pull", "resolve"]
TOML
"$bin/registry" --listen "$hostip:5000" "$out"/images/*.tar >"$out/registry.log" 2>&1 &
registry_pid=$!
# With KEEP=1 it outlives this script (holding the test lock, as the
# cluster does); hack/killall.sh stops it with the rest.
echo "$registry_pid" >"$data/registry.pid"
# A build machine's disk is mostly build caches: upstream's 10% free
# threshold would put every node under disk pressure, tainted, and fail
# the suite for reasons of the machine, not of the cluster.
eviction="--eviction-hard nodefs.available<1Gi"
ORCA_DATA_DIR=$data ORCA_SERVER_FLAGS="--node-ip $hostip --advertise-address $hostip --allow-privileged --registry-config-dir $data/registries $eviction" hack/up.sh
# Privileged pods on every node, as upstream's kubelet allows them: the
# suite places some (a Job's hostPath writers) on a random node.
for n in "${nodes[@]}"; do
	ORCA_DATA_DIR=$data ORCA_AGENT_FLAGS="--allow-privileged --registry-config-dir $data/registries $eviction" hack/node.sh add "$n"
done
kubectl() { bin/orca kubectl --kubeconfig "$data/kubeconfig" "$@"; }
kubectl wait --for=condition=Ready node --all --timeout=120s

echo "importing the suite's images into every node"
bin/orca images import --data-dir "$data" "$out"/images/*.tar >/dev/null
for n in "${nodes[@]}"; do bin/orca images import --data-dir "$data/nodes/$n" "$out"/images/*.tar >/dev/null; done

rm -rf "$out/report" && mkdir -p "$out/report"
e2e_flags=(--kubeconfig="$data/kubeconfig" --provider=skeleton --report-dir="$out/report"
	--e2e-output-dir="$out/report" --disable-log-dump --dump-logs-on-failure=false
	--non-blocking-taints=node-role.kubernetes.io/control-plane)
ginkgo_flags=(--no-color --timeout=6h --output-interceptor-mode=none --silence-skips)
[ -n "$focus" ] && ginkgo_flags+=(--focus="$focus")
status=0
start=$(date +%s)
echo "parallel pass: $procs processes"
"$bin/ginkgo" "${ginkgo_flags[@]}" --procs="$procs" --label-filter='Conformance && !Serial && !Disruptive' \
	"$bin/e2e.test" -- "${e2e_flags[@]}" --report-prefix=parallel_ >"$out/parallel.log" 2>&1 || status=1
echo "serial pass"
"$bin/ginkgo" "${ginkgo_flags[@]}" --label-filter='Conformance && (Serial || Disruptive)' \
	"$bin/e2e.test" -- "${e2e_flags[@]}" --report-prefix=serial_ >"$out/serial.log" 2>&1 || status=1
end=$(date +%s)

"$bin/e2e.test" --list-conformance-tests >"$out/conformance-tests.yaml" 2>/dev/null || true
"$bin/summary" --version "$("$bin/e2e.test" --version 2>/dev/null)" --minutes $(((end - start + 59) / 60)) \
	--all "$out/conformance-tests.yaml" --focus "$focus" \
	"$out"/report/junit_*.xml >"$out/summary.md"
cat "$out/summary.md"
exit $status
