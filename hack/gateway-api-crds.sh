#!/usr/bin/env bash
# Copies the Gateway API's standard-channel CRD manifests of the version
# go.mod requires into internal/ingress/gateway/crds, which the server
# embeds and installs at start-up. Run it after changing that version.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(go list -m -f '{{.Version}}' sigs.k8s.io/gateway-api)
dir=$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)
dst=internal/ingress/gateway/crds
rm -f "$dst"/*.yaml
for f in "$dir"/config/crd/standard/gateway.networking.k8s.io_*.yaml; do
	case "$f" in *vap_safeupgrades*) continue ;; esac
	cp "$f" "$dst/"
	chmod 644 "$dst/$(basename "$f")"
done
echo "Gateway API $version: $(ls "$dst"/*.yaml | wc -l) CRDs in $dst"
