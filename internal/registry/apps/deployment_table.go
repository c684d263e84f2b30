package apps

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// deploymentTable prints deployments as upstream's `kubectl get` does.
var deploymentTable *registry.Table

// deploymentFields lists the fields a field selector over deployments may name.
var deploymentFields func(runtime.Object) fields.Set
