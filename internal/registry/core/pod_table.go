package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// podTable prints pods as upstream's `kubectl get` does.
var podTable *registry.Table

// podFields lists the fields a field selector over pods may name.
var podFields func(runtime.Object) fields.Set
