package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// serviceTable prints services as upstream's `kubectl get` does.
var serviceTable *registry.Table

// serviceFields lists the fields a field selector over services may name.
var serviceFields func(runtime.Object) fields.Set
