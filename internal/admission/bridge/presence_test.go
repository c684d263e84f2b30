package bridge

import (
	"context"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestPresence(t *testing.T) {
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	inf := f.Admissionregistration().V1().ValidatingWebhookConfigurations().Informer()
	p, err := NewPresence(inf)
	if err != nil {
		t.Fatal(err)
	}
	if p.None() {
		t.Fatal("None before the informer synced: a plugin would be skipped while its configurations are unknown")
	}
	var nilPresence *Presence
	if nilPresence.None() {
		t.Fatal("a plugin without a presence count must always run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	waitFor(t, "synced and empty", func() bool { return p.None() })

	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "hooks"}}
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a configuration seen", func() bool { return !p.None() })
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	second := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "more"}}
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, second, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "hooks", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if p.None() {
		t.Fatal("None with one configuration left")
	}
	if err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "more", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "all configurations gone", func() bool { return p.None() })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
