package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orca-project/orca/internal/storage"
)

// handleApply serves server-side apply (PATCH with
// application/apply-patch+yaml). The applied configuration is merged into
// the stored object by structured-merge-diff, which also decides field
// ownership and conflicts; the result then takes the update path
// (defaults, admission, validation) like any other write. As upstream,
// applying to an object that does not exist creates it.
func (s *Server) handleApply(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo, as negotiated, body []byte, fv fieldValidation, dry bool) {
	patch, err := decodeApplyPatch(body, fv)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	force := r.URL.Query().Get("force") == "true"
	ctx := withWriter(r.Context(), writer{manager: writerFrom(r.Context()).manager, applied: true})
	code := http.StatusOK
	out, err := s.update(ctx, res, ri.Namespace, ri.Name, dry, s.applyOf(ctx, res, patch, force, ri.Subresource, dry))
	if apierrors.IsNotFound(err) && ri.Subresource == "" {
		code = http.StatusCreated
		out, err = s.applyCreate(ctx, res, ri, patch, force, dry)
		if apierrors.IsAlreadyExists(err) {
			// Created concurrently: apply to what the other writer made.
			code = http.StatusOK
			out, err = s.update(ctx, res, ri.Namespace, ri.Name, dry, s.applyOf(ctx, res, patch, force, ri.Subresource, dry))
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeConverted(w, r, code, res, as, out)
}

// errApplyToScale refuses apply to /scale: its managedFields would have
// to be translated between the Scale and the parent object, which is not
// built.
var errApplyToScale = apierrors.NewBadRequest("server-side apply to the scale subresource is not supported")

// decodeApplyPatch reads an applied configuration. Unknown fields are
// refused later, when the configuration is typed against the schema;
// fieldValidation=Strict also refuses duplicate keys, as upstream.
func decodeApplyPatch(body []byte, fv fieldValidation) (*unstructured.Unstructured, error) {
	// Integers stay int64, as in objects decoded from JSON: custom
	// resources are checked against their schema in this form.
	m := map[string]any{}
	j, err := sigsyaml.YAMLToJSON(body)
	if err == nil {
		err = utiljson.Unmarshal(j, &m)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if fv == validationStrict {
		if err := sigsyaml.UnmarshalStrict(body, &map[string]any{}); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
		}
	}
	if len(m) == 0 {
		return nil, apierrors.NewBadRequest("error decoding YAML: the applied configuration is empty")
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// applyOf returns the update function of an apply to the stored object.
func (s *Server) applyOf(ctx context.Context, res *resource, patch *unstructured.Unstructured, force bool, sub string, dry bool) storage.UpdateFunc {
	return func(cur runtime.Object) (runtime.Object, error) {
		next, err := applyTo(ctx, res, sub, cur, patch, force)
		if err != nil {
			return nil, err
		}
		acc, _ := meta.Accessor(next)
		return s.prepareUpdate(ctx, res, next, cur, acc.GetResourceVersion(), sub, dry)
	}
}

// applyCreate creates the object an apply names, merging the applied
// configuration into an empty object.
func (s *Server) applyCreate(ctx context.Context, res *resource, ri requestInfo, patch *unstructured.Unstructured, force, dry bool) (runtime.Object, error) {
	live := res.New()
	acc, err := meta.Accessor(live)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	acc.SetName(ri.Name)
	if res.Namespaced {
		acc.SetNamespace(ri.Namespace)
	}
	obj, err := applyTo(ctx, res, "", live, patch, force)
	if err != nil {
		return nil, err
	}
	return s.create(ctx, res, ri.Namespace, obj, dry)
}

// applyTo merges the applied configuration into live for the manager in
// ctx and returns the merged object with its new managedFields.
func applyTo(ctx context.Context, res *resource, sub string, live runtime.Object, patch *unstructured.Unstructured, force bool) (runtime.Object, error) {
	fm, err := res.fieldManager(sub)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	storage.SetKind(live, res.GroupVersionKind())
	out, err := fm.Apply(live, patch.DeepCopy(), writerFrom(ctx).manager, force)
	if err != nil {
		var st apierrors.APIStatus
		if errors.As(err, &st) {
			return nil, err
		}
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if reflect.TypeOf(out) != reflect.TypeOf(live) {
		return nil, apierrors.NewInternalError(fmt.Errorf("apply to %s produced a %T", res.GroupResource(), out))
	}
	liveAcc, _ := meta.Accessor(live)
	acc, _ := meta.Accessor(out)
	if acc.GetName() != liveAcc.GetName() {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", acc.GetName(), liveAcc.GetName()))
	}
	if acc.GetNamespace() != liveAcc.GetNamespace() {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return out, nil
}
