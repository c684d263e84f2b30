package rbac

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// rolebindingTable prints rolebindings as upstream's `kubectl get` does.
var rolebindingTable *registry.Table

// rolebindingFields lists the fields a field selector over rolebindings may name.
var rolebindingFields func(runtime.Object) fields.Set
