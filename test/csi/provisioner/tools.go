//go:build tools

// Package tools pins upstream's external-provisioner, which the
// end-to-end tests build and run beside the test CSI driver. It is a
// module of its own so that the sidecar's dependencies never move the
// product's.
package tools

import _ "github.com/kubernetes-csi/external-provisioner/v5/cmd/csi-provisioner"
