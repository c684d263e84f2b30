package rbac

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// roleTable prints roles as upstream's `kubectl get` does.
var roleTable *registry.Table

// roleFields lists the fields a field selector over roles may name.
var roleFields func(runtime.Object) fields.Set
