package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
)

// admissionNamespace creates a namespace of its own for a test and waits
// for its default service account, which every pod needs.
func admissionNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ctx := context.Background()
	ns := prefix + "-" + utilrand.String(5)
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	return ns
}

func simplePod(name string, res corev1.ResourceRequirements) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: res}},
	}}
}

func quantities(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// createQuota creates a quota and waits until the quota controller has
// counted it: until then admission refuses what it covers.
func createQuota(t *testing.T, ns string, hard corev1.ResourceList) {
	t.Helper()
	ctx := context.Background()
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	if _, err := client.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		cur, err := client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for name := range hard {
			if _, ok := cur.Status.Used[name]; !ok {
				return fmt.Errorf("quota not counted yet: %v", cur.Status)
			}
		}
		return nil
	})
}

func wantForbidden(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("want 403, got %v", err)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Fatalf("message %q does not contain %q", err.Error(), msg)
	}
}

func TestAdmissionQuotaConcurrentCreates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := admissionNamespace(t, "quota-race")
	createQuota(t, ns, quantities("pods", "10"))
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		created, denied int
		other           []error
		sample          string
	)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := client.CoreV1().Pods(ns).Create(ctx, simplePod(fmt.Sprintf("p%d", i), corev1.ResourceRequirements{}), metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case apierrors.IsForbidden(err):
				denied++
				sample = err.Error()
			default:
				other = append(other, err)
			}
		}()
	}
	wg.Wait()
	if len(other) > 0 || created != 10 || denied != 40 {
		t.Fatalf("created %d, refused %d, other errors %v; want 10 and 40", created, denied, other)
	}
	if !strings.Contains(sample, "exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10") {
		t.Fatalf("refusal message: %s", sample)
	}
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 10 {
		t.Fatalf("stored pods: %d (%v), want 10", len(pods.Items), err)
	}
	q, err := client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if used := q.Status.Used[corev1.ResourcePods]; used.Value() != 10 {
		t.Fatalf("status.used.pods = %s, want 10", used.String())
	}
}

func TestAdmissionQuotaRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := admissionNamespace(t, "quota-release")
	// kube-root-ca.crt counts against count/configmaps, upstream too: wait
	// for it so the quota's first count includes it, and allow one more.
	waitRootCA(t, client, ns)
	createQuota(t, ns, quantities("pods", "1", "requests.cpu", "1", "count/configmaps", "2"))
	res := corev1.ResourceRequirements{Requests: quantities("cpu", "500m")}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, simplePod("a", res), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := client.CoreV1().Pods(ns).Create(ctx, simplePod("b", res), metav1.CreateOptions{})
	wantForbidden(t, err, "exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1")
	_, err = client.CoreV1().Pods(ns).Create(ctx, simplePod("c", corev1.ResourceRequirements{}), metav1.CreateOptions{})
	wantForbidden(t, err, "failed quota: q: must specify requests.cpu for: c")

	if err := client.CoreV1().Pods(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		_, err := client.CoreV1().Pods(ns).Create(ctx, simplePod("b", res), metav1.CreateOptions{})
		return err
	})

	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm("one"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = client.CoreV1().ConfigMaps(ns).Create(ctx, cm("two"), metav1.CreateOptions{})
	wantForbidden(t, err, "exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2")
}

