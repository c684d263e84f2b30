package disruption

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	utilptr "k8s.io/utils/ptr"
)

type fakeMapper struct{ resets int }

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func (m *fakeMapper) RESTMapping(gk schema.GroupKind, _ ...string) (*meta.RESTMapping, error) {
	switch gk.Kind {
	case "StatefulSet":
		return &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}}, nil
	case "Widget", "Gadget":
		return &meta.RESTMapping{Resource: widgets.GroupVersion().WithResource(map[string]string{"Widget": "widgets", "Gadget": "gadgets"}[gk.Kind])}, nil
	case "ReplicaSet":
		return &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}}, nil
	}
	return nil, &meta.NoKindMatchError{GroupKind: gk}
}
func (m *fakeMapper) Reset() { m.resets++ }

type fakeScales map[string]*autoscalingv1.Scale

func (f fakeScales) Get(_ context.Context, _ string, gr schema.GroupResource, name string) (*autoscalingv1.Scale, error) {
	if s, ok := f[gr.Resource+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(gr, name)
}

func ref(apiVersion, kind, name, uid string) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: utilptr.To(true)}
}

func TestOwnersFind(t *testing.T) {
	idx := func(objs ...any) cache.Indexer {
		i := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		for _, o := range objs {
			_ = i.Add(o)
		}
		return i
	}
	meta := func(name, uid string, owner *metav1.OwnerReference) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid)}
		if owner != nil {
			m.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return m
	}
	dep := &appsv1.Deployment{ObjectMeta: meta("web", "dep", nil), Spec: appsv1.DeploymentSpec{Replicas: utilptr.To[int32](3)}}
	rsOfDep := &appsv1.ReplicaSet{ObjectMeta: meta("web-5d9f", "rs-dep", ref("apps/v1", "Deployment", "web", "dep")), Spec: appsv1.ReplicaSetSpec{Replicas: utilptr.To[int32](1)}}
	bareRS := &appsv1.ReplicaSet{ObjectMeta: meta("bare", "rs-bare", nil), Spec: appsv1.ReplicaSetSpec{Replicas: utilptr.To[int32](4)}}
	rsOfWidget := &appsv1.ReplicaSet{ObjectMeta: meta("w-rs", "rs-w", ref("example.com/v1", "Widget", "w", "widget")), Spec: appsv1.ReplicaSetSpec{Replicas: utilptr.To[int32](2)}}
	ss := &appsv1.StatefulSet{ObjectMeta: meta("db", "ss", nil), Spec: appsv1.StatefulSetSpec{Replicas: utilptr.To[int32](5)}}
	rc := &v1.ReplicationController{ObjectMeta: meta("old", "rc", nil), Spec: v1.ReplicationControllerSpec{Replicas: utilptr.To[int32](6)}}
	scales := fakeScales{
		"widgets/w":       {ObjectMeta: metav1.ObjectMeta{UID: "widget"}, Spec: autoscalingv1.ScaleSpec{Replicas: 7}},
		"statefulsets/db": {ObjectMeta: metav1.ObjectMeta{UID: "ss"}, Spec: autoscalingv1.ScaleSpec{Replicas: 5}},
	}
	mapper := &fakeMapper{}
	o := &owners{
		rcs:          corelisters.NewReplicationControllerLister(idx(rc)),
		rss:          appslisters.NewReplicaSetLister(idx(rsOfDep, bareRS, rsOfWidget)),
		deployments:  appslisters.NewDeploymentLister(idx(dep)),
		statefulsets: appslisters.NewStatefulSetLister(idx(ss)),
		mapper:       mapper, scales: scales,
		hasScale: func(_ context.Context, gvr schema.GroupVersionResource) (bool, error) {
			return gvr.Resource == "widgets", nil
		},
	}
	tests := []struct {
		name    string
		ref     *metav1.OwnerReference
		want    *Owner
		wantErr string
	}{
		{"ReplicaSet of a Deployment counts the Deployment", ref("apps/v1", "ReplicaSet", "web-5d9f", "rs-dep"), &Owner{UID: "dep", Scale: 3}, ""},
		{"bare ReplicaSet", ref("apps/v1", "ReplicaSet", "bare", "rs-bare"), &Owner{UID: "rs-bare", Scale: 4}, ""},
		{"ReplicaSet of a custom resource counts itself", ref("apps/v1", "ReplicaSet", "w-rs", "rs-w"), &Owner{UID: "rs-w", Scale: 2}, ""},
		{"StatefulSet", ref("apps/v1", "StatefulSet", "db", "ss"), &Owner{UID: "ss", Scale: 5}, ""},
		{"ReplicationController", ref("v1", "ReplicationController", "old", "rc"), &Owner{UID: "rc", Scale: 6}, ""},
		{"custom resource through /scale", ref("example.com/v1", "Widget", "w", "widget"), &Owner{UID: "widget", Scale: 7}, ""},
		{"recreated namesake", ref("apps/v1", "StatefulSet", "db", "old-uid"), nil, ""},
		{"custom resource gone", ref("example.com/v1", "Widget", "gone", "x"), nil, ""},
		{"kind without /scale", ref("example.com/v1", "Gadget", "g", "g"), nil, "gadgets.example.com does not implement the scale subresource"},
		{"kind unknown", ref("example.com/v1", "Sprocket", "s", "s"), nil, `no matches for kind "Sprocket" in group "example.com"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := o.find(context.Background())(tc.ref, "ns")
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("owner = %+v, want %+v", got, tc.want)
			}
		})
	}
	if mapper.resets != 1 {
		t.Errorf("mapper reset %d times, want once (after the unknown kind)", mapper.resets)
	}
}
