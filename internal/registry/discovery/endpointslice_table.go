package discovery

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// endpointsliceTable prints endpointslices as upstream's `kubectl get` does.
var endpointsliceTable *registry.Table

// endpointsliceFields lists the fields a field selector over endpointslices may name.
var endpointsliceFields func(runtime.Object) fields.Set
