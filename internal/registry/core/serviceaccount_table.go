package core

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// serviceaccountTable prints serviceaccounts as upstream's `kubectl get` does.
var serviceaccountTable *registry.Table

// serviceaccountFields lists the fields a field selector over serviceaccounts may name.
var serviceaccountFields func(runtime.Object) fields.Set
