package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// eventTable prints events as upstream's `kubectl get` does.
var eventTable *registry.Table

// eventFields lists the fields a field selector over events may name.
var eventFields func(runtime.Object) fields.Set
