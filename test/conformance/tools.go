//go:build tools

// Package conformance pins the programs `make conformance` builds from this
// module besides the e2e suite: the ginkgo CLI for parallel runs and the
// suite's own test images' programs (agnhost, nonewprivs, the busybox
// hostname helper) and the sample API server of the aggregator spec; etcd,
// that spec's other image, is built from images/etcd.
package conformance

import (
	_ "github.com/onsi/ginkgo/v2/ginkgo"
	_ "k8s.io/kubernetes/test/images/agnhost"
	_ "k8s.io/kubernetes/test/images/nonewprivs"
	_ "k8s.io/sample-apiserver"
)
