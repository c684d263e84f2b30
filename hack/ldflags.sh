#!/usr/bin/env bash
# Prints the -ldflags every build and test uses. kubectl reads its own
# version from client-go and component-base; without these it reports
# v0.0.0 and `kubectl version` fails.
set -euo pipefail
cd "$(dirname "$0")/.."
kube=v1.37.2
major=1
minor=37
orca=$(git describe --tags --always 2>/dev/null || echo v0.1.0-dev)
commit=$(git rev-parse HEAD 2>/dev/null || true)
date=$(git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo 1970-01-01T00:00:00Z)
v=github.com/orca-project/orca/internal/version
flags="-X $v.Orca=$orca -X $v.GitCommit=$commit -X $v.BuildDate=$date"
for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
	flags+=" -X $p.gitVersion=$kube -X $p.gitMajor=$major -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
echo "$flags"
