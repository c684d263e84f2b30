// Package conformance runs the Gateway API's own conformance suite
// (sigs.k8s.io/gateway-api/conformance, a module of its own, at the
// release whose CRDs Orca installs) against a running Orca cluster: the
// kubeconfig in $KUBECONFIG, the flags of the suite's command line
// (hack/gateway-conformance.sh passes the GatewayClass, the profile and
// the features Orca supports, and where the report goes).
package conformance

import (
	"testing"

	"sigs.k8s.io/gateway-api/conformance"
)

func TestGatewayAPIConformance(t *testing.T) {
	conformance.RunConformance(t)
}
