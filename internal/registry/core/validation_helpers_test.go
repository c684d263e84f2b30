package core

import (
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// errKeys renders errors as "path: Type" (e.g. "spec.containers[0].image:
// Required value"), sorted, for comparing against expectations.
func errKeys(errs field.ErrorList) []string {
	keys := make([]string, 0, len(errs))
	for _, e := range errs {
		keys = append(keys, e.Field+": "+e.Type.String())
	}
	sort.Strings(keys)
	return keys
}

// expectErrs fails unless errs are exactly want, compared as "path: Type".
func expectErrs(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	got := errKeys(errs)
	w := append([]string(nil), want...)
	sort.Strings(w)
	if strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Errorf("errors:\n  got  %q\n  want %q\nfull: %v", got, w, errs.ToAggregate())
	}
}

// expectDetail fails unless some error at path carries detail in its text.
func expectDetail(t *testing.T, errs field.ErrorList, path, detail string) {
	t.Helper()
	for _, e := range errs {
		if e.Field == path && strings.Contains(e.Error(), detail) {
			return
		}
	}
	t.Errorf("no error at %s containing %q in %v", path, detail, errs.ToAggregate())
}

// runCreate does to obj what the server does on create (defaults, then
// PrepareForCreate) and returns the resource's validation errors.
func runCreate(res *registry.Resource, obj runtime.Object) field.ErrorList {
	if res.Default != nil {
		res.Default(obj)
	}
	if res.PrepareForCreate != nil {
		res.PrepareForCreate(obj)
	}
	if res.Validate == nil {
		return nil
	}
	return res.Validate(obj)
}

// runUpdate does to obj what the server does on update and returns the
// errors of Validate and ValidateUpdate.
func runUpdate(res *registry.Resource, obj, old runtime.Object) field.ErrorList {
	if res.Default != nil {
		res.Default(obj)
	}
	if res.PrepareForUpdate != nil {
		res.PrepareForUpdate(obj, old)
	}
	var errs field.ErrorList
	if res.Validate != nil {
		errs = append(errs, res.Validate(obj)...)
	}
	if res.ValidateUpdate != nil {
		errs = append(errs, res.ValidateUpdate(obj, old)...)
	}
	return errs
}

// nilPath is the root path, for building expected paths in tests.
func nilPath() *field.Path { return nil }
