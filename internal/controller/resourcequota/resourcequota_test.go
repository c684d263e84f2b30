package resourcequota

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orca-project/orca/internal/quota"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func pod(name string, phase corev1.PodPhase, cpu string, deadline bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: rl("cpu", cpu), Limits: rl("cpu", cpu)}}}},
		Status: corev1.PodStatus{Phase: phase}}
	if deadline {
		d := int64(30)
		p.Spec.ActiveDeadlineSeconds = &d
	}
	return p
}

func TestRecount(t *testing.T) {
	cases := []struct {
		name   string
		quota  corev1.ResourceQuotaSpec
		wantUs corev1.ResourceList
	}{
		{"compute and counts", corev1.ResourceQuotaSpec{Hard: rl("pods", "10", "requests.cpu", "4", "limits.cpu", "4", "cpu", "4", "count/pods", "10", "configmaps", "5", "count/secrets", "5", "services.nodeports", "3")},
			rl("pods", "2", "requests.cpu", "1500m", "limits.cpu", "1500m", "cpu", "1500m", "count/pods", "3", "configmaps", "2", "count/secrets", "0", "services.nodeports", "2")},
		{"terminating scope", corev1.ResourceQuotaSpec{Hard: rl("pods", "10"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}},
			rl("pods", "1")},
		{"scoped quota counts no services", corev1.ResourceQuotaSpec{Hard: rl("services", "10"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}},
			rl("services", "0")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"}, Spec: tc.quota}
			client := fake.NewSimpleClientset(q,
				pod("run", corev1.PodRunning, "1", false), pod("pend", corev1.PodPending, "500m", true), pod("done", corev1.PodSucceeded, "2", false),
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}},
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "other"}},
				&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 1}, {Port: 2}}}},
			)
			factory := informers.NewSharedInformerFactory(client, 0)
			c := New(client, factory, nil, slog.Default())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			factory.Start(ctx.Done())
			go func() { _ = c.Run(ctx, 1) }()
			waitFor(t, func() error {
				cur, err := client.CoreV1().ResourceQuotas("ns").Get(ctx, "q", metav1.GetOptions{})
				if err != nil {
					return err
				}
				if !quota.Equals(cur.Status.Hard, tc.quota.Hard) || !quota.Equals(cur.Status.Used, tc.wantUs) {
					return fmt.Errorf("status hard %v used %v, want used %v", cur.Status.Hard, cur.Status.Used, tc.wantUs)
				}
				return nil
			})
		})
	}
}

// TestReleaseOnDelete: a deleted pod's usage goes back to the quota.
func TestReleaseOnDelete(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"}, Spec: corev1.ResourceQuotaSpec{Hard: rl("pods", "5")}}
	client := fake.NewSimpleClientset(q, pod("a", corev1.PodRunning, "1", false), pod("b", corev1.PodRunning, "1", false))
	factory := informers.NewSharedInformerFactory(client, 0)
	c := New(client, factory, nil, slog.Default())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	go func() { _ = c.Run(ctx, 1) }()
	used := func(want string) func() error {
		return func() error {
			cur, err := client.CoreV1().ResourceQuotas("ns").Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if u := cur.Status.Used["pods"]; u.Cmp(resource.MustParse(want)) != 0 {
				return fmt.Errorf("used pods=%s, want %s", u.String(), want)
			}
			return nil
		}
	}
	waitFor(t, used("2"))
	if err := client.CoreV1().Pods("ns").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, used("1"))
	done := pod("b", corev1.PodSucceeded, "1", false)
	if _, err := client.CoreV1().Pods("ns").Update(ctx, done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, used("0"))
}

func waitFor(t *testing.T, f func() error) {
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
