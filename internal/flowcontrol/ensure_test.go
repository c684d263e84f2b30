package flowcontrol

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	registry "github.com/orca-project/orca/internal/registry/flowcontrol"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// writes lists the writes a fake client saw, as "verb resource/name".
func writes(c *fake.Clientset) []string {
	var out []string
	for _, a := range c.Actions() {
		switch a := a.(type) {
		case clienttesting.DeleteAction:
			out = append(out, "delete "+a.GetResource().Resource+"/"+a.GetName())
		case clienttesting.CreateAction: // updates too: the interfaces are alike
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource+"/"+a.GetObject().(metav1.Object).GetName())
		}
	}
	sort.Strings(out)
	return out
}

func TestEnsureCreatesEverything(t *testing.T) {
	c := fake.NewClientset()
	if err := Ensure(context.Background(), c, quiet); err != nil {
		t.Fatal(err)
	}
	if got := len(writes(c)); got != 19 {
		t.Fatalf("%d writes, want 19 creates: %v", got, writes(c))
	}
	c.ClearActions()
	if err := Ensure(context.Background(), c, quiet); err != nil {
		t.Fatal(err)
	}
	if w := writes(c); len(w) != 0 {
		t.Errorf("a second run wrote %v", w)
	}
}

func TestEnsureKeepsWhatIsTheServers(t *testing.T) {
	edited := func(obj runtime.Object, annotation string, generation int64) runtime.Object {
		m := obj.(metav1.Object)
		m.SetGeneration(generation)
		if annotation == "" {
			m.SetAnnotations(nil)
		} else {
			m.SetAnnotations(map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: annotation})
		}
		return obj
	}
	pl := func(name string) *flowcontrolv1.PriorityLevelConfiguration {
		for _, p := range append(registry.MandatoryPriorityLevelConfigurations(), registry.SuggestedPriorityLevelConfigurations()...) {
			if p.Name == name {
				return p
			}
		}
		panic(name)
	}
	fs := func(name string) *flowcontrolv1.FlowSchema {
		for _, f := range append(registry.MandatoryFlowSchemas(), registry.SuggestedFlowSchemas()...) {
			if f.Name == name {
				return f
			}
		}
		panic(name)
	}
	var objs []runtime.Object
	for _, p := range append(registry.MandatoryPriorityLevelConfigurations(), registry.SuggestedPriorityLevelConfigurations()...) {
		objs = append(objs, p)
	}
	for _, f := range append(registry.MandatoryFlowSchemas(), registry.SuggestedFlowSchemas()...) {
		objs = append(objs, f)
	}
	key := func(o runtime.Object) string { return fmt.Sprintf("%T/%s", o, o.(metav1.Object).GetName()) }
	replace := func(obj runtime.Object) {
		for i, o := range objs {
			if key(o) == key(obj) {
				objs[i] = obj
				return
			}
		}
		objs = append(objs, obj)
	}
	// Mandatory: changed and marked false, still restored.
	catchAll := pl("catch-all").DeepCopy()
	catchAll.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](50)
	replace(edited(catchAll, "false", 2))
	// The exempt level's shares are the administrator's.
	exempt := pl("exempt").DeepCopy()
	exempt.Spec.Exempt.NominalConcurrencyShares = ptr.To[int32](10)
	replace(edited(exempt, "true", 2))
	// Suggested, marked false: left alone.
	system := pl("system").DeepCopy()
	system.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](99)
	replace(edited(system, "false", 2))
	// Suggested, unmarked, never changed since created: the server's.
	nodeHigh := pl("node-high").DeepCopy()
	nodeHigh.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](1)
	replace(edited(nodeHigh, "", 1))
	// Suggested, unmarked, changed by someone: theirs from now on.
	probes := fs("probes").DeepCopy()
	probes.Spec.MatchingPrecedence = 3
	replace(edited(probes, "", 3))
	// Suggested, marked with something that is not a boolean.
	global := fs("global-default").DeepCopy()
	replace(edited(global, "yes", 1))
	// No longer in the configuration: deleted only if marked true.
	for _, name := range []string{"retired", "kept", "someones"} {
		old := fs("service-accounts").DeepCopy()
		old.Name = name
		ann := map[string]string{"retired": "true", "kept": "false", "someones": ""}[name]
		replace(edited(old, ann, 1))
	}
	c := fake.NewClientset(objs...)
	if err := Ensure(context.Background(), c, quiet); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"delete flowschemas/retired",
		"update flowschemas/global-default",
		"update flowschemas/probes",
		"update prioritylevelconfigurations/catch-all",
		"update prioritylevelconfigurations/node-high",
	}
	if got := writes(c); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("writes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ctx := context.Background()
	getPL := func(name string) *flowcontrolv1.PriorityLevelConfiguration {
		p, err := c.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	getFS := func(name string) *flowcontrolv1.FlowSchema {
		f, err := c.FlowcontrolV1().FlowSchemas().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if p := getPL("catch-all"); !apiequality.Semantic.DeepEqual(p.Spec, pl("catch-all").Spec) || p.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
		t.Errorf("catch-all not restored: %+v %v", p.Spec, p.Annotations)
	}
	if p := getPL("node-high"); *p.Spec.Limited.NominalConcurrencyShares != 40 || p.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
		t.Errorf("node-high not restored: %v", p.Annotations)
	}
	if f := getFS("probes"); f.Spec.MatchingPrecedence != 3 || f.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "false" {
		t.Errorf("probes: precedence %d, annotations %v", f.Spec.MatchingPrecedence, f.Annotations)
	}
	if f := getFS("global-default"); f.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
		t.Errorf("global-default annotations %v", f.Annotations)
	}
	if p := getPL("exempt"); *p.Spec.Exempt.NominalConcurrencyShares != 10 {
		t.Error("the exempt level's shares were stomped")
	}
}
