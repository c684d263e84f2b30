package apiserver

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// BenchmarkWrite measures the write path through the whole handler and a
// real etcd, with protobuf clients, in one process: the server's own cost
// per write and its allocations, without the noise of a second process
// sharing the machine. `make bench` measures the same writes from
// outside; this one isolates a step's effect on allocations.
//
//	go test -run '^$' -bench BenchmarkWrite -benchmem ./internal/apiserver/
func BenchmarkWrite(b *testing.B) {
	ts := startTestServer(b, Config{})
	cfg := rest.CopyConfig(ts.config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.QPS, cfg.Burst = 1e6, 1e6
	c := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	payload := strings.Repeat("x", 256)
	var seq atomic.Int64
	name := func(prefix string) string { return fmt.Sprintf("%s-%d", prefix, seq.Add(1)) }
	configMap := func(n string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"bench": "yes"}},
			Data:       map[string]string{"payload": payload},
		}
	}
	parallel := func(b *testing.B, op func() error) {
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("CreateConfigMap", func(b *testing.B) {
		parallel(b, func() error {
			_, err := c.CoreV1().ConfigMaps("bench").Create(ctx, configMap(name("cm")), metav1.CreateOptions{})
			return err
		})
	})
	// Updates and applies go round 100 existing objects.
	for i := 0; i < 100; i++ {
		if _, err := c.CoreV1().ConfigMaps("bench").Create(ctx, configMap(fmt.Sprintf("upd-%d", i)), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("UpdateConfigMap", func(b *testing.B) {
		parallel(b, func() error {
			i := seq.Add(1)
			cm := configMap(fmt.Sprintf("upd-%d", i%100))
			cm.Data["n"] = fmt.Sprint(i)
			_, err := c.CoreV1().ConfigMaps("bench").Update(ctx, cm, metav1.UpdateOptions{})
			if err != nil && strings.Contains(err.Error(), "the object has been modified") {
				return nil // another worker wrote it first: still a full write path
			}
			return err
		})
	})
	b.Run("ApplyConfigMap", func(b *testing.B) {
		parallel(b, func() error {
			i := seq.Add(1)
			ac := corev1ac.ConfigMap(fmt.Sprintf("upd-%d", i%100), "bench").WithData(map[string]string{"applied": fmt.Sprint(i)})
			_, err := c.CoreV1().ConfigMaps("bench").Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "bench-apply"})
			return err
		})
	})
	b.Run("CreatePod", func(b *testing.B) {
		parallel(b, func() error {
			_, err := c.CoreV1().Pods("bench").Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name("pod"), Labels: map[string]string{"app": "bench"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
					Command: []string{"sleep", "3600"}, Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}},
			}, metav1.CreateOptions{})
			return err
		})
	})
}
