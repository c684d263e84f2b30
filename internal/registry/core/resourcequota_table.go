package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// resourcequotaTable prints resourcequotas as upstream's `kubectl get` does.
var resourcequotaTable *registry.Table

// resourcequotaFields lists the fields a field selector over resourcequotas may name.
var resourcequotaFields func(runtime.Object) fields.Set
