package rbac

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// clusterrolebindingTable prints clusterrolebindings as upstream's `kubectl get` does.
var clusterrolebindingTable *registry.Table

// clusterrolebindingFields lists the fields a field selector over clusterrolebindings may name.
var clusterrolebindingFields func(runtime.Object) fields.Set
