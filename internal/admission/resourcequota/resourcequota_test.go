package resourcequota

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/admission"
	"github.com/orca-project/orca/internal/admission/admissiontest"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// rq is a quota the controller has already counted.
func rq(name string, hard, used corev1.ResourceList, mut ...func(*corev1.ResourceQuota)) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}, Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
	for _, m := range mut {
		m(q)
	}
	return q
}

func pod(req, lim corev1.ResourceList, mut ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}}}}
	for _, m := range mut {
		m(p)
	}
	return p
}

var (
	podsGVR     = corev1.SchemeGroupVersion.WithResource("pods")
	servicesGVR = corev1.SchemeGroupVersion.WithResource("services")
	deployGVR   = appsv1.SchemeGroupVersion.WithResource("deployments")
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name     string
		quota    *corev1.ResourceQuota
		gvr      string
		obj      runtime.Object
		wantErr  string
		wantUsed corev1.ResourceList
	}{
		{"pod fits", rq("q", rl("pods", "2", "requests.cpu", "1"), rl("pods", "1", "requests.cpu", "200m")), "pods", pod(rl("cpu", "300m"), nil),
			"", rl("pods", "2", "requests.cpu", "500m")},
		{"pod count exceeded", rq("q", rl("pods", "10"), rl("pods", "10")), "pods", pod(nil, nil),
			`pods "p" is forbidden: exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10`, nil},
		{"cpu exceeded", rq("q", rl("requests.cpu", "1", "pods", "5"), rl("requests.cpu", "800m", "pods", "1")), "pods", pod(rl("cpu", "300m"), nil),
			`pods "p" is forbidden: exceeded quota: q, requested: requests.cpu=300m, used: requests.cpu=800m, limited: requests.cpu=1`, nil},
		{"must specify", rq("q", rl("requests.cpu", "1", "limits.memory", "1Gi"), rl("requests.cpu", "0", "limits.memory", "0")), "pods", pod(nil, nil),
			`pods "p" is forbidden: failed quota: q: must specify limits.memory for: c; requests.cpu for: c`, nil},
		{"status unknown", rq("q", rl("pods", "1"), nil), "pods", pod(nil, nil),
			`pods "p" is forbidden: status unknown for quota: q, resources: pods`, nil},
		{"cpu alias", rq("q", rl("cpu", "1"), rl("cpu", "0")), "pods", pod(rl("cpu", "2"), nil),
			`pods "p" is forbidden: exceeded quota: q, requested: cpu=2, used: cpu=0, limited: cpu=1`, nil},
		{"terminating scope skips other pods", rq("q", rl("pods", "0"), rl("pods", "0"), func(q *corev1.ResourceQuota) {
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}
		}), "pods", pod(nil, nil), "", rl("pods", "0")},
		{"terminating scope counts deadline pods", rq("q", rl("pods", "0"), rl("pods", "0"), func(q *corev1.ResourceQuota) {
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}
		}), "pods", pod(nil, nil, func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](10) }),
			`pods "p" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0`, nil},
		{"best effort scope", rq("q", rl("pods", "0"), rl("pods", "0"), func(q *corev1.ResourceQuota) {
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
		}), "pods", pod(rl("cpu", "1"), nil), "", rl("pods", "0")},
		{"not best effort scope", rq("q", rl("pods", "0"), rl("pods", "0"), func(q *corev1.ResourceQuota) {
			q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}
		}), "pods", pod(rl("cpu", "1"), nil), `pods "p" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0`, nil},
		{"priority class selector", rq("q", rl("pods", "0"), rl("pods", "0"), func(q *corev1.ResourceQuota) {
			q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}
		}), "pods", pod(nil, nil, func(p *corev1.Pod) { p.Spec.PriorityClassName = "high" }),
			`pods "p" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0`, nil},
		{"priority class selector other class", rq("q", rl("pods", "0"), rl("pods", "0"), func(q *corev1.ResourceQuota) {
			q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}
		}), "pods", pod(nil, nil, func(p *corev1.Pod) { p.Spec.PriorityClassName = "low" }), "", rl("pods", "0")},
		{"node ports", rq("q", rl("services.nodeports", "1", "services", "5"), rl("services.nodeports", "0", "services", "0")), "services",
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 1}, {Port: 2}}}},
			`services "s" is forbidden: exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1`, nil},
		{"load balancers", rq("q", rl("services.loadbalancers", "1"), rl("services.loadbalancers", "0")), "services",
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}},
			"", rl("services.loadbalancers", "1")},
		{"count of deployments", rq("q", rl("count/deployments.apps", "1"), rl("count/deployments.apps", "1")), "deployments",
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}},
			`deployments.apps "d" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1`, nil},
		{"configmaps legacy name", rq("q", rl("configmaps", "3"), rl("configmaps", "1")), "configmaps",
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, "", rl("configmaps", "2")},
		{"claim storage", rq("q", rl("requests.storage", "10Gi", "persistentvolumeclaims", "2"), rl("requests.storage", "8Gi", "persistentvolumeclaims", "0")), "persistentvolumeclaims",
			&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "5Gi")}}},
			`persistentvolumeclaims "c" is forbidden: exceeded quota: q, requested: requests.storage=5Gi, used: requests.storage=8Gi, limited: requests.storage=10Gi`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := admissiontest.New().Add(quotasGVR, tc.quota)
			gvr := corev1.SchemeGroupVersion.WithResource(tc.gvr)
			if tc.gvr == "deployments" {
				gvr = deployGVR
			}
			acc := tc.obj.(metav1.Object)
			a := &admission.Attributes{Operation: admission.Create, Resource: gvr, Namespace: "ns", Name: acc.GetName(), Object: tc.obj}
			err := New(objs).Validate(context.Background(), a)
			if tc.wantErr != "" {
				if !apierrors.IsForbidden(err) || err.Error() != tc.wantErr {
					t.Fatalf("got %v\nwant 403 %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cur, _ := objs.Get(context.Background(), quotasGVR, "ns", tc.quota.Name)
			if got := cur.(*corev1.ResourceQuota).Status.Used; !equal(got, tc.wantUsed) {
				t.Fatalf("used %v, want %v", got, tc.wantUsed)
			}
		})
	}
}