func TestAdmissionLimitRange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := admissionNamespace(t, "limitrange")
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type:           corev1.LimitTypeContainer,
		Default:        quantities("cpu", "500m", "memory", "256Mi"),
		DefaultRequest: quantities("cpu", "100m", "memory", "128Mi"),
		Max:            quantities("cpu", "1"),
	}}}}
	if _, err := client.CoreV1().LimitRanges(ns).Create(ctx, lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The plugin reads LimitRanges from the watch cache; wait for it.
	eventually(t, 10*time.Second, func() error {
		p, err := client.CoreV1().Pods(ns).Create(ctx, simplePod("probe", corev1.ResourceRequirements{}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		if len(p.Spec.Containers[0].Resources.Limits) == 0 {
			return fmt.Errorf("no defaults yet")
		}
		return nil
	})
	p, err := client.CoreV1().Pods(ns).Create(ctx, simplePod("defaulted", corev1.ResourceRequirements{}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := stored.Spec.Containers[0].Resources
	if r.Requests.Cpu().String() != "100m" || r.Requests.Memory().String() != "128Mi" || r.Limits.Cpu().String() != "500m" || r.Limits.Memory().String() != "256Mi" {
		t.Fatalf("stored resources %+v", r)
	}
	if a := stored.Annotations["kubernetes.io/limit-ranger"]; a != "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c" {
		t.Fatalf("annotation %q", a)
	}
	_, err = client.CoreV1().Pods(ns).Create(ctx, simplePod("big", corev1.ResourceRequirements{Limits: quantities("cpu", "2")}), metav1.CreateOptions{})
	wantForbidden(t, err, "maximum cpu usage per Container is 1, but limit is 2")
}

func TestAdmissionPodDefaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := admissionNamespace(t, "poddefaults")
	pod := simplePod("p", corev1.ResourceRequirements{})
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stored, err := client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Spec.ServiceAccountName != "default" {
		t.Fatalf("serviceAccountName %q", stored.Spec.ServiceAccountName)
	}
	var vol *corev1.Volume
	for i := range stored.Spec.Volumes {
		if strings.HasPrefix(stored.Spec.Volumes[i].Name, "kube-api-access-") {
			vol = &stored.Spec.Volumes[i]
		}
	}
	if vol == nil || vol.Projected == nil || len(vol.Projected.Sources) != 3 ||
		*vol.Projected.Sources[0].ServiceAccountToken.ExpirationSeconds != 3607 ||
		vol.Projected.Sources[1].ConfigMap.Name != "kube-root-ca.crt" ||
		vol.Projected.Sources[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" {
		t.Fatalf("token volume: %+v", stored.Spec.Volumes)
	}
	for _, c := range append(stored.Spec.InitContainers, stored.Spec.Containers...) {
		found := false
		for _, m := range c.VolumeMounts {
			if m.Name == vol.Name && m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount" && m.ReadOnly {
				found = true
			}
		}
		if !found {
			t.Fatalf("container %s does not mount the token: %+v", c.Name, c.VolumeMounts)
		}
	}
	tols := map[string]int64{}
	for _, tol := range stored.Spec.Tolerations {
		if tol.Effect == corev1.TaintEffectNoExecute && tol.Operator == corev1.TolerationOpExists && tol.TolerationSeconds != nil {
			tols[tol.Key] = *tol.TolerationSeconds
		}
	}
	if tols[corev1.TaintNodeNotReady] != 300 || tols[corev1.TaintNodeUnreachable] != 300 {
		t.Fatalf("tolerations %+v", stored.Spec.Tolerations)
	}
	if stored.Spec.Priority == nil || *stored.Spec.Priority != 0 {
		t.Fatalf("priority %v, want 0", stored.Spec.Priority)
	}

	noMount := simplePod("nomount", corev1.ResourceRequirements{})
	noMount.Spec.AutomountServiceAccountToken = ptr.To(false)
	out, err := client.CoreV1().Pods(ns).Create(ctx, noMount, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Spec.Volumes) != 0 {
		t.Fatalf("automount false still mounted %+v", out.Spec.Volumes)
	}

	missing := simplePod("missing", corev1.ResourceRequirements{})
	missing.Spec.ServiceAccountName = "nope"
	_, err = client.CoreV1().Pods(ns).Create(ctx, missing, metav1.CreateOptions{})
	wantForbidden(t, err, fmt.Sprintf(`error looking up service account %s/nope: serviceaccount "nope" not found`, ns))
}

func TestAdmissionPriority(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := admissionNamespace(t, "priority")
	for name, want := range map[string]int32{"system-cluster-critical": 2000000000, "system-node-critical": 2000001000} {
		pod := simplePod("p-"+name, corev1.ResourceRequirements{})
		pod.Spec.PriorityClassName = name
		out, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Spec.Priority == nil || *out.Spec.Priority != want || out.Spec.PreemptionPolicy == nil || *out.Spec.PreemptionPolicy != corev1.PreemptLowerPriority {
			t.Fatalf("%s: priority %v policy %v", name, out.Spec.Priority, out.Spec.PreemptionPolicy)
		}
	}
	unknown := simplePod("unknown", corev1.ResourceRequirements{})
	unknown.Spec.PriorityClassName = "no-such-class"
	_, err := client.CoreV1().Pods(ns).Create(ctx, unknown, metav1.CreateOptions{})
	wantForbidden(t, err, "no PriorityClass with name no-such-class was found")

	own := simplePod("own", corev1.ResourceRequirements{})
	own.Spec.Priority = ptr.To[int32](10)
	_, err = client.CoreV1().Pods(ns).Create(ctx, own, metav1.CreateOptions{})
	wantForbidden(t, err, "the integer value of priority (10) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name")
}

func TestAdmissionTerminatingNamespace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := "terminating-" + utilrand.String(5)
	// A finalizer of our own keeps the namespace Terminating for as long
	// as the test needs.
	const hold = "orca.test/hold"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Finalizers: []string{hold}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = client.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	if err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur.Status.Phase != corev1.NamespaceTerminating {
		t.Skipf("namespace deletion does not set phase Terminating yet (phase %q)", cur.Status.Phase)
	}
	var cerr error
	eventually(t, 10*time.Second, func() error {
		_, cerr = client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
		if cerr == nil {
			return fmt.Errorf("created content in a terminating namespace")
		}
		return nil
	})
	wantForbidden(t, cerr, fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", ns))
	se, ok := cerr.(apierrors.APIStatus)
	if !ok || se.Status().Details == nil || len(se.Status().Details.Causes) == 0 || se.Status().Details.Causes[0].Type != corev1.NamespaceTerminatingCause {
		t.Fatalf("want a NamespaceTerminating cause: %#v", cerr)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, "kube-system", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsForbidden(err) {
		t.Fatalf("deleting kube-system: want 403, got %v", err)
	}
}
