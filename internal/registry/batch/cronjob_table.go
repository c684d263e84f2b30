package batch

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// cronjobTable prints cronjobs as upstream's `kubectl get` does.
var cronjobTable *registry.Table

// cronjobFields lists the fields a field selector over cronjobs may name.
var cronjobFields func(runtime.Object) fields.Set
