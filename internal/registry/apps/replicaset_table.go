package apps

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// replicasetTable prints replicasets as upstream's `kubectl get` does.
var replicasetTable *registry.Table

// replicasetFields lists the fields a field selector over replicasets may name.
var replicasetFields func(runtime.Object) fields.Set
