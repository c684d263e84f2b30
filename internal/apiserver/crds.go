package apiserver

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/orca-project/orca/internal/registry/apiextensions"
	"github.com/orca-project/orca/internal/registry/customresource"
	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/cache"
)

var crdGVR = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// crdRetry is how soon a CRD that is not settled yet (objects still being
// deleted, a failed write) is looked at again.
const crdRetry = time.Second

// runCRDs does, inside the API server as upstream's apiextensions server
// does, what CustomResourceDefinitions ask of it: their names accepted or
// refused, Established, their versions served, and on deletion their
// objects removed before the cleanup finalizer is. It is level-triggered:
// any change to a CRD reconciles them all from the watch cache, and an
// unsettled one is retried.
func (s *Server) runCRDs(ctx context.Context, st *crdState) {
	res := s.resources[crdGVR]
	if res == nil || res.cache == nil {
		return
	}
	kick := make(chan struct{}, 1)
	go onChange(ctx, res, func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	})
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		case <-retry.C:
		}
		if s.syncCRDs(ctx, res, st) {
			retry.Reset(crdRetry)
		}
	}
}

// crdState is what the CRD loop keeps between passes.
type crdState struct {
	// served maps each served CRD to the fingerprint of what it serves.
	served map[string]string
	// terminating says, by CRD, whether it is being deleted; its
	// resources ask at each create.
	terminating map[string]*atomic.Bool
	// published identifies the CRDs last given to OnCustomResources.
	published string
}

// onChange calls kick for every event of res's watch cache until ctx
// ends, watching again whenever the watch is cut.
func onChange(ctx context.Context, res *resource, kick func()) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		w, err := res.cache.Watch(cache.WatchOptions{})
		if err != nil {
			return
		}
		defer res.cache.Stop(w)
		for range w.Events() {
			kick()
		}
	}, 100*time.Millisecond)
}

// startCRDs serves the CRDs that are stored when the server starts and
// waits for their caches, so that a ready server serves them; it returns
// the state runCRDs goes on from.
func (s *Server) startCRDs(ctx context.Context) *crdState {
	st := &crdState{served: map[string]string{}, terminating: map[string]*atomic.Bool{}}
	res := s.resources[crdGVR]
	if res == nil || res.cache == nil {
		return st
	}
	s.syncCRDs(ctx, res, st)
	for _, r := range s.custom.load().ordered {
		select {
		case <-r.cache.Ready():
		case <-ctx.Done():
			return st
		}
	}
	return st
}

// syncCRDs reconciles every CRD once; it reports whether one needs
// another look.
func (s *Server) syncCRDs(ctx context.Context, res *resource, st *crdState) (again bool) {
	items, _ := res.cache.List("", nil)
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(items))
	for _, o := range items {
		crds = append(crds, o.(*apiextensionsv1.CustomResourceDefinition))
	}
	present := map[string]bool{}
	for _, crd := range crds {
		present[crd.Name] = true
		settled, err := s.syncCRD(ctx, res, crd, crds, st)
		if err != nil {
			s.log.Warn("custom resource definition", "name", crd.Name, "err", err)
		}
		if err != nil || !settled {
			again = true
		}
	}
	for name := range st.served {
		if !present[name] {
			if err := s.SetServed(name, nil); err == nil {
				delete(st.served, name)
				delete(st.terminating, name)
			}
		}
	}
	s.publishCRDs(crds, st)
	return again
}

// publishCRDs tells OnCustomResources about the established CRDs being
// served whenever that set or one of them changes.
func (s *Server) publishCRDs(crds []*apiextensionsv1.CustomResourceDefinition, st *crdState) {
	var pub []*apiextensionsv1.CustomResourceDefinition
	key := ""
	for _, crd := range crds {
		fp, ok := st.served[crd.Name]
		if !ok || !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		pub = append(pub, crd)
		key += crd.Name + "=" + fp + ";"
	}
	if key == st.published {
		return
	}
	st.published = key
	if s.cfg.OnCustomResources != nil {
		s.cfg.OnCustomResources(pub)
	}
	// Their group versions get APIServices of their own.
	s.kickAggregation()
}

// syncCRD takes one CRD one step further; settled is false while it
// waits on something only time brings (its objects going away).
func (s *Server) syncCRD(ctx context.Context, res *resource, crd *apiextensionsv1.CustomResourceDefinition, all []*apiextensionsv1.CustomResourceDefinition, st *crdState) (settled bool, err error) {
	names, accepted, established := apiextensions.NamesAndConditions(crd, all)
	if !apiequality.Semantic.DeepEqual(names, crd.Status.AcceptedNames) ||
		!conditionIs(crd, accepted) || !conditionIs(crd, established) {
		// The write comes back through the watch and the next pass
		// goes on from there.
		return true, s.updateCRD(ctx, res, crd, func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Status.AcceptedNames = names
			apihelpers.SetCRDCondition(c, accepted)
			apihelpers.SetCRDCondition(c, established)
		})
	}
	terminating := apiextensions.Terminating(crd)
	if accepted.Status == apiextensionsv1.ConditionTrue && !terminating && !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		// Served before it is said to be: a client that waits for
		// Established must never find its resource missing.
		if err := s.serveCRD(crd, terminating, st); err != nil {
			return true, err
		}
		return true, s.updateCRD(ctx, res, crd, func(c *apiextensionsv1.CustomResourceDefinition) {
			apihelpers.SetCRDCondition(c, apiextensions.Established())
		})
	}
	if err := s.serveCRD(crd, terminating, st); err != nil {
		return true, err
	}
	if crd.DeletionTimestamp == nil || !apihelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		return true, nil
	}
	return s.finalizeCRD(ctx, res, crd)
}

