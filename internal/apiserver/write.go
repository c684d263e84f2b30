package apiserver

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	sigsyaml "sigs.k8s.io/yaml"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/audit"
	"github.com/orca-project/orca/internal/storage"
)

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	as, err := negotiateWrite(r, res)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var warn warnings
	obj, dry, err := s.readObject(r, res, &warn)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.create(r.Context(), res, ri.Namespace, obj, dry)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	warn.write(w)
	s.writeConverted(w, r, http.StatusCreated, res, as, out)
}

// negotiateWrite settles the output of a create, update or patch before
// anything is written, as upstream does: the written object may come back
// as a Table or as its metadata, and a client accepting nothing the server
// writes is refused (406) without a change.
func negotiateWrite(r *http.Request, res *resource) (negotiated, error) {
	return res.negotiate(r, "Table", "PartialObjectMetadata")
}

// readObject decodes a write's body and its dryRun flag.
func (s *Server) readObject(r *http.Request, res *resource, warn *warnings) (runtime.Object, bool, error) {
	dry, fv, body, err := s.writeInput(r)
	if err != nil {
		return nil, false, err
	}
	obj, err := s.decodeResource(res, body, r.Header.Get("Content-Type"), fv, warn)
	if err != nil {
		return nil, false, err
	}
	if err := res.kindMismatch(obj); err != nil {
		return nil, false, err
	}
	audit.LogRequestObject(r.Context(), obj, s.codecs.json)
	return obj, dry, nil
}

