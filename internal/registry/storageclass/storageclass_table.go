package storageclass

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// storageclassTable prints storageclasses as upstream's `kubectl get` does.
var storageclassTable *registry.Table

// storageclassFields lists the fields a field selector over storageclasses may name.
var storageclassFields func(runtime.Object) fields.Set
