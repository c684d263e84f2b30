package servicecidrs

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// newFixture builds the controller over a fake client holding objs, with
// its informers' stores filled directly.
func newFixture(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *networkingv1.ServiceCIDR:
			_ = factory.Networking().V1().ServiceCIDRs().Informer().GetStore().Add(o)
		case *networkingv1.IPAddress:
			_ = factory.Networking().V1().IPAddresses().Informer().GetStore().Add(o)
		}
	}
	c.timeNow = func() time.Time { return now }
	client.ClearActions()
	return c, client
}

func writes(actions []k8stesting.Action) []string {
	var out []string
	for _, a := range actions {
		if a.GetVerb() == "patch" {
			p := a.(k8stesting.PatchAction)
			out = append(out, a.GetResource().Resource+"/"+a.GetSubresource()+" "+string(p.GetPatchType())+" "+string(p.GetPatch()))
		}
	}
	return out
}

func TestSyncNewServiceCIDR(t *testing.T) {
	c, client := newFixture(t, cidr("extra", "10.0.0.0/24"))
	if err := c.sync(context.Background(), "extra"); err != nil {
		t.Fatal(err)
	}
	got := writes(client.Actions())
	if len(got) != 2 || got[0] != `servicecidrs/ application/strategic-merge-patch+json {"metadata":{"finalizers":["networking.k8s.io/service-cidr-finalizer"]}}` {
		t.Fatalf("writes %q", got)
	}
	if want := "servicecidrs/status application/apply-patch+yaml"; len(got[1]) < len(want) || got[1][:len(want)] != want {
		t.Errorf("second write %q, want an apply of the status", got[1])
	}
}

func TestSyncDeletedServiceCIDR(t *testing.T) {
	inUse := deleting(ready(cidr("extra", "10.0.0.0/24")), time.Minute)
	c, client := newFixture(t, inUse, allocated("10.0.0.10"))
	if err := c.sync(context.Background(), "extra"); err != nil {
		t.Fatal(err)
	}
	if got := writes(client.Actions()); len(got) != 1 || !reflect.DeepEqual(got[0][:len("servicecidrs/status")], "servicecidrs/status") {
		t.Fatalf("writes %q, want the Terminating condition only", got)
	}

	c, client = newFixture(t, inUse)
	if err := c.sync(context.Background(), "extra"); err != nil {
		t.Fatal(err)
	}
	want := []string{`servicecidrs/ application/strategic-merge-patch+json {"metadata":{"$deleteFromPrimitiveList/finalizers":["networking.k8s.io/service-cidr-finalizer"]}}`}
	if got := writes(client.Actions()); !reflect.DeepEqual(got, want) {
		t.Fatalf("writes %q, want %q", got, want)
	}
}
