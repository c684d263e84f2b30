package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// configmapTable prints configmaps as upstream's `kubectl get` does.
var configmapTable *registry.Table

// configmapFields lists the fields a field selector over configmaps may name.
var configmapFields func(runtime.Object) fields.Set
