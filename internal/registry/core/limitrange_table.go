package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// limitrangeTable prints limitranges as upstream's `kubectl get` does.
var limitrangeTable *registry.Table

// limitrangeFields lists the fields a field selector over limitranges may name.
var limitrangeFields func(runtime.Object) fields.Set
