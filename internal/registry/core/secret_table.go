package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// secretTable prints secrets as upstream's `kubectl get` does.
var secretTable *registry.Table

// secretFields lists the fields a field selector over secrets may name.
var secretFields func(runtime.Object) fields.Set
