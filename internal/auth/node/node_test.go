package node

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

type noPods struct{}

func (noPods) PodsOnNode(string) []*corev1.Pod                                    { return nil }
func (noPods) PersistentVolumeClaim(string, string) *corev1.PersistentVolumeClaim { return nil }

// A node reaches its own CSINode, as upstream's authorizer allows, and no
// other; NodeRestriction checks the name of the one it creates.
func TestCSINode(t *testing.T) {
	n1 := &user.DefaultInfo{Name: "system:node:n1", Groups: []string{Group, user.AllAuthenticated}}
	a := New(noPods{}, nil)
	for _, tc := range []struct {
		verb, name, subresource string
		allow                   bool
		reason                  string
	}{
		{verb: "get", name: "n1", allow: true},
		{verb: "create", allow: true},
		{verb: "update", name: "n1", allow: true},
		{verb: "patch", name: "n1", allow: true},
		{verb: "delete", name: "n1", allow: true},
		{verb: "get", name: "n2", reason: "can only access CSINode with the same name as the requesting node"},
		{verb: "delete", name: "n2", reason: "can only access CSINode with the same name as the requesting node"},
		{verb: "list", reason: "can only get, create, update, patch, or delete a CSINode"},
		{verb: "watch", name: "n1", reason: "can only get, create, update, patch, or delete a CSINode"},
		{verb: "update", name: "n1", subresource: "status", reason: "CSINode status access requires CSIVolumeHealth feature"},
		{verb: "get", name: "n1", subresource: "other", reason: "cannot authorize CSINode subresources"},
	} {
		attrs := authorizer.AttributesRecord{
			User: n1, Verb: tc.verb, APIGroup: "storage.k8s.io", APIVersion: "v1", Resource: "csinodes",
			Subresource: tc.subresource, Name: tc.name, ResourceRequest: true,
		}
		decision, reason, err := a.Authorize(context.Background(), attrs)
		if err != nil {
			t.Fatal(err)
		}
		if got := decision == authorizer.DecisionAllow; got != tc.allow || reason != tc.reason {
			t.Errorf("%s %s/%s: allowed %v (%q), want %v (%q)", tc.verb, tc.name, tc.subresource, got, reason, tc.allow, tc.reason)
		}
	}
}

// A node lists and watches only the local-path volumes labelled with its
// name, and may write volumes (NodeRestriction narrows the write to
// removing the local-path finalizer of its own ones); it gets no other
// volume than its pods'.
func TestLocalPathVolumes(t *testing.T) {
	n1 := &user.DefaultInfo{Name: "system:node:n1", Groups: []string{Group, user.AllAuthenticated}}
	a := New(noPods{}, nil)
	selector := func(s string) labels.Requirements {
		reqs, err := labels.ParseToRequirements(s)
		if err != nil {
			t.Fatal(err)
		}
		return reqs
	}
	for _, tc := range []struct {
		verb, name, subresource string
		selector                labels.Requirements
		allow                   bool
	}{
		{verb: "list", selector: selector("orca.io/local-path-node=n1"), allow: true},
		{verb: "watch", selector: selector("orca.io/local-path-node==n1"), allow: true},
		{verb: "list", selector: selector("orca.io/local-path-node=n2")},
		{verb: "list", selector: selector("orca.io/local-path-node in (n1,n2)")},
		{verb: "list", selector: selector("orca.io/local-path-node!=n2")},
		{verb: "list"},
		{verb: "update", name: "pv", allow: true},
		{verb: "patch", name: "pv", allow: true},
		{verb: "update", name: "pv", subresource: "status"},
		{verb: "delete", name: "pv"},
		{verb: "get", name: "pv"},
	} {
		attrs := authorizer.AttributesRecord{
			User: n1, Verb: tc.verb, APIVersion: "v1", Resource: "persistentvolumes",
			Subresource: tc.subresource, Name: tc.name, ResourceRequest: true, LabelSelectorRequirements: tc.selector,
		}
		decision, reason, err := a.Authorize(context.Background(), attrs)
		if err != nil {
			t.Fatal(err)
		}
		if got := decision == authorizer.DecisionAllow; got != tc.allow {
			t.Errorf("%s %s/%s %v: allowed %v (%q), want %v", tc.verb, tc.name, tc.subresource, tc.selector, got, reason, tc.allow)
		}
	}
}
