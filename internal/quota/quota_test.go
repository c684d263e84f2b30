package quota

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestListMath(t *testing.T) {
	if got := PrettyPrint(rl("pods", "1", "cpu", "500m")); got != "cpu=500m,pods=1" {
		t.Fatalf("PrettyPrint: %q", got)
	}
	if ok, ex := LessThanOrEqual(rl("pods", "3", "cpu", "1"), rl("pods", "2", "memory", "1")); ok || len(ex) != 1 || ex[0] != "pods" {
		t.Fatalf("LessThanOrEqual: %v %v", ok, ex)
	}
	if got := SubtractWithNonNegativeResult(rl("cpu", "1", "pods", "1"), rl("cpu", "2", "memory", "1")); !Equals(got, rl("cpu", "0", "pods", "1", "memory", "0")) {
		t.Fatalf("Subtract: %v", got)
	}
	if got := Add(rl("cpu", "1"), rl("cpu", "500m", "pods", "1")); !Equals(got, rl("cpu", "1500m", "pods", "1")) {
		t.Fatalf("Add: %v", got)
	}
	if got := RemoveZeros(rl("cpu", "0", "pods", "1")); !Equals(got, rl("pods", "1")) {
		t.Fatalf("RemoveZeros: %v", got)
	}
}

func TestUsage(t *testing.T) {
	now := metav1.NewTime(time.Now().Add(-time.Hour))
	grace := int64(30)
	cases := []struct {
		name string
		gr   schema.GroupResource
		obj  runtime.Object
		want corev1.ResourceList
	}{
		{"running pod", podsGR, &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: rl("cpu", "250m", "memory", "64Mi", "example.com/gpu", "1", "hugepages-2Mi", "2Mi"), Limits: rl("cpu", "1")}}}}},
			rl("count/pods", "1", "pods", "1", "cpu", "250m", "requests.cpu", "250m", "limits.cpu", "1", "memory", "64Mi", "requests.memory", "64Mi",
				"requests.example.com/gpu", "1", "hugepages-2Mi", "2Mi", "requests.hugepages-2Mi", "2Mi")},
		{"finished pod", podsGR, &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}}, rl("count/pods", "1")},
		{"pod overdue for deletion", podsGR, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now, DeletionGracePeriodSeconds: &grace}}, rl("count/pods", "1")},
		{"load balancer", servicesGR, &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 1}}}},
			rl("count/services", "1", "services", "1", "services.loadbalancers", "1", "services.nodeports", "1")},
		{"claim with class", claimsGR, &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptrTo("fast"),
			Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")}}},
			rl("count/persistentvolumeclaims", "1", "persistentvolumeclaims", "1", "requests.storage", "1Gi",
				"fast.storageclass.storage.k8s.io/requests.storage", "1Gi", "fast.storageclass.storage.k8s.io/persistentvolumeclaims", "1")},
		{"secret", schema.GroupResource{Resource: "secrets"}, &corev1.Secret{}, rl("count/secrets", "1", "secrets", "1")},
		{"deployment", schema.GroupResource{Group: "apps", Resource: "deployments"}, &corev1.ConfigMap{}, rl("count/deployments.apps", "1")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ForResource(tc.gr).Usage(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if !Equals(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
