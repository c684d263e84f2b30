package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/audit"
	"github.com/orca-project/orca/internal/eviction"
	"github.com/orca-project/orca/internal/storage"
)

var (
	evictionGVK = policyv1.SchemeGroupVersion.WithKind("Eviction")
	pdbsGVR     = policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")
)

// evictionsRetry is upstream's backoff for the conflicts of several
// clients evicting under one budget at once.
var evictionsRetry = wait.Backoff{Steps: 20, Duration: 500 * time.Millisecond, Factor: 1.0, Jitter: 0.1}

// serveEviction handles POST pods/NAME/eviction: it deletes the pod if
// its disruption budget allows, as upstream's eviction REST storage. The
// body is a policy/v1 Eviction, or a v1beta1 one (older kubectls).
func (s *Server) serveEviction(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	ctx := r.Context()
	var warn warnings
	dry, fv, body, err := s.writeInput(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	obj, err := s.decodeObject(body, r.Header.Get("Content-Type"), fv, func() runtime.Object { return &policyv1.Eviction{} }, &warn)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	audit.LogRequestObject(ctx, obj, s.codecs.json)
	ev, err := asV1Eviction(obj)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if ev.Name != ri.Name {
		s.writeError(w, r, apierrors.NewBadRequest("name in URL does not match name in Eviction object"))
		return
	}
	if o := ev.DeleteOptions; o != nil && o.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *o.IgnoreStoreReadErrorWithClusterBreakingPotential {
		s.writeError(w, r, apierrors.NewInvalid(evictionGVK.GroupKind(), ri.Name, field.ErrorList{
			field.Invalid(field.NewPath("deleteOptions", "ignoreStoreReadErrorWithClusterBreakingPotential"), true, "can not be set for pod eviction, try after removing the option"),
		}))
		return
	}
	opts, err := propagateDryRun(ev, dry)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		s.writeError(w, r, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs))
		return
	}
	attrs := s.attributes(ctx, admission.Create, res, "eviction", ri.Namespace, ri.Name, ev, nil, len(opts.DryRun) > 0)
	attrs.Kind = evictionGVK
	if err := s.admit(ctx, res, attrs); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.admission.Validate(ctx, attrs); err != nil {
		s.writeError(w, r, err)
		return
	}
	status, err := s.evict(ctx, res, ri.Namespace, ri.Name, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	warn.write(w)
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	s.writeObject(w, r, int(status.Code), status)
}

// asV1Eviction reads either served version of an Eviction; v1beta1 has
// the same fields.
func asV1Eviction(obj runtime.Object) (*policyv1.Eviction, error) {
	switch e := obj.(type) {
	case *policyv1.Eviction:
		return e, nil
	case *policyv1beta1.Eviction:
		return &policyv1.Eviction{ObjectMeta: e.ObjectMeta, DeleteOptions: e.DeleteOptions}, nil
	}
	return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Eviction object: %T", obj))
}

// propagateDryRun merges the request's dryRun into the Eviction's delete
// options; the two may not disagree.
func propagateDryRun(ev *policyv1.Eviction, dry bool) (*metav1.DeleteOptions, error) {
	var query []string
	if dry {
		query = []string{metav1.DryRunAll}
	}
	if ev.DeleteOptions == nil {
		return &metav1.DeleteOptions{DryRun: query}, nil
	}
	if len(ev.DeleteOptions.DryRun) == 0 {
		ev.DeleteOptions.DryRun = query
		return ev.DeleteOptions, nil
	}
	if len(query) == 0 {
		return ev.DeleteOptions, nil
	}
	if !reflect.DeepEqual(query, ev.DeleteOptions.DryRun) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("Non-matching dry-run options in request and content: %v and %v", query, ev.DeleteOptions.DryRun))
	}
	return ev.DeleteOptions, nil
}

func rvUnset(o *metav1.DeleteOptions) bool {
	return o.Preconditions == nil || o.Preconditions.ResourceVersion == nil
}

func withRV(o *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	o = o.DeepCopy()
	if o.Preconditions == nil {
		o.Preconditions = &metav1.Preconditions{}
	}
	o.Preconditions.ResourceVersion = &rv
	return o
}

func evicted() *metav1.Status {
	return &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated}
}

