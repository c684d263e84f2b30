package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// endpointsTable prints endpoints as upstream's `kubectl get` does.
var endpointsTable *registry.Table

// endpointsFields lists the fields a field selector over endpoints may name.
var endpointsFields func(runtime.Object) fields.Set
