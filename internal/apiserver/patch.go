package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/orca-project/orca/internal/audit"
)

// patchType reads the patch format from the Content-Type.
func patchType(r *http.Request) (types.PatchType, error) {
	ct := r.Header.Get("Content-Type")
	t, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", errUnsupportedPatch(ct)
	}
	switch pt := types.PatchType(t); pt {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType:
		return pt, nil
	}
	return "", errUnsupportedPatch(ct)
}

func errUnsupportedPatch(ct string) error {
	st := errUnsupportedMediaType(ct)
	st.ErrStatus.Message = fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml (got %q)", ct)
	return st
}

// applyPatch computes the patched JSON document of current.
func applyPatch(pt types.PatchType, current, patch []byte, dataStruct runtime.Object) ([]byte, error) {
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		out, err := applyJSONPatch(p, current)
		if err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return out, nil
	case types.MergePatchType:
		out, err := jsonpatch.MergePatch(current, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	default:
		out, err := strategicpatch.StrategicMergePatch(current, patch, dataStruct)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	}
}

// patchOf returns an update function that applies a patch to whatever is
// stored at the time, so a patch never loses a concurrent write.
func (s *Server) patchOf(ctx context.Context, res *resource, pt types.PatchType, patch []byte, fv fieldValidation, warn *warnings, sub string, dryRun bool) func(runtime.Object) (runtime.Object, error) {
	return func(cur runtime.Object) (runtime.Object, error) {
		*warn = (*warn)[:0]
		curJSON, err := json.Marshal(cur)
		if err != nil {
			return nil, fmt.Errorf("encode current object: %w", err)
		}
		patched, err := applyPatch(pt, curJSON, patch, res.New())
		if err != nil {
			return nil, err
		}
		next, err := s.decodeResource(res, patched, mediaJSON, fv, warn)
		if err != nil {
			return nil, err
		}
		if err := res.kindMismatch(next); err != nil {
			return nil, err
		}
		acc, err := meta.Accessor(next)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		curAcc, _ := meta.Accessor(cur)
		if acc.GetName() != curAcc.GetName() {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", acc.GetName(), curAcc.GetName()))
		}
		return s.prepareUpdate(ctx, res, next, cur, acc.GetResourceVersion(), sub, dryRun)
	}
}

func (s *Server) handlePatch(w http.ResponseWriter, r *http.Request, res *resource, ri requestInfo) {
	as, err := negotiateWrite(r, res)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	pt, err := patchType(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if res.Unstructured && pt == types.StrategicMergePatchType {
		// Custom resources have no patch strategy to merge by.
		st := errUnsupportedMediaType(string(pt))
		st.ErrStatus.Message = fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got %q)", r.Header.Get("Content-Type"))
		s.writeError(w, r, st)
		return
	}
	dry, fv, body, err := s.writeInput(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	audit.LogRequestPatch(r.Context(), body, string(pt))
	if pt == types.ApplyYAMLPatchType {
		s.handleApply(w, r, res, ri, as, body, fv, dry)
		return
	}
	var warn warnings
	out, err := s.update(r.Context(), res, ri.Namespace, ri.Name, dry, s.patchOf(r.Context(), res, pt, body, fv, &warn, ri.Subresource, dry))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	warn.write(w)
	s.writeConverted(w, r, http.StatusOK, res, as, out)
}

// applyJSONPatch applies a JSON patch, turning a panic of the patch
// library on malformed operations (a replace of the root without a value,
// found by fuzzing) into an error.
func applyJSONPatch(p jsonpatch.Patch, doc []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("invalid JSON patch: %v", r)
		}
	}()
	return p.Apply(doc)
}
