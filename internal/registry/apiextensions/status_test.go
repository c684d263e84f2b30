package apiextensions

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func crd(name, group, plural, kind string, accepted bool) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Names: apiextensionsv1.CustomResourceDefinitionNames{
			Plural: plural, Singular: kind + "s", Kind: kind, ListKind: kind + "List", ShortNames: []string{plural[:2]},
		}},
	}
	if accepted {
		c.Status.AcceptedNames = c.Spec.Names
	}
	return c
}

func TestNamesAndConditions(t *testing.T) {
	held := crd("widgets.example.com", "example.com", "widgets", "Widget", true)
	cases := []struct {
		name         string
		crd          *apiextensionsv1.CustomResourceDefinition
		status       apiextensionsv1.ConditionStatus
		reason, msg  string
		acceptPlural string
	}{
		{"fresh names", crd("gadgets.example.com", "example.com", "gadgets", "Gadget", false), apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found", "gadgets"},
		{"kind and list kind held: the last conflict is reported", crd("others.example.com", "example.com", "others", "Widget", false), apiextensionsv1.ConditionFalse, "ListKindConflict", `"WidgetList" is already in use`, "others"},
		{"plural held", crd("widgets2.example.com", "example.com", "widgets", "Thing", false), apiextensionsv1.ConditionFalse, "ShortNamesConflict", `"wi" is already in use`, ""},
		{"same names in another group", crd("widgets.other.io", "other.io", "widgets", "Widget", false), apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found", "widgets"},
		{"its own names stay", held, apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found", "widgets"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			names, accepted, established := NamesAndConditions(c.crd, []*apiextensionsv1.CustomResourceDefinition{held, c.crd})
			if accepted.Status != c.status || accepted.Reason != c.reason || accepted.Message != c.msg {
				t.Errorf("NamesAccepted = %s %s %q, want %s %s %q", accepted.Status, accepted.Reason, accepted.Message, c.status, c.reason, c.msg)
			}
			if names.Plural != c.acceptPlural {
				t.Errorf("accepted plural %q, want %q", names.Plural, c.acceptPlural)
			}
			wantEstablished := "NotAccepted"
			if c.status == apiextensionsv1.ConditionTrue {
				wantEstablished = "Installing"
			}
			if established.Status != apiextensionsv1.ConditionFalse || established.Reason != wantEstablished {
				t.Errorf("Established = %s %s, want False %s", established.Status, established.Reason, wantEstablished)
			}
		})
	}
}

func TestServingAndTerminating(t *testing.T) {
	c := crd("widgets.example.com", "example.com", "widgets", "Widget", true)
	if Serving(c) || Terminating(c) {
		t.Fatal("a CRD without conditions is neither served nor terminating")
	}
	c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue}}
	if !Serving(c) {
		t.Error("names accepted: not served")
	}
	prepareForDelete(c)
	if !Terminating(c) || len(c.Finalizers) != 1 || c.Finalizers[0] != apiextensionsv1.CustomResourceCleanupFinalizer {
		t.Errorf("after the first delete: terminating %v, finalizers %v", Terminating(c), c.Finalizers)
	}
	prepareForDelete(c)
	if len(c.Finalizers) != 1 {
		t.Errorf("a second delete added the finalizer again: %v", c.Finalizers)
	}
}