// writeObject writes a plain object (no table conversion) in the format
// the client accepts.
func (s *Server) writeObject(w http.ResponseWriter, r *http.Request, code int, obj runtime.Object) {
	out, err := negotiate(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	audit.LogResponseObject(r.Context(), obj, s.codecs.json)
	s.encode(w, code, out.mediaType, obj)
}

// create runs the create path: system metadata, defaults, validation,
// admission, storage.
func (s *Server) create(ctx context.Context, res *resource, ns string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	if res.Terminating != nil && res.Terminating() {
		err := apierrors.NewMethodNotSupported(res.GroupResource(), "create")
		err.ErrStatus.Message = "create not allowed while custom resource definition is terminating"
		return nil, err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if res.Namespaced {
		if acc.GetNamespace() == "" {
			acc.SetNamespace(ns)
		} else if acc.GetNamespace() != ns {
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	} else {
		acc.SetNamespace("")
	}
	if acc.GetName() == "" && acc.GetGenerateName() != "" {
		acc.SetName(generateName(acc.GetGenerateName()))
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	acc.SetUID(types.UID(uuid.NewString()))
	acc.SetCreationTimestamp(now)
	acc.SetResourceVersion("")
	acc.SetDeletionTimestamp(nil)
	acc.SetDeletionGracePeriodSeconds(nil)
	acc.SetSelfLink("")
	if res.TracksGeneration {
		acc.SetGeneration(1)
	} else {
		acc.SetGeneration(0)
	}
	if res.Status && res.Name != "nodes" {
		// Clients do not set status on create; nodes are the exception
		// because a kubelet registers its node with its status.
		resetStatus(obj)
	}
	if res.Default != nil {
		res.Default(obj)
	}
	if res.PrepareForCreate != nil {
		res.PrepareForCreate(obj)
	}
	if res.PrepareForCreateBy != nil {
		var requestor user.Info
		if u, ok := UserFrom(ctx); ok {
			requestor = u.Info()
		}
		res.PrepareForCreateBy(obj, requestor)
	}
	if res.Namespaced {
		if err := s.checkNamespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	if obj, err = s.trackUpdate(ctx, res, "", res.New(), obj); err != nil {
		return nil, err
	}
	acc, _ = meta.Accessor(obj)
	attrs := s.attributes(ctx, admission.Create, res, "", ns, acc.GetName(), obj, nil, dryRun)
	if err := s.admit(ctx, res, attrs); err != nil {
		return nil, err
	}
	if errs := s.validate(res, obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), acc.GetName(), errs)
	}
	if err := s.admission.Validate(ctx, attrs); err != nil {
		return nil, err
	}
	settle, err := s.allocate(ctx, obj, nil, dryRun)
	if err != nil {
		return nil, err
	}
	storage.SetKind(obj, res.GroupVersionKind())
	if dryRun {
		return obj, nil
	}
	err = res.store.Create(ctx, res.key(ns, acc.GetName()), res.typ(), obj)
	settle(err == nil)
	if err != nil {
		return nil, res.translateError(err, acc.GetName())
	}
	return obj, nil
}

// generateName appends upstream's five random characters to a prefix,
// trimming the prefix so that the name stays within 63 characters.
func generateName(prefix string) string {
	const maxPrefix = 63 - 5
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	return prefix + utilrand.String(5)
}

// checkNamespace refuses writes into a namespace that does not exist. The
// cache answers almost always; a miss is confirmed against etcd because a
// namespace created a moment ago may not have reached the cache yet.
func (s *Server) checkNamespace(ctx context.Context, ns string) error {
	nsRes := s.resources[corev1.SchemeGroupVersion.WithResource("namespaces")]
	if nsRes == nil {
		return nil
	}
	if _, _, ok := nsRes.cache.Get(nsRes.key("", ns)); ok {
		return nil
	}
	if _, err := nsRes.store.Get(ctx, nsRes.key("", ns), nsRes.typ(), nsRes.New); err != nil {
		return nsRes.translateError(err, ns)
	}
	return nil
}

// validate checks metadata and the resource's own rules for a new object.
func (s *Server) validate(res *resource, obj runtime.Object) field.ErrorList {
	errs := s.validateMeta(res, obj)
	if res.Validate != nil {
		errs = append(errs, res.Validate(obj)...)
	}
	return errs
}

// admit runs the mutating admission plugins. What they add to a custom
// resource that its schema does not know is dropped, as upstream prunes
// an object on its way to storage.
func (s *Server) admit(ctx context.Context, res *resource, attrs *admission.Attributes) error {
	if err := s.admission.Admit(ctx, attrs); err != nil {
		return err
	}
	if res.Coerce != nil && attrs.Patched {
		if _, err := res.Coerce(attrs.Object); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
	}
	return nil
}

// validateMeta checks an object's metadata, as every kind's.
func (s *Server) validateMeta(res *resource, obj runtime.Object) field.ErrorList {
	acc, _ := meta.Accessor(obj)
	nameFn := apivalidation.NameIsDNSSubdomain
	if res.ValidateName != nil {
		nameFn = res.ValidateName
	}
	return apivalidation.ValidateObjectMetaAccessor(acc, res.Namespaced, nameFn, field.NewPath("metadata"))
}

func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	as, err := negotiateWrite(r, res)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var warn warnings
	obj, dry, err := s.readObject(r, res, &warn)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		s.writeError(w, r, apierrors.NewBadRequest(err.Error()))
		return
	}
	if acc.GetName() != ri.Name {
		s.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", acc.GetName(), ri.Name)))
		return
	}
	if res.Namespaced && acc.GetNamespace() != "" && acc.GetNamespace() != ri.Namespace {
		s.writeError(w, r, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
		return
	}
	wanted := acc.GetResourceVersion()
	out, err := s.update(r.Context(), res, ri.Namespace, ri.Name, dry, func(cur runtime.Object) (runtime.Object, error) {
		return s.prepareUpdate(r.Context(), res, obj.DeepCopyObject(), cur, wanted, ri.Subresource, dry)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	warn.write(w)
	s.writeConverted(w, r, http.StatusOK, res, as, out)
}

// update applies fn to the stored object and writes the result; with
// dryRun it only computes it. An object whose last finalizer is removed
// while it is being deleted is deleted.
func (s *Server) update(ctx context.Context, res *resource, ns, name string, dryRun bool, fn storage.UpdateFunc) (runtime.Object, error) {
	key := res.key(ns, name)
	fn, settle := s.allocatingUpdate(ctx, fn, dryRun)
	if dryRun {
		cur, err := res.store.Get(ctx, key, res.typ(), res.New)
		if err != nil {
			return nil, res.translateError(err, name)
		}
		out, err := fn(cur.DeepCopyObject())
		if err != nil {
			return nil, res.translateError(err, name)
		}
		return out, nil
	}
	out, err := res.store.GuaranteedUpdate(ctx, key, res.typ(), res.New, nil, fn)
	settle(err == nil)
	if err != nil {
		return nil, res.translateError(err, name)
	}
	acc, _ := meta.Accessor(out)
	if acc.GetDeletionTimestamp() != nil && !finalizersPending(out) && (acc.GetDeletionGracePeriodSeconds() == nil || *acc.GetDeletionGracePeriodSeconds() == 0) {
		rv := acc.GetResourceVersion()
		deleted, err := res.store.Delete(ctx, key, res.typ(), res.New, func(cur runtime.Object) error {
			c, _ := meta.Accessor(cur)
			if c.GetResourceVersion() != rv {
				return errSkipDelete
			}
			return nil
		})
		if err == nil {
			s.release(ctx, deleted)
			return deleted, nil
		}
		if !errors.Is(err, errSkipDelete) && !errors.Is(err, storage.ErrNotFound) {
			return nil, res.translateError(err, name)
		}
	}
	return out, nil
}

var errSkipDelete = errors.New("object changed; leave deletion to the next writer")

// prepareUpdate turns a client's next version of an object into what is
// stored: system metadata kept, status or spec carried over depending on
// the endpoint (sub is the subresource written, "" for the object),
// defaults, generation, admission, validation.
func (s *Server) prepareUpdate(ctx context.Context, res *resource, next, cur runtime.Object, wantedRV, sub string, dryRun bool) (runtime.Object, error) {
	status := sub == "status"
	partial := res.Subresources[sub]
	curAcc, _ := meta.Accessor(cur)
	acc, err := meta.Accessor(next)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if wantedRV != "" && wantedRV != curAcc.GetResourceVersion() {
		return nil, apierrors.NewConflict(res.GroupResource(), curAcc.GetName(), errors.New(conflictMessage))
	}
	if uid := acc.GetUID(); uid != "" && uid != curAcc.GetUID() {
		return nil, apierrors.NewConflict(res.GroupResource(), curAcc.GetName(),
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, curAcc.GetUID()))
	}
	acc.SetNamespace(curAcc.GetNamespace())
	acc.SetUID(curAcc.GetUID())
	acc.SetCreationTimestamp(curAcc.GetCreationTimestamp())
	acc.SetDeletionTimestamp(curAcc.GetDeletionTimestamp())
	acc.SetDeletionGracePeriodSeconds(curAcc.GetDeletionGracePeriodSeconds())
	acc.SetGeneration(curAcc.GetGeneration())
	acc.SetResourceVersion(curAcc.GetResourceVersion())
	acc.SetSelfLink("")
	if status {
		keepAllButStatus(next, cur, res.StatusResetsMetadata)
		if res.PrepareForStatusUpdate != nil {
			res.PrepareForStatusUpdate(next, cur)
		}
	} else if partial != nil {
		partial.PrepareForUpdate(next, cur)
	} else if res.Status {
		copyField(next, cur, "Status")
	}
	if res.Default != nil {
		res.Default(next)
	}
	// The object and /scale write the spec; /status never does, and a
	// partial subresource only the part of it that it declares.
	writesSpec := !status && partial == nil
	if writesSpec && res.PrepareForUpdate != nil {
		res.PrepareForUpdate(next, cur)
	}
	if res.TracksGeneration && (writesSpec || (partial != nil && partial.WritesSpec)) {
		ns, os := specOf(next), specOf(cur)
		if res.StoredAs != nil {
			// A version that keeps part of its spec elsewhere
			// (autoscaling/v1 HPAs, in annotations) is compared in the
			// stored form, as upstream compares the internal one.
			ns, os = specOf(res.StoredAs.ToStored(next)), specOf(res.StoredAs.ToStored(cur))
		}
		if ns.IsValid() && !apiequality.Semantic.DeepEqual(ns.Interface(), os.Interface()) {
			acc.SetGeneration(curAcc.GetGeneration() + 1)
		}
	}
	if next, err = s.trackUpdate(ctx, res, sub, cur, next); err != nil {
		return nil, err
	}
	acc, _ = meta.Accessor(next)
	attrs := s.attributes(ctx, admission.Update, res, sub, curAcc.GetNamespace(), curAcc.GetName(), next, cur, dryRun)
	if err := s.admit(ctx, res, attrs); err != nil {
		return nil, err
	}
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(acc, curAcc, field.NewPath("metadata"))
	if res.ValidateUpdateReplaces {
		errs = append(errs, s.validateMeta(res, next)...)
	} else {
		errs = append(errs, s.validate(res, next)...)
	}
	validateUpdate := res.ValidateUpdate
	switch {
	case partial != nil:
		validateUpdate = partial.ValidateUpdate
	case status && res.ValidateStatusUpdate != nil:
		validateUpdate = res.ValidateStatusUpdate
	}
	if validateUpdate != nil {
		errs = append(errs, validateUpdate(next, cur)...)
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(res.GroupVersionKind().GroupKind(), acc.GetName(), errs)
	}
	if err := s.admission.Validate(ctx, attrs); err != nil {
		return nil, err
	}
	storage.SetKind(next, res.GroupVersionKind())
	return next, nil
}

// deleteOptions reads DeleteOptions from the body (if any) and the query.
func (s *Server) deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 {
		if err := decodeDeleteOptions(body, r.Header.Get("Content-Type"), opts); err != nil {
			return nil, err
		}
		audit.LogRequestObject(r.Context(), opts, s.codecs.json)
	}
	q := r.URL.Query()
	if v := q.Get("gracePeriodSeconds"); v != "" {
		var n int64
		if _, err := fmt.Sscan(v, &n); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid gracePeriodSeconds %q", v))
		}
		opts.GracePeriodSeconds = &n
	}
	if v := q.Get("propagationPolicy"); v != "" {
		p := metav1.DeletionPropagation(v)
		opts.PropagationPolicy = &p
	}
	if v := q.Get("orphanDependents"); v != "" {
		o := v == "true"
		opts.OrphanDependents = &o //nolint:staticcheck // deprecated, still honoured
	}
	if q.Has("dryRun") {
		if _, err := parseDryRun(r); err != nil {
			return nil, err
		}
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return opts, nil
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	opts, err := s.deleteOptions(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	obj, gone, err := s.delete(r.Context(), res, ri.Namespace, ri.Name, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if gone && res.Name != "pods" {
		acc, _ := meta.Accessor(obj)
		s.writeObject(w, r, http.StatusOK, res.deletedStatus(acc))
		return
	}
	code := http.StatusOK
	//nolint:staticcheck // upstream answers 202 only to this deprecated form of cascading deletion
	if o := opts.OrphanDependents; !gone && o != nil && !*o {
		code = http.StatusAccepted
	}
	s.writeObject(w, r, code, withKind(obj, res))
}

// delete removes an object, or starts its graceful deletion: a pod bound
// to a node is only marked (its kubelet finishes the deletion), and an
// object with finalizers is marked until they are removed. gone reports
// whether the object no longer exists.
func (s *Server) delete(ctx context.Context, res *resource, ns, name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	key := res.key(ns, name)
	dry := len(opts.DryRun) > 0
	checkPre := func(cur runtime.Object) error {
		acc, _ := meta.Accessor(cur)
		if p := opts.Preconditions; p != nil {
			if p.UID != nil && *p.UID != acc.GetUID() {
				return apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, acc.GetUID()))
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != acc.GetResourceVersion() {
				return apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, acc.GetResourceVersion()))
			}
		}
		return nil
	}
	cur, err := res.store.Get(ctx, key, res.typ(), res.New)
	if err != nil {
		return nil, false, res.translateError(err, name)
	}
	if err := checkPre(cur); err != nil {
		return nil, false, err
	}
	if err := refuseImmortal(res, name); err != nil {
		return nil, false, err
	}
	if err := s.admission.Validate(ctx, s.attributes(ctx, admission.Delete, res, "", ns, name, nil, cur, dry)); err != nil {
		return nil, false, err
	}
	grace := gracePeriod(cur, opts)
	if _, gc := gcFinalizers(cur, opts); grace > 0 || gc || finalizersPending(cur) || res.PrepareForDelete != nil {
		if dry {
			markDeleting(cur, grace)
			markForGC(cur, opts)
			if res.PrepareForDelete != nil {
				res.PrepareForDelete(cur)
			}
			return cur, !finalizersPending(cur) && grace == 0, nil
		}
		out, err := res.store.GuaranteedUpdate(ctx, key, res.typ(), res.New, nil, func(obj runtime.Object) (runtime.Object, error) {
			if err := checkPre(obj); err != nil {
				return nil, err
			}
			markDeleting(obj, gracePeriod(obj, opts))
			markForGC(obj, opts)
			markTerminating(obj)
			if res.PrepareForDelete != nil {
				res.PrepareForDelete(obj)
			}
			return obj, nil
		})
		if err != nil {
			return nil, false, res.translateError(err, name)
		}
		acc, _ := meta.Accessor(out)
		if finalizersPending(out) || (acc.GetDeletionGracePeriodSeconds() != nil && *acc.GetDeletionGracePeriodSeconds() > 0) {
			return out, false, nil
		}
	}
	if dry {
		return cur, true, nil
	}
	deleted, err := res.store.Delete(ctx, key, res.typ(), res.New, func(obj runtime.Object) error {
		if err := checkPre(obj); err != nil {
			return err
		}
		if finalizersPending(obj) {
			return apierrors.NewConflict(res.GroupResource(), name, errors.New("finalizers were added concurrently; retry"))
		}
		return nil
	})
	if err != nil {
		return nil, false, res.translateError(err, name)
	}
	s.release(ctx, deleted)
	return deleted, true, nil
}

// gracePeriod is how long a deletion waits. Only pods on a node that are
// still running wait; everything else goes at once.
func gracePeriod(obj runtime.Object, opts *metav1.DeleteOptions) int64 {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return 0
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if opts.GracePeriodSeconds != nil {
		grace = *opts.GracePeriodSeconds
	}
	if cur := pod.DeletionGracePeriodSeconds; cur != nil && *cur < grace {
		grace = *cur
	}
	if grace < 0 {
		grace = 0
	}
	return grace
}

// markDeleting sets the deletion timestamp and grace period, never moving
// an existing deadline later. The first mark is a new generation, as
// upstream counts it: controllers of an object being deleted must stop
// acting on its spec, and observedGeneration tells when they have.
func markDeleting(obj runtime.Object, grace int64) {
	acc, _ := meta.Accessor(obj)
	if acc.GetDeletionTimestamp() == nil && acc.GetGeneration() > 0 {
		acc.SetGeneration(acc.GetGeneration() + 1)
	}
	deadline := metav1.NewTime(time.Now().Add(time.Duration(grace) * time.Second).Truncate(time.Second))
	if ts := acc.GetDeletionTimestamp(); ts == nil || deadline.Before(ts) {
		acc.SetDeletionTimestamp(&deadline)
	}
	if g := acc.GetDeletionGracePeriodSeconds(); g == nil || grace < *g {
		acc.SetDeletionGracePeriodSeconds(&grace)
	}
}

func (s *Server) handleDeleteCollection(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	lopts, err := s.parseListOptions(r, res, ri.Namespace)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	dopts, err := s.deleteOptions(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	items, _, _, _, err := s.list(r.Context(), res, lopts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, it := range items {
		acc, _ := meta.Accessor(it)
		if _, _, err := s.delete(r.Context(), res, acc.GetNamespace(), acc.GetName(), dopts); err != nil && !apierrors.IsNotFound(err) {
			s.writeError(w, r, err)
			return
		}
	}
	s.writeObject(w, r, http.StatusOK, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
}

// decodeDeleteOptions reads a DeleteOptions body. Clients label it with
// whatever group version they were talking to (meta.k8s.io/v1, v1,
// apps/v1...), so the kind is not checked.
func decodeDeleteOptions(body []byte, contentType string, opts *metav1.DeleteOptions) error {
	t, _, _ := mime.ParseMediaType(contentType)
	switch t {
	case mediaProtobuf:
		unk := &runtime.Unknown{}
		if len(body) < 4 || string(body[:4]) != "k8s\x00" {
			return apierrors.NewBadRequest("DeleteOptions: not a Kubernetes protobuf message")
		}
		if err := unk.Unmarshal(body[4:]); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("DeleteOptions: %v", err))
		}
		if err := opts.Unmarshal(unk.Raw); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("DeleteOptions: %v", err))
		}
	case "", mediaJSON, mediaYAML:
		if err := sigsyaml.Unmarshal(body, opts); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("DeleteOptions: %v", err))
		}
	default:
		return errUnsupportedMediaType(contentType)
	}
	return nil
}
