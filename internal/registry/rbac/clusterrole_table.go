package rbac

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// clusterroleTable prints clusterroles as upstream's `kubectl get` does.
var clusterroleTable *registry.Table

// clusterroleFields lists the fields a field selector over clusterroles may name.
var clusterroleFields func(runtime.Object) fields.Set
