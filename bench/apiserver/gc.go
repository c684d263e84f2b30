package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// gcCascade measures the garbage collector: an owner with n dependents
// (ConfigMaps) is deleted, and the time runs until the last dependent is
// gone. The dependents are created first and the collector is given time
// to see them all, so only the collection itself is timed.
func gcCascade(ctx context.Context, c kubernetes.Interface, n int) (time.Duration, error) {
	const ns = "gcbench"
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("create namespace %s: %w", ns, err)
	}
	owner, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		return 0, fmt.Errorf("create owner: %w", err)
	}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("dep-%05d", i), Labels: map[string]string{"gcbench": "dependent"}, OwnerReferences: []metav1.OwnerReference{ref}}}
				if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create dependent: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	time.Sleep(2 * time.Second)
	start := time.Now()
	if err := c.CoreV1().ConfigMaps(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		return 0, fmt.Errorf("delete owner: %w", err)
	}
	deadline := start.Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		// Only the dependents: the namespace also gets its kube-root-ca.crt.
		list, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "gcbench=dependent"})
		if err != nil {
			return 0, fmt.Errorf("list dependents: %w", err)
		}
		if len(list.Items) == 0 {
			return time.Since(start), nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0, fmt.Errorf("%d dependents not collected within 5 minutes", n)
}
