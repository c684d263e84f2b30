#!/usr/bin/env bash
# The whole test suite: vet, unit and integration tests (real embedded etcd,
# real kubectl), a short fuzzing run of the API server, then a smoke subset
# of upstream's conformance tests. It installs what a fresh machine lacks
# before it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh

GO=${GO:-go}
LDFLAGS=${LDFLAGS:-$(hack/ldflags.sh)}
export LDFLAGS

echo "== go vet"
$GO vet ./...
echo "== unit and integration tests"
$GO test -ldflags "$LDFLAGS" -timeout 40m ./...
echo "== conformance harness (its own module; the suite itself runs in make conformance)"
(cd test/conformance && $GO vet ./summary/... && $GO test ./summary/...)
echo "== fuzz (short)"
# A count of inputs, not a duration: Go 1.26 can end a timed fuzzing run
# with a spurious "context deadline exceeded" (golang/go#75804).
FUZZTIME=${FUZZTIME:-15000x} make -s fuzz
# Upstream's own tests of the behaviours users rely on most: the specs in
# test/conformance/smoke.txt against a fresh three-node cluster. Like the
# end-to-end tests, they need root for containers and network namespaces.
if [ "$(id -u)" -eq 0 ]; then
	echo "== conformance smoke (test/conformance/smoke.txt)"
	make -s conformance-smoke
else
	echo "== conformance smoke skipped: needs root (run make conformance-smoke as root)"
fi
