package noderestriction

import (
	"context"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func TestValidate(t *testing.T) {
	nodeUser := func(a admission.Attributes) *admission.Attributes {
		a.UserName, a.Groups = "system:node:n1", []string{"system:nodes", "system:authenticated"}
		return &a
	}
	podOn := func(node string, ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: ann}, Spec: corev1.PodSpec{NodeName: node}}
	}
	nodeObj := func(name string, labels map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	mirror := map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	volume := func(node string, finalizers ...string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: map[string]string{"orca.io/local-path-node": node}, Finalizers: finalizers},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/data/storage/pv"}}}}
	}
	elsewhere := volume("n1", "kubernetes.io/pv-protection")
	elsewhere.Spec.Local.Path = "/etc"
	csiNode := func(name string) *storagev1.CSINode {
		return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	pvUpdate := func(pv, old *corev1.PersistentVolume) *admission.Attributes {
		return nodeUser(admission.Attributes{Operation: admission.Update, Resource: volumesGVR, Name: "pv", Object: pv, OldObject: old})
	}
	pods := admissiontest.New().
		Add(podsGVR, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n1"}}).
		Add(podsGVR, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n2"}})
	for _, tc := range []struct {
		name string
		a    *admission.Attributes
		want string // "" allowed, else part of the 403 message
	}{
		{"not a node", &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Object: podOn("n2", nil), UserName: "alice"}, ""},
		{"pod create", nodeUser(admission.Attributes{Operation: admission.Create, Resource: podsGVR, Object: podOn("n1", nil)}), `node "n1" can only create mirror pods`},
		{"mirror pod on itself", nodeUser(admission.Attributes{Operation: admission.Create, Resource: podsGVR, Object: podOn("n1", mirror)}), ""},
		{"mirror pod elsewhere", nodeUser(admission.Attributes{Operation: admission.Create, Resource: podsGVR, Object: podOn("n2", mirror)}), "spec.nodeName set to itself"},
		{"own pod status", nodeUser(admission.Attributes{Operation: admission.Update, Subresource: "status", Resource: podsGVR, Name: "p", Object: podOn("n1", nil), OldObject: podOn("n1", nil)}), ""},
		{"other node's pod status", nodeUser(admission.Attributes{Operation: admission.Update, Subresource: "status", Resource: podsGVR, Name: "p", Object: podOn("n2", nil), OldObject: podOn("n2", nil)}), `node "n1" can only update pod status for pods with spec.nodeName set to itself`},
		{"pod spec", nodeUser(admission.Attributes{Operation: admission.Update, Resource: podsGVR, Name: "p", Object: podOn("n1", nil), OldObject: podOn("n1", nil)}), "can only update pod status"},
		{"evict own pod", nodeUser(admission.Attributes{Operation: admission.Create, Subresource: "eviction", Resource: podsGVR, Namespace: "ns", Name: "mine"}), ""},
		{"evict another node's pod", nodeUser(admission.Attributes{Operation: admission.Create, Subresource: "eviction", Resource: podsGVR, Namespace: "ns", Name: "theirs"}), "node n1 can only evict pods with spec.nodeName set to itself"},
		{"evict a missing pod", nodeUser(admission.Attributes{Operation: admission.Create, Subresource: "eviction", Resource: podsGVR, Namespace: "ns", Name: "gone"}), ""},
		{"delete own pod", nodeUser(admission.Attributes{Operation: admission.Delete, Resource: podsGVR, Name: "p", OldObject: podOn("n1", nil)}), ""},
		{"delete other pod", nodeUser(admission.Attributes{Operation: admission.Delete, Resource: podsGVR, Name: "p", OldObject: podOn("n2", nil)}), "can only delete pods with spec.nodeName set to itself"},
		{"register itself", nodeUser(admission.Attributes{Operation: admission.Create, Resource: nodesGVR, Object: nodeObj("n1", map[string]string{"kubernetes.io/hostname": "n1"})}), ""},
		{"register another", nodeUser(admission.Attributes{Operation: admission.Create, Resource: nodesGVR, Object: nodeObj("n2", nil)}), `node "n1" is not allowed to modify node "n2"`},
		{"register with a restricted label", nodeUser(admission.Attributes{Operation: admission.Create, Resource: nodesGVR, Object: nodeObj("n1", map[string]string{"node-restriction.kubernetes.io/trusted": "yes"})}), "is not allowed to set the following labels: node-restriction.kubernetes.io/trusted"},
		{"label itself into a restricted key", nodeUser(admission.Attributes{Operation: admission.Update, Resource: nodesGVR, Name: "n1", Object: nodeObj("n1", map[string]string{"node-restriction.kubernetes.io/trusted": "yes"}), OldObject: nodeObj("n1", nil)}), "is not allowed to modify labels: node-restriction.kubernetes.io/trusted"},
		{"remove a restricted label", nodeUser(admission.Attributes{Operation: admission.Update, Resource: nodesGVR, Name: "n1", Object: nodeObj("n1", nil), OldObject: nodeObj("n1", map[string]string{"node-restriction.kubernetes.io/trusted": "yes"})}), "is not allowed to modify labels"},
		{"keep a restricted label an admin set", nodeUser(admission.Attributes{Operation: admission.Update, Resource: nodesGVR, Name: "n1", Object: nodeObj("n1", map[string]string{"node-restriction.kubernetes.io/trusted": "yes", "a": "b"}), OldObject: nodeObj("n1", map[string]string{"node-restriction.kubernetes.io/trusted": "yes"})}), ""},
		{"update another node", nodeUser(admission.Attributes{Operation: admission.Update, Subresource: "status", Resource: nodesGVR, Name: "n2", Object: nodeObj("n2", nil), OldObject: nodeObj("n2", nil)}), "is not allowed to modify node"},
		{"own lease", nodeUser(admission.Attributes{Operation: admission.Create, Resource: leasesGVR, Namespace: "kube-node-lease", Object: &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}), ""},
		{"another lease", nodeUser(admission.Attributes{Operation: admission.Create, Resource: leasesGVR, Namespace: "kube-node-lease", Object: &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}}), "same name as the requesting node"},
		{"remove the local-path finalizer of its own volume", pvUpdate(volume("n1", "kubernetes.io/pv-protection"), volume("n1", "kubernetes.io/pv-protection", "orca.io/local-path-cleanup")), ""},
		{"remove it from another node's volume", pvUpdate(volume("n2"), volume("n2", "orca.io/local-path-cleanup")), `can only update persistentvolumes labelled orca.io/local-path-node=n1`},
		{"remove another finalizer", pvUpdate(volume("n1", "orca.io/local-path-cleanup"), volume("n1", "kubernetes.io/pv-protection", "orca.io/local-path-cleanup")), "can only remove the orca.io/local-path-cleanup finalizer"},
		{"change the path while at it", pvUpdate(elsewhere, volume("n1", "kubernetes.io/pv-protection", "orca.io/local-path-cleanup")), "can only remove the orca.io/local-path-cleanup finalizer"},
		{"relabel a volume to itself", pvUpdate(volume("n1"), volume("n2", "orca.io/local-path-cleanup")), "can only update persistentvolumes labelled"},
		{"delete a volume", nodeUser(admission.Attributes{Operation: admission.Delete, Resource: volumesGVR, Name: "pv", OldObject: volume("n1")}), "can only remove"},
		{"create own CSINode", nodeUser(admission.Attributes{Operation: admission.Create, Resource: csiNodeGVR, Name: "n1", Object: csiNode("n1")}), ""},
		{"create another CSINode", nodeUser(admission.Attributes{Operation: admission.Create, Resource: csiNodeGVR, Name: "n2", Object: csiNode("n2")}), "can only access CSINode with the same name as the requesting node"},
		{"update own CSINode", nodeUser(admission.Attributes{Operation: admission.Update, Resource: csiNodeGVR, Name: "n1", Object: csiNode("n1"), OldObject: csiNode("n1")}), ""},
		{"update another CSINode", nodeUser(admission.Attributes{Operation: admission.Update, Resource: csiNodeGVR, Name: "n2", Object: csiNode("n2"), OldObject: csiNode("n2")}), "can only access CSINode with the same name"},
		{"delete own CSINode", nodeUser(admission.Attributes{Operation: admission.Delete, Resource: csiNodeGVR, Name: "n1", OldObject: csiNode("n1")}), ""},
		{"delete another CSINode", nodeUser(admission.Attributes{Operation: admission.Delete, Resource: csiNodeGVR, Name: "n2", OldObject: csiNode("n2")}), "can only access CSINode with the same name"},
		{"CSINode status", nodeUser(admission.Attributes{Operation: admission.Update, Subresource: "status", Resource: csiNodeGVR, Name: "n1", Object: csiNode("n1"), OldObject: csiNode("n1")}), "CSIVolumeHealth feature gate is disabled"},
	} {
		err := New(pods).Validate(context.Background(), tc.a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want a 403 containing %q", tc.name, err, tc.want)
		}
	}
}
