package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// namespace makes a namespace for one test and deletes it afterwards.
func namespace(t *testing.T) string {
	t.Helper()
	name := "e2e-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 60 {
		name = name[:60]
	}
	name = strings.TrimRight(name, "-")
	_, err := client.CoreV1().Namespaces().Create(context.Background(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace: %v", err)
	}
	// Pods need the default service account before the admission plugin
	// lets them in.
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().ServiceAccounts(name).Get(context.Background(), "default", metav1.GetOptions{})
		return err
	})
	t.Cleanup(func() {
		zero := int64(0)
		_ = client.CoreV1().Pods(name).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		_ = client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// simplePod is a busybox pod on the test node running script.
func simplePod(ns, name, script string) *v1.Pod {
	grace := int64(2)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1.PodSpec{
			NodeName:                      nodeName,
			TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: v1.PullNever,
				Command: []string{"sh", "-c", script},
			}},
		},
	}
}

func createPod(t *testing.T, p *v1.Pod) *v1.Pod {
	t.Helper()
	out, err := client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", p.Name, err)
	}
	return out
}

func getPod(t *testing.T, ns, name string) *v1.Pod {
	t.Helper()
	p, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod %s: %v", name, err)
	}
	return p
}

// waitPod waits until cond holds for the pod, printing its status when it
// does not.
func waitPod(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(*v1.Pod) bool) *v1.Pod {
	t.Helper()
	var last *v1.Pod
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		p, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			last = p
			if cond(p) {
				return p
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("pod %s/%s: not %s after %v; status: %s", ns, name, what, timeout, describeStatus(last))
	return nil
}

func describeStatus(p *v1.Pod) string {
	if p == nil {
		return "<none>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s", p.Status.Phase)
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, " %s=%s", c.Type, c.Status)
	}
	for _, cs := range append(append([]v1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		fmt.Fprintf(&b, " [%s restarts=%d ready=%v state=%+v last=%+v]", cs.Name, cs.RestartCount, cs.Ready, cs.State, cs.LastTerminationState)
	}
	evs, _ := client.CoreV1().Events(p.Namespace).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name})
	if evs != nil {
		for _, e := range evs.Items {
			fmt.Fprintf(&b, "\n  event %s %s: %s", e.Type, e.Reason, e.Message)
		}
	}
	return b.String()
}

func running(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning }

func ready(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func containerStatus(p *v1.Pod, name string) *v1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// events lists the reasons and messages of a pod's events.
func events(t *testing.T, ns, name string) []string {
	t.Helper()
	evs, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	var out []string
	for _, e := range evs.Items {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}

func hasEvent(evs []string, prefix string) bool {
	for _, e := range evs {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}
