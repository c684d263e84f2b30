package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// persistentvolumeTable prints persistentvolumes as upstream's `kubectl get` does.
var persistentvolumeTable *registry.Table

// persistentvolumeFields lists the fields a field selector over persistentvolumes may name.
var persistentvolumeFields func(runtime.Object) fields.Set
