package coordination

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// leaseTable prints leases as upstream's `kubectl get` does.
var leaseTable *registry.Table

// leaseFields lists the fields a field selector over leases may name.
var leaseFields func(runtime.Object) fields.Set
