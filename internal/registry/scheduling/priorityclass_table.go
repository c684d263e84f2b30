package scheduling

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// priorityclassTable prints priorityclasses as upstream's `kubectl get` does.
var priorityclassTable *registry.Table

// priorityclassFields lists the fields a field selector over priorityclasses may name.
var priorityclassFields func(runtime.Object) fields.Set
