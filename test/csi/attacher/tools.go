//go:build tools

// Package tools pins upstream's external-attacher, which the end-to-end
// tests build and run beside the test CSI driver.
package tools

import _ "github.com/kubernetes-csi/external-attacher/v4/cmd/csi-attacher"
