package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// replicationcontrollerTable prints replicationcontrollers as upstream's `kubectl get` does.
var replicationcontrollerTable *registry.Table

// replicationcontrollerFields lists the fields a field selector over replicationcontrollers may name.
var replicationcontrollerFields func(runtime.Object) fields.Set
