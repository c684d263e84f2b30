package namespace

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func condition(cs []corev1.NamespaceCondition, t corev1.NamespaceConditionType) corev1.NamespaceCondition {
	for _, c := range cs {
		if c.Type == t {
			return c
		}
	}
	return corev1.NamespaceCondition{}
}

func TestConditions(t *testing.T) {
	now := metav1.NewTime(time.Unix(1000, 0))
	rep := report{
		remaining:  map[schema.GroupVersionResource]int{{Version: "v1", Resource: "pods"}: 2, {Group: "apps", Version: "v1", Resource: "deployments"}: 1, {Version: "v1", Resource: "configmaps"}: 0},
		finalizers: map[string]int{"example.com/hold": 3},
		deleteErrs: []error{errors.New("boom")},
	}
	got := mergeConditions(nil, failureConditions(rep, now), now)
	if len(got) != len(conditionTypes) {
		t.Fatalf("%d conditions, want %d", len(got), len(conditionTypes))
	}
	for typ, want := range map[corev1.NamespaceConditionType]struct {
		status          corev1.ConditionStatus
		reason, message string
	}{
		corev1.NamespaceDeletionDiscoveryFailure: {corev1.ConditionFalse, "ResourcesDiscovered", "All resources successfully discovered"},
		corev1.NamespaceDeletionGVParsingFailure: {corev1.ConditionFalse, "ParsedGroupVersions", "All legacy kube types successfully parsed"},
		corev1.NamespaceDeletionContentFailure:   {corev1.ConditionTrue, "ContentDeletionFailed", "Failed to delete all resource types, 1 remaining: boom"},
		corev1.NamespaceContentRemaining:         {corev1.ConditionTrue, "SomeResourcesRemain", "Some resources are remaining: deployments.apps has 1 resource instances, pods. has 2 resource instances"},
		corev1.NamespaceFinalizersRemaining:      {corev1.ConditionTrue, "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: example.com/hold in 3 resource instances"},
	} {
		c := condition(got, typ)
		if c.Status != want.status || c.Reason != want.reason || c.Message != want.message {
			t.Errorf("%s = %s/%s/%q, want %s/%s/%q", typ, c.Status, c.Reason, c.Message, want.status, want.reason, want.message)
		}
	}

	// Writing the same state again keeps transition times: no update.
	later := metav1.NewTime(now.Add(time.Minute))
	again := mergeConditions(got, failureConditions(rep, later), later)
	for i := range again {
		if !again[i].LastTransitionTime.Equal(&got[i].LastTransitionTime) {
			t.Errorf("%s moved its transition time", again[i].Type)
		}
	}
	// Content gone: every condition healthy, the changed ones at the new time.
	done := mergeConditions(again, failureConditions(report{}, later), later)
	if c := condition(done, corev1.NamespaceContentRemaining); c.Status != corev1.ConditionFalse || c.Message != "All content successfully removed" || !c.LastTransitionTime.Equal(&later) {
		t.Errorf("content remaining after cleanup = %+v", c)
	}
}

func TestMergeKeepsForeignConditions(t *testing.T) {
	now := metav1.Now()
	foreign := corev1.NamespaceCondition{Type: "example.com/Other", Status: corev1.ConditionTrue}
	got := mergeConditions([]corev1.NamespaceCondition{foreign}, nil, now)
	if c := condition(got, "example.com/Other"); c.Status != corev1.ConditionTrue {
		t.Fatalf("foreign condition lost: %+v", got)
	}
}

func TestWithoutFinalizer(t *testing.T) {
	rest, ok := withoutFinalizer([]corev1.FinalizerName{"example.com/x", corev1.FinalizerKubernetes})
	if !ok || len(rest) != 1 || rest[0] != "example.com/x" {
		t.Fatalf("withoutFinalizer = %v %v", rest, ok)
	}
	if _, ok := withoutFinalizer(nil); ok {
		t.Fatal("found a finalizer in nothing")
	}
}
