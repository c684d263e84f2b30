#!/usr/bin/env bash
# Builds upstream's kube-apiserver, which `make bench-upstream` compares
# Orca's API server with. The Kubernetes source is not fetched here: check
# out kubernetes/kubernetes at the release tag Orca reports (hack/ldflags.sh)
# first, for example
#
#   git clone --branch v1.37.2 --depth 1 https://github.com/kubernetes/kubernetes SRC
#   hack/build-upstream-apiserver.sh SRC
#
#   $1  the Kubernetes source tree (its vendor/ directory or go.work is used as is)
#   $2  the binary to write (_output/upstream/kube-apiserver)
#   KUBE_VERSION=vX.Y.Z  the version the binary reports, for a tree that is
#                        not a git checkout at a tag
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
[ $# -ge 1 ] || { echo "usage: $0 KUBERNETES_SOURCE [OUTPUT]" >&2; exit 2; }
src=$(cd "$1" && pwd)
out=${2:-_output/upstream/kube-apiserver}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")

# The version upstream's own build stamps in (hack/lib/version.sh there).
version=${KUBE_VERSION:-$(git -C "$src" describe --tags --exact-match 2>/dev/null || true)}
commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || true)
ldflags="-s -w"
if [[ $version =~ ^v([0-9]+)\.([0-9]+)\. ]]; then
	v=k8s.io/component-base/version
	ldflags+=" -X $v.gitVersion=$version -X $v.gitMajor=${BASH_REMATCH[1]} -X $v.gitMinor=${BASH_REMATCH[2]} -X $v.gitTreeState=clean"
	[ -z "$commit" ] || ldflags+=" -X $v.gitCommit=$commit"
fi

cd "$src"
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out" ./cmd/kube-apiserver
echo "$out: $("$out" --version)${commit:+ ($commit)}"
