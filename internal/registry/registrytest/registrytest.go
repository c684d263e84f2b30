// Package registrytest holds what the registry packages' validation tests
// share: a compact way to state the field errors a case expects.
package registrytest

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// WantErr is one expected validation error. An empty Detail matches any.
type WantErr struct {
	Type   field.ErrorType
	Field  string
	Detail string
}

// CheckErrs fails t unless got holds exactly the errors in want, in order.
func CheckErrs(t *testing.T, got field.ErrorList, want []WantErr) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(got), len(want), describe(got))
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.Type || g.Field != w.Field || (w.Detail != "" && g.Detail != w.Detail) {
			t.Errorf("error %d: got %s %q (%q), want %s %q (%q)", i, g.Type, g.Field, g.Detail, w.Type, w.Field, w.Detail)
		}
	}
}

func describe(errs field.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "  %s\n", e.Error())
	}
	return b.String()
}
