#!/usr/bin/env bash
# The whole test suite: vet, unit and integration tests (real embedded etcd,
# real kubectl, and as root the end-to-end tests on real containers, the web
# console's in Chromium), the console's script tests, a short fuzzing run of
# the API server, and on request a smoke subset of upstream's conformance
# tests. It installs what a fresh machine lacks before it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh --tests

GO=${GO:-go}
LDFLAGS=${LDFLAGS:-$(hack/ldflags.sh)}
export LDFLAGS

echo "== go vet"
$GO vet ./...
echo "== unit and integration tests"
# The output is kept, and on failure its failures are repeated as the last
# lines, so that a reader of only the end of the log (a goroutine dump from
# a timeout is thousands of lines) still learns which tests failed or hung.
# The end-to-end package alone runs for about 28 minutes on a 2-core
# machine; the timeout leaves it room on a slower one.
mkdir -p _output
log=_output/test.log
if ! $GO test -ldflags "$LDFLAGS" -timeout 60m ./... 2>&1 | tee "$log"; then
	echo "== failures (all of them in $log)"
	awk '
		/^panic: test timed out/ { print; running = 1; next }
		running && /^running tests:/ { print; next }
		running && /^\t/ { print; next }
		running { running = 0 }
		/^[[:space:]]*--- FAIL/ || /^FAIL[[:space:]]/ || /^panic:/ { print }
	' "$log" | head -60
	exit 1
fi
echo "== the web console's scripts"
node --test internal/console/web/
echo "== conformance harness (its own module; the suite itself runs in make conformance)"
(cd test/conformance && $GO vet ./summary/... && $GO test ./summary/...)
(cd test/gateway-conformance && $GO vet ./dns-standin/ && $GO test ./dns-standin/)
echo "== fuzz (short)"
# A count of inputs, not a duration: Go 1.26 can end a timed fuzzing run
# with a spurious "context deadline exceeded" (golang/go#75804).
FUZZTIME=${FUZZTIME:-15000x} make -s fuzz
# Upstream's own tests of the behaviours users rely on most: the specs in
# test/conformance/smoke.txt against a fresh three-node cluster. Building
# upstream's test binary alone takes longer than the rest of the suite on a
# small machine, so it runs when asked (CONFORMANCE_SMOKE=1), and before an
# issue touching what it covers is resolved; make conformance-smoke runs it
# alone. Like the end-to-end tests, it needs root.
if [ "${CONFORMANCE_SMOKE:-0}" = 1 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "conformance smoke needs root" >&2
		exit 1
	fi
	echo "== conformance smoke (test/conformance/smoke.txt)"
	make -s conformance-smoke
fi