// conditionIs reports whether crd already has cond (time aside).
func conditionIs(crd *apiextensionsv1.CustomResourceDefinition, cond apiextensionsv1.CustomResourceDefinitionCondition) bool {
	return apihelpers.IsCRDConditionEquivalent(apihelpers.FindCRDCondition(crd, cond.Type), &cond)
}

// serveCRD serves crd's versions as it now declares them, rebuilding its
// resources only when what they depend on changed.
func (s *Server) serveCRD(crd *apiextensionsv1.CustomResourceDefinition, terminating bool, st *crdState) error {
	if !apiextensions.Serving(crd) {
		if _, ok := st.served[crd.Name]; ok {
			if err := s.SetServed(crd.Name, nil); err != nil {
				return err
			}
			delete(st.served, crd.Name)
		}
		return nil
	}
	flag := st.terminating[crd.Name]
	if flag == nil {
		flag = &atomic.Bool{}
		st.terminating[crd.Name] = flag
	}
	flag.Store(terminating)
	fp := fingerprint(crd)
	if st.served[crd.Name] == fp {
		return nil
	}
	convert, err := s.converterFor(crd)
	if err != nil {
		return fmt.Errorf("conversion: %w", err)
	}
	rs, err := customresource.Resources(crd, convert)
	if err != nil {
		return fmt.Errorf("build resources: %w", err)
	}
	for _, r := range rs {
		r.Terminating = flag.Load
	}
	if err := s.SetServed(crd.Name, rs); err != nil {
		return err
	}
	st.served[crd.Name] = fp
	return nil
}

// fingerprint identifies what a CRD's served resources are built from.
func fingerprint(crd *apiextensionsv1.CustomResourceDefinition) string {
	return fmt.Sprintf("%s/%v/%v", crd.UID, crd.Spec.String(), crd.Status.AcceptedNames.String())
}

// finalizeCRD deletes a terminating CRD's objects, as upstream's
// finalizer controller does, and removes the cleanup finalizer once none
// is left (objects with finalizers of their own wait for them).
func (s *Server) finalizeCRD(ctx context.Context, res *resource, crd *apiextensionsv1.CustomResourceDefinition) (bool, error) {
	var cr *resource
	for _, r := range s.custom.load().byOwner[crd.Name] {
		cr = r
		break
	}
	if cr != nil {
		if !conditionIs(crd, apiextensions.InstancesDeleting()) && !conditionIs(crd, apiextensions.InstancesRemoved()) {
			if err := s.updateCRD(ctx, res, crd, func(c *apiextensionsv1.CustomResourceDefinition) {
				apihelpers.SetCRDCondition(c, apiextensions.InstancesDeleting())
			}); err != nil {
				return false, err
			}
		}
		lr, err := cr.store.List(ctx, cr.prefix, cr.typ(), cr.New, storage.ListOptions{})
		if err != nil {
			return false, fmt.Errorf("list instances: %w", err)
		}
		if len(lr.Items) > 0 {
			var errs []error
			for _, o := range lr.Items {
				acc, _ := meta.Accessor(o)
				if acc.GetDeletionTimestamp() != nil {
					continue
				}
				if _, _, err := s.delete(ctx, cr, acc.GetNamespace(), acc.GetName(), &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, err)
				}
			}
			return false, errors.Join(errs...)
		}
	}
	return true, s.updateCRD(ctx, res, crd, func(c *apiextensionsv1.CustomResourceDefinition) {
		apihelpers.SetCRDCondition(c, apiextensions.InstancesRemoved())
		apihelpers.CRDRemoveFinalizer(c, apiextensionsv1.CustomResourceCleanupFinalizer)
	})
}

// updateCRD writes a change to a CRD (its status, its finalizers) as the
// server's own, at the UID it was decided for; a CRD whose last finalizer
// goes while it is being deleted is deleted.
func (s *Server) updateCRD(ctx context.Context, res *resource, crd *apiextensionsv1.CustomResourceDefinition, change func(*apiextensionsv1.CustomResourceDefinition)) error {
	uid := crd.UID
	_, err := s.update(ctx, res, "", crd.Name, false, func(cur runtime.Object) (runtime.Object, error) {
		c := cur.(*apiextensionsv1.CustomResourceDefinition)
		if c.UID != types.UID(uid) {
			return nil, fmt.Errorf("custom resource definition %s was replaced", crd.Name)
		}
		change(c)
		storage.SetKind(c, res.GroupVersionKind())
		return c, nil
	})
	return err
}

// converterFor converts a CRD's objects between its versions by its
// conversion strategy, with upstream's converter: None changes only
// apiVersion; Webhook sends a ConversionReview to the CRD's service
// (reached through ResolveEndpoint) or URL, over TLS verified with its
// caBundle.
func (s *Server) converterFor(crd *apiextensionsv1.CustomResourceDefinition) (customresource.Converter, error) {
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter {
		return nil, nil
	}
	factory, err := s.conversion()
	if err != nil {
		return nil, err
	}
	safe, _, err := factory.NewConverter(crd)
	if err != nil {
		return nil, err
	}
	group := crd.Spec.Group
	return func(obj *unstructured.Unstructured, version string) (*unstructured.Unstructured, error) {
		out, err := safe.ConvertToVersion(obj, schema.GroupVersion{Group: group, Version: version})
		if err != nil {
			return nil, err
		}
		u, ok := out.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("conversion returned a %T", out)
		}
		return u, nil
	}, nil
}
