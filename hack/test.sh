#!/usr/bin/env bash
# The whole test suite: vet, unit and integration tests (real embedded etcd,
# real kubectl), then a short fuzzing run of the API server. It installs
# what a fresh machine lacks before it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh

GO=${GO:-go}
LDFLAGS=${LDFLAGS:-$(hack/ldflags.sh)}
export LDFLAGS

echo "== go vet"
$GO vet ./...
echo "== unit and integration tests"
$GO test -ldflags "$LDFLAGS" -timeout 20m ./...
echo "== conformance harness (its own module; the suite itself runs in make conformance)"
(cd test/conformance && $GO vet ./summary/... && $GO test ./summary/...)
echo "== fuzz (short)"
FUZZTIME=${FUZZTIME:-20s} make -s fuzz
