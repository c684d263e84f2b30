package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestEndpointsFollowRealReadiness: a real pod's readiness probe moves its
// address between ready and not ready in the Endpoints and the slice of
// its service.
func TestEndpointsFollowRealReadiness(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	p := simplePod(ns, "web", "exec sleep 3600")
	p.Labels = map[string]string{"app": "web"}
	p.Spec.Containers[0].Ports = []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	p.Spec.Containers[0].ReadinessProbe = &v1.Probe{
		ProbeHandler:  v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "/tmp/ready"}}},
		PeriodSeconds: 1,
	}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
	}
	if _, err := client.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPod(t, p)
	ip := waitPod(t, ns, "web", time.Minute, "Running with an IP", func(p *v1.Pod) bool { return running(p) && p.Status.PodIP != "" }).Status.PodIP

	// state is "ready"/"notready"/"absent" in Endpoints, then in the slice.
	state := func() (string, error) {
		ep, err := client.CoreV1().Endpoints(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		e := "absent"
		for _, s := range ep.Subsets {
			for _, a := range s.Addresses {
				if a.IP == ip && len(s.Ports) == 1 && s.Ports[0].Port == 8080 {
					e = "ready"
				}
			}
			for _, a := range s.NotReadyAddresses {
				if a.IP == ip {
					e = "notready"
				}
			}
		}
		l, err := client.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
		if err != nil {
			return "", err
		}
		s := "absent"
		for _, sl := range l.Items {
			for _, x := range sl.Endpoints {
				if x.Addresses[0] == ip {
					s = map[bool]string{true: "ready", false: "notready"}[*x.Conditions.Ready]
				}
			}
		}
		return e + "/" + s, nil
	}
	expect := func(want string, timeout time.Duration) {
		t.Helper()
		eventually(t, timeout, func() error {
			got, err := state()
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("endpoints/slice: %s, want %s", got, want)
			}
			return nil
		})
	}
	expect("notready/notready", 30*time.Second)
	kubectlOK(t, "", "exec", "web", "-n", ns, "--", "touch", "/tmp/ready")
	expect("ready/ready", 30*time.Second)
	kubectlOK(t, "", "exec", "web", "-n", ns, "--", "rm", "/tmp/ready")
	expect("notready/notready", 30*time.Second)
}
