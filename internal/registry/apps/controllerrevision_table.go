package apps

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// controllerrevisionTable prints controllerrevisions as upstream's `kubectl get` does.
var controllerrevisionTable *registry.Table

// controllerrevisionFields lists the fields a field selector over controllerrevisions may name.
var controllerrevisionFields func(runtime.Object) fields.Set
