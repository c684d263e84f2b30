package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// persistentvolumeclaimTable prints persistentvolumeclaims as upstream's `kubectl get` does.
var persistentvolumeclaimTable *registry.Table

// persistentvolumeclaimFields lists the fields a field selector over persistentvolumeclaims may name.
var persistentvolumeclaimFields func(runtime.Object) fields.Set