func equal(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if o, ok := b[k]; !ok || o.Cmp(v) != 0 {
			return false
		}
	}
	return true
}

func TestDryRunChargesNothing(t *testing.T) {
	objs := admissiontest.New().Add(quotasGVR, rq("q", rl("pods", "1"), rl("pods", "0")))
	a := &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: "ns", Name: "p", Object: pod(nil, nil), DryRun: true}
	if err := New(objs).Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	cur, _ := objs.Get(context.Background(), quotasGVR, "ns", "q")
	if u := cur.(*corev1.ResourceQuota).Status.Used["pods"]; !u.IsZero() {
		t.Fatalf("dry run charged pods=%s", u.String())
	}
}

func TestRefundWhenSecondQuotaRefuses(t *testing.T) {
	objs := admissiontest.New().
		Add(quotasGVR, rq("a", rl("pods", "5"), rl("pods", "0"))).
		Add(quotasGVR, rq("b", rl("pods", "1"), rl("pods", "1")))
	a := &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: "ns", Name: "p", Object: pod(nil, nil)}
	if err := New(objs).Validate(context.Background(), a); !apierrors.IsForbidden(err) {
		t.Fatalf("want 403, got %v", err)
	}
	cur, _ := objs.Get(context.Background(), quotasGVR, "ns", "a")
	if u := cur.(*corev1.ResourceQuota).Status.Used["pods"]; !u.IsZero() {
		t.Fatalf("quota a kept a charge of %s for a refused pod", u.String())
	}
}

