package server

import (
	"context"
	"fmt"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/defaulttolerationseconds"
	"github.com/orca-project/orca/internal/admission/limitranger"
	"github.com/orca-project/orca/internal/admission/namespacelifecycle"
	"github.com/orca-project/orca/internal/admission/priority"
	"github.com/orca-project/orca/internal/admission/resourcequota"
	"github.com/orca-project/orca/internal/admission/serviceaccount"
)

// admissionPlugins keeps the server's storage for start-up work that
// goes through it (the built-in priority classes).
type admissionPlugins struct{ objects admission.Objects }

// chain builds the admission chain in upstream's order: namespace
// lifecycle first so nothing else works for a dying namespace, quota last
// so that only requests every other plugin accepted are charged.
func (p *admissionPlugins) chain(objects admission.Objects) admission.Chain {
	p.objects = objects
	return admission.Chain{
		namespacelifecycle.New(objects),
		limitranger.New(objects),
		serviceaccount.New(objects),
		priority.New(objects),
		defaulttolerationseconds.New(),
		resourcequota.New(objects),
	}
}

// bootstrap creates what the plugins rely on; it is idempotent and runs
// on every start, once the API server is ready.
func (p *admissionPlugins) bootstrap(ctx context.Context) error {
	if p.objects == nil {
		return nil
	}
	if err := priority.Bootstrap(ctx, p.objects); err != nil {
		return fmt.Errorf("admission bootstrap: %w", err)
	}
	return nil
}
