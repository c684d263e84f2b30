package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// namespaceTable prints namespaces as upstream's `kubectl get` does.
var namespaceTable *registry.Table

// namespaceFields lists the fields a field selector over namespaces may name.
var namespaceFields func(runtime.Object) fields.Set