func TestUpdateChargesGrowthOnly(t *testing.T) {
	objs := admissiontest.New().Add(quotasGVR, rq("q", rl("services.loadbalancers", "1", "services", "1"), rl("services.loadbalancers", "0", "services", "1")))
	old := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", ResourceVersion: "5"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}
	next := old.DeepCopy()
	next.Spec.Type = corev1.ServiceTypeLoadBalancer
	a := &admission.Attributes{Operation: admission.Update, Resource: servicesGVR, Namespace: "ns", Name: "s", Object: next, OldObject: old}
	if err := New(objs).Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	cur, _ := objs.Get(context.Background(), quotasGVR, "ns", "q")
	if got := cur.(*corev1.ResourceQuota).Status.Used; !equal(got, rl("services.loadbalancers", "1", "services", "1")) {
		t.Fatalf("used %v", got)
	}
}

// TestConcurrentCreates: the charge is a compare-and-swap, so however
// many creates race, no more than the limit are admitted.
func TestConcurrentCreates(t *testing.T) {
	objs := admissiontest.New().Add(quotasGVR, rq("q", rl("pods", "10"), rl("pods", "0")))
	p := New(objs)
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pp := pod(nil, nil)
			pp.Name = fmt.Sprintf("p%d", i)
			err := p.Validate(context.Background(), &admission.Attributes{Operation: admission.Create, Resource: podsGVR, Namespace: "ns", Name: pp.Name, Object: pp})
			switch {
			case err == nil:
				ok.Add(1)
			case apierrors.IsForbidden(err):
				refused.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 10 || refused.Load() != 40 {
		t.Fatalf("admitted %d, refused %d; want 10 and 40", ok.Load(), refused.Load())
	}
}

func TestPodUpdateNotCharged(t *testing.T) {
	objs := admissiontest.New().Add(quotasGVR, rq("q", rl("requests.cpu", "1"), rl("requests.cpu", "0")))
	old := pod(nil, nil)
	old.ResourceVersion = "3"
	next := old.DeepCopy()
	next.Labels = map[string]string{"a": "b"}
	a := &admission.Attributes{Operation: admission.Update, Resource: podsGVR, Namespace: "ns", Name: "p", Object: next, OldObject: old}
	if err := New(objs).Validate(context.Background(), a); err != nil {
		t.Fatalf("a label change on a pod older than the quota: %v", err)
	}
}

// A resize is charged what it grows, and refused past the quota, as
// upstream counts pods/resize.
func TestPodResizeCharged(t *testing.T) {
	objs := admissiontest.New().Add(quotasGVR, rq("q", rl("requests.cpu", "1"), rl("requests.cpu", "400m")))
	old := pod(rl("cpu", "400m"), nil)
	old.ResourceVersion = "3"
	grow := func(cpu string) *admission.Attributes {
		next := old.DeepCopy()
		next.Spec.Containers[0].Resources.Requests = rl("cpu", cpu)
		return &admission.Attributes{Operation: admission.Update, Resource: podsGVR, Subresource: "resize", Namespace: "ns", Name: "p", Object: next, OldObject: old}
	}
	if err := New(objs).Validate(context.Background(), grow("1500m")); !apierrors.IsForbidden(err) {
		t.Fatalf("resize past the quota: %v", err)
	}
	if err := New(objs).Validate(context.Background(), grow("600m")); err != nil {
		t.Fatal(err)
	}
	cur, _ := objs.Get(context.Background(), quotasGVR, "ns", "q")
	if got := cur.(*corev1.ResourceQuota).Status.Used; !equal(got, rl("requests.cpu", "600m")) {
		t.Fatalf("used %v", got)
	}
	other := grow("2")
	other.Subresource = "ephemeralcontainers"
	if err := New(objs).Validate(context.Background(), other); err != nil {
		t.Fatalf("other subresources are not charged: %v", err)
	}
}
