package apps

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// statefulsetTable prints statefulsets as upstream's `kubectl get` does.
var statefulsetTable *registry.Table

// statefulsetFields lists the fields a field selector over statefulsets may name.
var statefulsetFields func(runtime.Object) fields.Set
