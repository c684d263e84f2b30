//go:build tools

package conformance

// The suite's backend, built from the same release by
// hack/gateway-conformance.sh into the image its manifests name.
import _ "sigs.k8s.io/gateway-api/conformance/echo-basic"
