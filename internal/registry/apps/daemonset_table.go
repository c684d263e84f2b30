package apps

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// daemonsetTable prints daemonsets as upstream's `kubectl get` does.
var daemonsetTable *registry.Table

// daemonsetFields lists the fields a field selector over daemonsets may name.
var daemonsetFields func(runtime.Object) fields.Set
