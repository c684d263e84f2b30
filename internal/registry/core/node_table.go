package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// nodeTable prints nodes as upstream's `kubectl get` does.
var nodeTable *registry.Table

// nodeFields lists the fields a field selector over nodes may name.
var nodeFields func(runtime.Object) fields.Set
