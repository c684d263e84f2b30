#!/usr/bin/env bash
# Runs the Gateway API's conformance suite (sigs.k8s.io/gateway-api/conformance,
# at the release whose CRDs Orca installs; test/gateway-conformance) against
# a fresh one-node Orca cluster: the GATEWAY-HTTP profile, core tests and
# the extended ones of the features the GatewayClass orca lists. The suite's
# backend (echo-basic) is built from the same release into the images its
# manifests name, and a stand-in (test/gateway-conformance/dns-standin) takes
# the place of the CoreDNS its UDPRoute tests use; nothing is pulled. The log, the suite's report and
# summary.md go to _output/gateway-conformance/. Root only; the machine's
# `make up` cluster must be stopped, and the e2e tests must not run at the
# same time (they share the host's networking).
#
#   RUN_TEST=NAME hack/gateway-conformance.sh   one test of the suite
#   KEEP=1                                      leave the cluster running
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "the Gateway API conformance run needs root (containers, networking)" >&2; exit 1; }
export PATH=$PATH:/usr/local/go/bin
root=$PWD
out=$root/_output/gateway-conformance
bin=$out/bin
data=${ORCA_GATEWAY_CONFORMANCE_DATA:-/var/lib/orca-gateway-conformance}

. hack/one-cluster.sh
hack/install-deps.sh

mkdir -p "$bin" "$out/images"
make build
(
	cd test/gateway-conformance
	go test -c -o "$bin/gateway-conformance.test" .
	CGO_ENABLED=0 go build -ldflags "-s -w" -o "$bin/echo-basic" sigs.k8s.io/gateway-api/conformance/echo-basic
	CGO_ENABLED=0 go build -ldflags "-s -w" -o "$bin/dns-standin" ./dns-standin
	go list -m -f '{{.Version}}' sigs.k8s.io/gateway-api/conformance >"$bin/suite-version"
)
# Every tag of echo-basic the suite's manifests name, all the same program.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
install -D -m 0755 "$bin/echo-basic" "$work/echo/echo-basic"
suite=$(go env GOMODCACHE)/sigs.k8s.io/gateway-api/conformance@$(cat "$bin/suite-version")
rm -f "$out"/images/*.tar
for tag in $(grep -rhoE 'registry.k8s.io/gateway-api/echo-basic:[^ "]+' "$suite"/base "$suite"/tests | sort -u); do
	bin/orca images pack "$work/echo" --tag "$tag" --entrypoint /echo-basic --output "$out/images/${tag##*:}.tar" >/dev/null
done
# The UDPRoute tests' CoreDNS backend is in the base manifests, which must
# all come up before any test runs; a stand-in takes its place.
install -D -m 0755 "$bin/dns-standin" "$work/dns/coredns"
for tag in $(grep -rhoE 'registry.k8s.io/coredns/coredns:[^ "]+' "$suite"/base | sort -u); do
	bin/orca images pack "$work/dns" --tag "$tag" --entrypoint /coredns --output "$out/images/coredns-${tag##*:}.tar" >/dev/null
done

stop_cluster() { hack/killall.sh "$data" >/dev/null 2>&1 || true; }
stop_cluster
rm -rf "$data"
[ -n "${KEEP:-}" ] || trap 'stop_cluster; rm -rf "$work"' EXIT
ORCA_DATA_DIR=$data ORCA_SERVER_FLAGS="--eviction-hard nodefs.available<1Gi" hack/up.sh
kubectl() { bin/orca kubectl --kubeconfig "$data/kubeconfig" "$@"; }
kubectl wait --for=condition=Ready node --all --timeout=120s
bin/orca images import --data-dir "$data" "$out"/images/*.tar >/dev/null
kubectl wait --for=condition=Accepted gatewayclass/orca --timeout=120s

flags=(-test.v -test.timeout=90m -gateway-class=orca -conformance-profiles=GATEWAY-HTTP
	-report-output="$out/report.yaml" -organization=orca-project -project=orca
	-url=https://github.com/orca-project/orca -version="$(bin/orca version | head -1 | awk '{print $2}')"
	-contact=maintainers -cleanup-base-resources=false)
[ -n "${RUN_TEST:-}" ] && flags+=(-run-test="$RUN_TEST")
start=$(date +%s)
status=0
KUBECONFIG=$data/kubeconfig "$bin/gateway-conformance.test" "${flags[@]}" >"$out/conformance.log" 2>&1 || status=$?
end=$(date +%s)

# The suite's tests (the subtests of the one Go test), one line each.
{
	echo "# Gateway API conformance ($(cat "$bin/suite-version"), GATEWAY-HTTP), $(((end - start + 59) / 60)) minutes"
	echo
	for r in PASS FAIL SKIP; do
		echo "$r: $(grep -cE "^    --- $r: TestGatewayAPIConformance/" "$out/conformance.log" || true)"
	done
	echo
	echo "Failed:"
	grep -E "^    --- FAIL: TestGatewayAPIConformance/" "$out/conformance.log" | sed -E 's/^ *--- FAIL: TestGatewayAPIConformance\//- /; s/ \(.*//' || true
	echo
	echo "Failed subtests:"
	grep -E "^        +--- FAIL: TestGatewayAPIConformance/" "$out/conformance.log" | sed -E 's/^ *--- FAIL: TestGatewayAPIConformance\//- /; s/ \(.*//' || true
} >"$out/summary.md"
cat "$out/summary.md"
exit $status
