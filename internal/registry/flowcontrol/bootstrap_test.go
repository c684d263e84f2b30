package flowcontrol

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	upstream "k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"

	"github.com/orca-project/orca/internal/registry/registrytest"
)

// TestBootstrapIsUpstreams: the bootstrap objects are upstream's, in
// upstream's order.
func TestBootstrapIsUpstreams(t *testing.T) {
	comparePL := func(name string, got, want []*flowcontrolv1.PriorityLevelConfiguration) {
		if len(got) != len(want) {
			t.Fatalf("%s: %d objects, upstream has %d", name, len(got), len(want))
		}
		for i := range want {
			if !apiequality.Semantic.DeepEqual(got[i], want[i]) {
				t.Errorf("%s %d:\n got %+v\nwant %+v", name, i, got[i], want[i])
			}
		}
	}
	compareFS := func(name string, got, want []*flowcontrolv1.FlowSchema) {
		if len(got) != len(want) {
			t.Fatalf("%s: %d objects, upstream has %d", name, len(got), len(want))
		}
		for i := range want {
			if !apiequality.Semantic.DeepEqual(got[i], want[i]) {
				t.Errorf("%s %d:\n got %+v\nwant %+v", name, i, got[i], want[i])
			}
		}
	}
	comparePL("mandatory levels", MandatoryPriorityLevelConfigurations(), upstream.MandatoryPriorityLevelConfigurations)
	comparePL("suggested levels", SuggestedPriorityLevelConfigurations(), upstream.SuggestedPriorityLevelConfigurations)
	compareFS("mandatory schemas", MandatoryFlowSchemas(), upstream.MandatoryFlowSchemas)
	compareFS("suggested schemas", SuggestedFlowSchemas(), upstream.SuggestedFlowSchemas)
}

// TestBootstrapIsValidAndDefaulted: the server creates these objects
// through its own validation, and defaulting leaves them as they are, so
// the ensurer can compare them with what is stored.
func TestBootstrapIsValidAndDefaulted(t *testing.T) {
	for _, pl := range append(MandatoryPriorityLevelConfigurations(), SuggestedPriorityLevelConfigurations()...) {
		d := pl.DeepCopy()
		DefaultPriorityLevelConfiguration(d)
		if !apiequality.Semantic.DeepEqual(d, pl) {
			t.Errorf("defaulting changed level %s", pl.Name)
		}
		registrytest.CheckErrs(t, validatePriorityLevelConfiguration(pl), nil)
	}
	for _, fs := range append(MandatoryFlowSchemas(), SuggestedFlowSchemas()...) {
		d := fs.DeepCopy()
		defaultFlowSchema(d)
		if !apiequality.Semantic.DeepEqual(d, fs) {
			t.Errorf("defaulting changed schema %s", fs.Name)
		}
		registrytest.CheckErrs(t, validateFlowSchema(fs), nil)
	}
}
