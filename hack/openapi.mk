# OpenAPI generation; included by the top-level Makefile.

.PHONY: generate-openapi verify-openapi

## generate-openapi: regenerate internal/apiserver/openapi/zz_generated.openapi.go
generate-openapi:
	hack/update-openapi.sh

## verify-openapi: fail if the committed generated OpenAPI code is stale
verify-openapi:
	@tmp="$$(mktemp -d)" && trap 'rm -rf "$$tmp"' EXIT && \
	hack/update-openapi.sh "$$tmp" && \
	diff -u internal/apiserver/openapi/zz_generated.openapi.go "$$tmp/zz_generated.openapi.go" && \
	echo "zz_generated.openapi.go is up to date"
