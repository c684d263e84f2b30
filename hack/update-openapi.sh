#!/usr/bin/env bash
# Regenerates internal/apiserver/openapi/zz_generated.openapi.go: the OpenAPI
# schemas of every Go type Orca serves, taken from the k8s.io/api and
# k8s.io/apimachinery versions pinned in go.mod.
#
# openapi-gen is a `tool` dependency in go.mod, so `go tool` builds it at the
# pinned kube-openapi version and the output only changes when go.mod does.
#
# Usage: hack/update-openapi.sh [output-dir]
#   output-dir defaults to internal/apiserver/openapi; pass another directory
#   to generate elsewhere (the verify test compares against such a copy).
set -o errexit -o nounset -o pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

out_dir="${1:-internal/apiserver/openapi}"

# The packages whose types appear in the served documents: those of the
# served resources and every package their types reference. Add a package
# here when a resource of a new group is served; the check at the end names
# any referenced package that is missing.
packages=(
  k8s.io/api/core/v1
  k8s.io/api/admissionregistration/v1
  k8s.io/api/apps/v1
  k8s.io/api/authentication/v1
  k8s.io/api/authorization/v1
  k8s.io/api/autoscaling/v1
  k8s.io/api/autoscaling/v2
  k8s.io/api/batch/v1
  k8s.io/api/certificates/v1
  k8s.io/api/coordination/v1
  k8s.io/api/discovery/v1
  k8s.io/api/events/v1
  k8s.io/api/flowcontrol/v1
  k8s.io/api/networking/v1
  k8s.io/api/node/v1
  k8s.io/api/policy/v1
  k8s.io/api/rbac/v1
  k8s.io/api/resource/v1
  k8s.io/api/scheduling/v1
  k8s.io/api/scheduling/v1alpha3 # batch/v1 Jobs reference its pod-group types
  k8s.io/api/storage/v1
  k8s.io/api/storagemigration/v1
  k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1
  k8s.io/kube-aggregator/pkg/apis/apiregistration/v1
  k8s.io/metrics/pkg/apis/metrics/v1beta1
  k8s.io/apimachinery/pkg/apis/meta/v1
  k8s.io/apimachinery/pkg/runtime
  k8s.io/apimachinery/pkg/util/intstr
  k8s.io/apimachinery/pkg/api/resource
  k8s.io/apimachinery/pkg/version
)

header="$(mktemp)"
trap 'rm -f "${header}"' EXIT
printf '// Regenerate with hack/update-openapi.sh.\n' >"${header}"

# API rule violations are upstream's to fix (they keep an exception list for
# them), so the report is discarded rather than failing the run.
go tool openapi-gen \
  --go-header-file "${header}" \
  --output-dir "${out_dir}" \
  --output-pkg github.com/orca-project/orca/internal/apiserver/openapi \
  --output-file zz_generated.openapi.go \
  --report-filename /dev/null \
  "${packages[@]}"

# A type from a package missing above is referenced by its Go path instead of
# its model name, and the server would fail to build its documents.
missing="$(grep -o 'ref("k8s\.io/[^"]*")' "${out_dir}/zz_generated.openapi.go" | sort -u || true)"
if [[ -n "${missing}" ]]; then
  echo "update-openapi.sh: these types are referenced but their packages are not generated:" >&2
  echo "${missing}" >&2
  exit 1
fi
