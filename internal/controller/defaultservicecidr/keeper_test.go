package defaultservicecidr

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

var flag = []string{"10.43.0.0/16"}

func defaultCIDR(cidrs []string, ready metav1.ConditionStatus) *networkingv1.ServiceCIDR {
	sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	if ready != "" {
		sc.Status.Conditions = []metav1.Condition{{Type: networkingv1.ServiceCIDRConditionReady, Status: ready, Reason: "Terminating", Message: "There are still IPAddresses referencing the ServiceCIDR"}}
	}
	return sc
}

func TestDecide(t *testing.T) {
	deleting := defaultCIDR(flag, "")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	tests := []struct {
		name string
		sc   *networkingv1.ServiceCIDR
		want Action
	}{
		{"missing", nil, Create},
		{"new", defaultCIDR(flag, ""), SetReady},
		{"unknown", defaultCIDR(flag, metav1.ConditionUnknown), SetReady},
		{"ready", defaultCIDR(flag, metav1.ConditionTrue), Nothing},
		{"not ready although it matches", defaultCIDR(flag, metav1.ConditionFalse), ReportNotReady},
		{"another range", defaultCIDR([]string{"10.96.0.0/12"}, ""), ReportMismatch},
		{"another range, ready", defaultCIDR([]string{"10.96.0.0/12"}, metav1.ConditionTrue), ReportMismatch},
		{"being deleted", deleting, Nothing},
	}
	for _, tc := range tests {
		if got := Decide(flag, tc.sc); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSyncCreatesAndMarksReady(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	k := New(ctx, client, flag, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for range 2 {
		if err := k.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := client.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	if len(sc.Spec.CIDRs) != 1 || sc.Spec.CIDRs[0] != flag[0] || ready == nil || ready.Status != metav1.ConditionTrue || ready.Message != ReadyMessage {
		t.Fatalf("default ServiceCIDR %+v", sc)
	}
	var writes []string
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" {
			writes = append(writes, a.GetVerb()+" "+a.GetResource().Resource+"/"+a.GetSubresource())
		}
	}
	if want := []string{"create servicecidrs/", "patch servicecidrs/status"}; len(writes) != 2 || writes[0] != want[0] || writes[1] != want[1] {
		t.Errorf("writes %q, want %q: a second sync of a ready object writes nothing", writes, want)
	}
}

// A default ServiceCIDR of another range is the administrator's: the
// keeper neither changes nor marks it.
func TestSyncLeavesAnotherRange(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(defaultCIDR([]string{"10.96.0.0/12"}, ""))
	k := New(ctx, client, flag, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := k.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" && a.GetResource().Resource == "servicecidrs" {
			t.Errorf("unexpected %s %s/%s", a.GetVerb(), a.GetResource().Resource, a.GetSubresource())
		}
	}
}