// evict decides and carries out one eviction. A pod that disrupts
// nothing by going is deleted at once; otherwise its one budget gives up
// a disruption (recorded in its status) before the pod is deleted.
func (s *Server) evict(ctx context.Context, pods *resource, ns, name string, opts *metav1.DeleteOptions) (*metav1.Status, error) {
	dry := len(opts.DryRun) > 0
	shouldRetry := apierrors.IsConflict
	if !rvUnset(opts) {
		// The client's own precondition failing is its answer.
		shouldRetry = func(error) bool { return false }
	}
	var pod *corev1.Pod
	deleted := false
	err := retry.OnError(evictionsRetry, shouldRetry, func() error {
		obj, err := s.get(ctx, pods, ns, name, "")
		if err != nil {
			return err
		}
		pod = obj.(*corev1.Pod)
		if !eviction.CanIgnoreBudgets(pod) {
			return nil
		}
		del := opts
		if eviction.EnforceResourceVersion(pod) && rvUnset(opts) {
			del = withRV(opts, pod.ResourceVersion)
		}
		if err := s.markAndDeletePod(ctx, pods, ns, name, del); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if deleted {
		return evicted(), nil
	}

	pdbs, err := s.budgetsCovering(ctx, pod)
	if err != nil {
		return nil, err
	}
	if len(pdbs) > 1 {
		return &metav1.Status{Status: metav1.StatusFailure, Message: eviction.MultipleBudgetsMessage, Code: http.StatusInternalServerError}, nil
	}
	del, pdbName := opts, ""
	if len(pdbs) == 1 {
		pdb := pdbs[0]
		pdbName = pdb.Name
		if eviction.UnhealthyMayGo(pod, pdb) {
			// Delete only the pod as it was judged: had it become ready,
			// it would count towards the budget.
			del = withRV(opts, pod.ResourceVersion)
		} else if err := s.takeDisruption(ctx, pdb, pod.Name, dry); err != nil {
			return nil, err
		}
	}
	if err := s.markAndDeletePod(ctx, pods, ns, name, del); err != nil {
		if apierrors.IsConflict(err) && del != opts && rvUnset(opts) {
			// The pod changed under the precondition added here: the
			// client retries, as after any budget refusal.
			return nil, eviction.TooManyRequests(pdbName)
		}
		return nil, err
	}
	return evicted(), nil
}

// budgetsCovering reads the budgets of the pod's namespace from etcd, not
// the cache: a budget created a moment ago must already protect the pod.
func (s *Server) budgetsCovering(ctx context.Context, pod *corev1.Pod) ([]*policyv1.PodDisruptionBudget, error) {
	res, ok := s.resources[pdbsGVR]
	if !ok {
		return nil, nil
	}
	lr, err := res.store.List(ctx, res.prefix+pod.Namespace+"/", res.typ(), res.New, storage.ListOptions{})
	if err != nil {
		return nil, res.translateError(err, "")
	}
	all := make([]*policyv1.PodDisruptionBudget, 0, len(lr.Items))
	for _, it := range lr.Items {
		all = append(all, it.(*policyv1.PodDisruptionBudget))
	}
	return eviction.Covering(all, pod), nil
}

// takeDisruption takes one disruption from the budget as stored now,
// the store retrying on conflicts with other evictions; a dry run only checks.
func (s *Server) takeDisruption(ctx context.Context, pdb *policyv1.PodDisruptionBudget, podName string, dry bool) error {
	res := s.resources[pdbsGVR]
	if dry {
		return eviction.TakeDisruption(pdb.DeepCopy(), podName, time.Now(), true)
	}
	_, err := s.update(ctx, res, pdb.Namespace, pdb.Name, false, func(cur runtime.Object) (runtime.Object, error) {
		next := cur.(*policyv1.PodDisruptionBudget)
		if err := eviction.TakeDisruption(next, podName, time.Now(), false); err != nil {
			return nil, err
		}
		return next, nil
	})
	return err
}

// markAndDeletePod sets the DisruptionTarget condition on the pod as
// stored, under the delete's preconditions, then deletes it. A dry run
// changes nothing.
func (s *Server) markAndDeletePod(ctx context.Context, pods *resource, ns, name string, opts *metav1.DeleteOptions) error {
	if len(opts.DryRun) == 0 {
		out, err := s.update(ctx, pods, ns, name, false, func(cur runtime.Object) (runtime.Object, error) {
			pod := cur.(*corev1.Pod)
			if p := opts.Preconditions; p != nil {
				if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
					return nil, apierrors.NewConflict(pods.GroupResource(), name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, pod.UID))
				}
				if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
					return nil, apierrors.NewConflict(pods.GroupResource(), name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, pod.ResourceVersion))
				}
			}
			eviction.SetCondition(&pod.Status, eviction.DisruptionTarget(time.Now().Truncate(time.Second)))
			return pod, nil
		})
		if err != nil {
			return err
		}
		if !rvUnset(opts) {
			// The condition is this request's own change.
			opts = withRV(opts, out.(*corev1.Pod).ResourceVersion)
		}
	}
	_, _, err := s.delete(ctx, pods, ns, name, opts)
	return err
}
