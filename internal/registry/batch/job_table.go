package batch

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// jobTable prints jobs as upstream's `kubectl get` does.
var jobTable *registry.Table

// jobFields lists the fields a field selector over jobs may name.
var jobFields func(runtime.Object) fields.Set
