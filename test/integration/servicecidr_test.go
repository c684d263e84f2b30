package integration

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestServiceCIDRsAndIPAddresses: the default ServiceCIDR reflects the
// server's range and is Ready; every cluster IP has its IPAddress from
// the Service's creation to its deletion, as kubectl shows them; the
// conformance operations on both resources; and a ServiceCIDR being
// deleted is held by its finalizer while an allocated address lies in it
// alone.
func TestServiceCIDRsAndIPAddresses(t *testing.T) {
	ctx := context.Background()

	t.Run("default ServiceCIDR", func(t *testing.T) {
		out := mustKubectl(t, "", "get", "servicecidrs")
		if !regexp.MustCompile(`(?m)^NAME\s+CIDRS\s+AGE$`).MatchString(out) || !regexp.MustCompile(`(?m)^kubernetes\s+10\.43\.0\.0/16\s+\S+$`).MatchString(out) {
			t.Fatalf("kubectl get servicecidrs:\n%s", out)
		}
		// Ready as the API server's keeper sets it, then as the
		// controller manager's service-cidr controller restates it, with
		// its finalizer.
		eventually(t, 30*time.Second, func() error {
			sc, err := client.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(sc.Status.Conditions) != 1 || sc.Status.Conditions[0].Type != "Ready" || sc.Status.Conditions[0].Status != metav1.ConditionTrue ||
				len(sc.Finalizers) != 1 || sc.Finalizers[0] != "networking.k8s.io/service-cidr-finalizer" {
				return fmt.Errorf("conditions %+v finalizers %v", sc.Status.Conditions, sc.Finalizers)
			}
			return nil
		})
		// The conformance test reads it through /status too.
		var viaStatus networkingv1.ServiceCIDR
		if err := client.NetworkingV1().RESTClient().Get().Resource("servicecidrs").Name("kubernetes").SubResource("status").Do(ctx).Into(&viaStatus); err != nil || viaStatus.Spec.CIDRs[0] != "10.43.0.0/16" {
			t.Fatalf("GET servicecidrs/kubernetes/status: %v %+v", err, viaStatus.Spec)
		}
	})

	t.Run("IPAddress per cluster IP", func(t *testing.T) {
		ns := newNamespace(t, client, "ipaddr")
		if out := mustKubectl(t, "", "get", "ipaddresses"); !regexp.MustCompile(`(?m)^NAME\s+PARENTREF$`).MatchString(out) ||
			!regexp.MustCompile(`(?m)^10\.43\.0\.1\s+services/default/kubernetes$`).MatchString(out) {
			t.Fatalf("kubectl get ipaddresses:\n%s", out)
		}
		mustKubectl(t, "", "-n", ns, "create", "service", "clusterip", "web", "--tcp=80:8080")
		ip := mustKubectl(t, "", "-n", ns, "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")
		out := mustKubectl(t, "", "get", "ipaddresses")
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(ip) + `\s+services/` + ns + `/web$`).MatchString(out) {
			t.Fatalf("no IPAddress %s for services/%s/web:\n%s", ip, ns, out)
		}
		labels := mustKubectl(t, "", "get", "ipaddress", ip, "-o", "jsonpath={.metadata.labels}")
		if labels != `{"ipaddress.kubernetes.io/ip-family":"IPv4","ipaddress.kubernetes.io/managed-by":"ipallocator.k8s.io"}` {
			t.Errorf("labels %s", labels)
		}
		mustKubectl(t, "", "-n", ns, "delete", "service", "web")
		res := runKubectl(t, "", "get", "ipaddress", ip)
		if res.Code == 0 || !strings.Contains(res.Stderr, fmt.Sprintf(`ipaddresses.networking.k8s.io "%s" not found`, ip)) {
			t.Fatalf("IPAddress %s after its service was deleted: %+v", ip, res)
		}
	})

	t.Run("IPAddress API operations", func(t *testing.T) {
		ips := client.NetworkingV1().IPAddresses()
		ref := &networkingv1.ParentReference{Group: "mygroup", Resource: "myresources", Namespace: "foo", Name: "bar"}
		for name, typ := range map[string]string{"255.255.255.255": "broadcast", "fe80::42:1dff:fe84:f9e2": "link-local"} {
			if _, err := ips.Create(ctx, &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"type": typ}},
				Spec: networkingv1.IPAddressSpec{ParentRef: ref}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		patched, err := ips.Patch(ctx, "255.255.255.255", types.MergePatchType, []byte(`{"metadata":{"annotations":{"patched":"true"}}}`), metav1.PatchOptions{})
		if err != nil || patched.Annotations["patched"] != "true" {
			t.Fatalf("patch: %v", err)
		}
		if _, err := ips.Patch(ctx, "255.255.255.255", types.MergePatchType, []byte(`{"spec":{"parentRef":{"name":"baz"}}}`), metav1.PatchOptions{}); !apierrors.IsInvalid(err) ||
			!strings.Contains(err.Error(), "spec.parentRef: Invalid value") || !strings.Contains(err.Error(), "field is immutable") {
			t.Errorf("moving the parent: %v", err)
		}
		_, err = ips.Create(ctx, &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.043.0.1"}, Spec: networkingv1.IPAddressSpec{ParentRef: ref}}, metav1.CreateOptions{})
		wantStatus(t, err, apierrors.IsInvalid, `metadata.name: Invalid value: "10.043.0.1"`)
		list, err := ips.List(ctx, metav1.ListOptions{LabelSelector: "type=broadcast"})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("list by label: %v %d", err, len(list.Items))
		}
		if err := ips.Delete(ctx, "255.255.255.255", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := ips.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "type=link-local"}); err != nil {
			t.Fatal(err)
		}
		if list, err := ips.List(ctx, metav1.ListOptions{LabelSelector: "type"}); err != nil || len(list.Items) != 0 {
			t.Fatalf("after deletion: %v %d", err, len(list.Items))
		}
	})

	t.Run("deletion held while in use", func(t *testing.T) {
		scs := client.NetworkingV1().ServiceCIDRs()
		_, err := scs.Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.99.0.0/24"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, func() error {
			sc, err := scs.Get(ctx, "extra", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(sc.Finalizers) == 0 || len(sc.Status.Conditions) == 0 || sc.Status.Conditions[0].Message != "Kubernetes Service CIDR is ready" {
				return fmt.Errorf("finalizers %v conditions %+v", sc.Finalizers, sc.Status.Conditions)
			}
			return nil
		})
		// An address of the allocator that only this range contains.
		held := &networkingv1.IPAddress{
			ObjectMeta: metav1.ObjectMeta{Name: "10.99.0.5", Labels: map[string]string{networkingv1.LabelManagedBy: "ipallocator.k8s.io", networkingv1.LabelIPAddressFamily: "IPv4"}},
			Spec:       networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "held"}},
		}
		if _, err := client.NetworkingV1().IPAddresses().Create(ctx, held, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := scs.Delete(ctx, "extra", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, func() error {
			sc, err := scs.Get(ctx, "extra", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if c := sc.Status.Conditions; len(c) != 1 || c[0].Status != metav1.ConditionFalse || c[0].Reason != "Terminating" {
				return fmt.Errorf("conditions %+v", c)
			}
			return nil
		})
		if err := client.NetworkingV1().IPAddresses().Delete(ctx, held.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Gone after upstream's 10 s grace.
		eventually(t, 30*time.Second, func() error {
			if _, err := scs.Get(ctx, "extra", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
	})
}
