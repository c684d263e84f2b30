package rootcacertpublisher

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func TestReconcile(t *testing.T) {
	good := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Annotations: map[string]string{DescriptionAnnotation: Description}, Labels: map[string]string{"mine": "yes"}},
		Data:       map[string]string{DataKey: ca},
	}
	edited := good.DeepCopy()
	edited.Data[DataKey] = "tampered"
	extraKey := good.DeepCopy()
	extraKey.Data["other"] = "x"
	noAnnotation := good.DeepCopy()
	noAnnotation.Annotations = nil
	for _, tt := range []struct {
		name string
		cur  *corev1.ConfigMap
		op   Op
	}{
		{"missing", nil, Create},
		{"as published", good, None},
		{"data edited", edited, Update},
		{"key added", extraKey, Update},
		{"annotation removed", noAnnotation, Update},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, op := Reconcile(tt.cur, ca)
			if op != tt.op {
				t.Fatalf("op = %s, want %s", op, tt.op)
			}
			if len(got.Data) != 1 || got.Data[DataKey] != ca || got.Annotations[DescriptionAnnotation] == "" || got.Name != ConfigMapName {
				t.Errorf("result = %+v", got)
			}
			if tt.cur != nil && got.Labels["mine"] != "yes" {
				t.Errorf("user's label dropped: %v", got.Labels)
			}
		})
	}
	if edited.Data[DataKey] != "tampered" {
		t.Error("Reconcile modified its input (a shared cache object)")
	}
}

func TestControllerPublishesAndRepairs(t *testing.T) {
	active := func(name string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	}
	terminating := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "going"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: "edited"}, Data: map[string]string{DataKey: "old"}}
	client := fake.NewClientset(active("default"), active("edited"), terminating, stale)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory, []byte(ca), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	go func() { _ = c.Run(ctx, 1) }()

	published := func(ns string) error {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, ConfigMapName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data[DataKey] != ca || cm.Annotations[DescriptionAnnotation] != Description {
			return fmt.Errorf("%s: configmap is %+v", ns, cm)
		}
		return nil
	}
	eventually(t, func() error { return published("default") })
	eventually(t, func() error { return published("edited") })

	// Deleted: recreated.
	if err := client.CoreV1().ConfigMaps("default").Delete(ctx, ConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error { return published("default") })

	// Edited: restored.
	cm, err := client.CoreV1().ConfigMaps("default").Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[DataKey] = "changed by hand"
	if _, err := client.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error { return published("default") })

	// A new namespace gets one too; a terminating one never does.
	if _, err := client.CoreV1().Namespaces().Create(ctx, active("later"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error { return published("later") })
	if _, err := client.CoreV1().ConfigMaps("going").Get(ctx, ConfigMapName, metav1.GetOptions{}); err == nil {
		t.Error("a terminating namespace got the CA ConfigMap")
	}
}

func eventually(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
