package namespace

import (
	"context"
	"io"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
)

var configMapsResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func TestDeletionStagesPodsFirst(t *testing.T) {
	deploys := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	got := deletionStages([]schema.GroupVersionResource{deploys, podsResource, configMapsResource})
	if len(got) != 2 || len(got[0]) != 1 || got[0][0] != podsResource {
		t.Fatalf("stages = %v, want pods alone first", got)
	}
	if len(got[1]) != 2 || got[1][0] != configMapsResource || got[1][1] != deploys {
		t.Errorf("second stage = %v, want the rest sorted", got[1])
	}
	if got := deletionStages([]schema.GroupVersionResource{configMapsResource}); len(got) != 1 {
		t.Errorf("without pods: %v, want one stage", got)
	}
}

// meta is an object as the metadata client sees it.
func meta(gvr schema.GroupVersionResource, kind, name string, finalizers ...string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: gvr.GroupVersion().String(), Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: "doomed", Name: name, UID: types.UID("uid-" + name), Finalizers: finalizers},
	}
}

// deleteCollection stands in for the API server's delete: an object held
// by a finalizer is only marked, the rest go.
func deleteCollection(tracker clienttesting.ObjectTracker) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		gvr, ns := action.GetResource(), action.GetNamespace()
		list, err := tracker.List(gvr, schema.GroupVersionKind{Group: "fake-metadata-client-group", Version: "v1"}, ns)
		if err != nil {
			return true, nil, err
		}
		now := metav1.Now()
		for _, it := range list.(*metav1.List).Items {
			o := it.Object.(*metav1.PartialObjectMetadata).DeepCopy()
			if len(o.Finalizers) > 0 {
				o.DeletionTimestamp = &now
				err = tracker.Update(gvr, o, ns)
			} else {
				err = tracker.Delete(gvr, ns, o.Name)
			}
			if err != nil {
				return true, nil, err
			}
		}
		return true, nil, nil
	}
}

// A terminating namespace's pods are deleted first; nothing else is
// touched while one remains (here held by a finalizer), and the
// namespace carries its deletion conditions meanwhile. Once the pods are
// gone the rest goes and the namespace is finalized.
func TestSyncDeletesPodsFirst(t *testing.T) {
	ctx := context.Background()
	now := metav1.Now()
	ns := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "doomed", DeletionTimestamp: &now},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
	}
	client := fake.NewClientset(ns)
	verbs := metav1.Verbs{"list", "delete", "deletecollection"}
	client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: "v1",
		APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: verbs},
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: verbs},
		},
	}}
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	md := metadatafake.NewSimpleMetadataClient(scheme,
		meta(podsResource, "Pod", "held", "example.com/hold"),
		meta(configMapsResource, "ConfigMap", "settings"))
	md.PrependReactor("delete-collection", "*", deleteCollection(md.Tracker()))
	c := &Controller{client: client, metadata: md, discovery: client.Discovery(), log: slog.New(slog.NewTextHandler(io.Discard, nil))}

	done, err := c.sync(ctx, "doomed")
	if err != nil || done {
		t.Fatalf("first pass: done=%v err=%v, want waiting on the pod", done, err)
	}
	for _, a := range md.Actions() {
		if a.GetResource() == configMapsResource {
			t.Errorf("config maps touched while a pod remains: %s", a.GetVerb())
		}
	}
	pod, err := md.Resource(podsResource).Namespace("doomed").Get(ctx, "held", metav1.GetOptions{})
	if err != nil || pod.DeletionTimestamp == nil {
		t.Fatalf("pod = %v, %v; want it marked for deletion", pod, err)
	}
	got, err := client.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := condition(got.Status.Conditions, corev1.NamespaceDeletionContentFailure); c.Type == "" {
		t.Errorf("no %s condition while pods remain: %+v", corev1.NamespaceDeletionContentFailure, got.Status.Conditions)
	}
	if c := condition(got.Status.Conditions, corev1.NamespaceContentRemaining); c.Status != corev1.ConditionTrue || c.Message != "Some resources are remaining: pods. has 1 resource instances" {
		t.Errorf("content remaining = %+v", c)
	}

	// The pod's finalizer is released and the pod goes.
	if err := md.Tracker().Delete(podsResource, "doomed", "held"); err != nil {
		t.Fatal(err)
	}
	md.ClearActions()
	done, err = c.sync(ctx, "doomed")
	if err != nil || !done {
		t.Fatalf("second pass: done=%v err=%v, want finished", done, err)
	}
	if _, err := md.Resource(configMapsResource).Namespace("doomed").Get(ctx, "settings", metav1.GetOptions{}); err == nil {
		t.Error("config map kept after the pods were gone")
	}
	got, err = client.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Finalizers) != 0 {
		t.Errorf("namespace finalizers = %v, want none", got.Spec.Finalizers)
	}
}
