package integration

// The API operations of upstream's conformance specs that exercise the API
// server alone, run step by step against the shared server.

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// TestStatusWritesKeepMetadata follows "CronJob should support CronJob API
// operations" and "Job should apply changes to a job status": a write to
// /status changes the status and the metadata it carries (annotations,
// labels), never the spec. Deployments are upstream's exception for labels.
func TestStatusWritesKeepMetadata(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "statusmeta")
	cjs := client.BatchV1().CronJobs(ns)
	cj, err := cjs.Create(ctx, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "test-api", Labels: map[string]string{"special-label": ns}},
		Spec: batchv1.CronJobSpec{
			Schedule: "* */1 * * ?", ConcurrencyPolicy: batchv1.AllowConcurrent, Suspend: ptr.To(true),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
			}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now1 := metav1.Now().Rfc3339Copy()
	st, _ := json.Marshal(batchv1.CronJobStatus{LastScheduleTime: &now1})
	patched, err := cjs.Patch(ctx, cj.Name, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"patchedstatus":"true"}},"spec":{"schedule":"@daily"},"status":`+string(st)+`}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if !patched.Status.LastScheduleTime.Equal(&now1) || patched.Annotations["patchedstatus"] != "true" {
		t.Errorf("status patch: lastScheduleTime %v annotations %v", patched.Status.LastScheduleTime, patched.Annotations)
	}
	if patched.Spec.Schedule != "* */1 * * ?" {
		t.Errorf("status patch changed the spec: %q", patched.Spec.Schedule)
	}
	now2 := metav1.NewTime(now1.Add(time.Minute))
	patched.Status.LastScheduleTime = &now2
	patched.Labels["updated"] = "status"
	updated, err := cjs.UpdateStatus(ctx, patched, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !updated.Status.LastScheduleTime.Equal(&now2) || updated.Labels["updated"] != "status" {
		t.Errorf("status update: lastScheduleTime %v labels %v", updated.Status.LastScheduleTime, updated.Labels)
	}
	dyn := dynamic.NewForConfigOrDie(restCfg)
	got, err := dyn.Resource(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}).Namespace(ns).Get(ctx, cj.Name, metav1.GetOptions{}, "status")
	if err != nil || got.GetUID() != cj.UID {
		t.Errorf("get /status: %v %v", err, got)
	}

	job, err := client.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "status"},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jst, _ := json.Marshal(batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: "CustomConditionType", Status: corev1.ConditionTrue, LastTransitionTime: now1}}})
	pj, err := client.BatchV1().Jobs(ns).Patch(ctx, job.Name, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"patchedstatus":"true"}},"status":`+string(jst)+`}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if pj.Annotations["patchedstatus"] != "true" || len(pj.Status.Conditions) == 0 {
		t.Errorf("job status patch: annotations %v conditions %v", pj.Annotations, pj.Status.Conditions)
	}

	// Upstream's Deployment status strategy keeps the stored labels, but
	// lets annotations through.
	d, err := client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"a": "1"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pd, err := client.AppsV1().Deployments(ns).Patch(ctx, d.Name, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"a":"2"},"annotations":{"x":"y"}},"status":{"observedGeneration":1}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if pd.Labels["a"] != "1" || pd.Annotations["x"] != "y" {
		t.Errorf("deployment status patch: labels %v (must stay) annotations %v (must change)", pd.Labels, pd.Annotations)
	}
}

// TestServiceStatusLifecycle follows "Services should complete a service
// status lifecycle".
func TestServiceStatusLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "svcstatus")
	svcs := client.CoreV1().Services(ns)
	list, err := svcs.List(ctx, metav1.ListOptions{LabelSelector: "test-service-static=true"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := svcs.Watch(ctx, metav1.ListOptions{LabelSelector: "test-service-static=true", ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	waitFor := func(what string, typ watch.EventType, ok func(*corev1.Service) bool) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case ev := <-w.ResultChan():
				if s, isSvc := ev.Object.(*corev1.Service); isSvc && ev.Type == typ && ok(s) {
					return
				}
			case <-timeout:
				t.Fatalf("no watch event: %s", what)
			}
		}
	}
	_, err = svcs.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "test-service", Labels: map[string]string{"test-service-static": "true"}},
		Spec: corev1.ServiceSpec{
			Type:              corev1.ServiceTypeLoadBalancer,
			Ports:             []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80)}},
			LoadBalancerClass: ptr.To("example.com/internal-vip"),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor("added", watch.Added, func(*corev1.Service) bool { return true })

	dyn := dynamic.NewForConfigOrDie(restCfg)
	if _, err := dyn.Resource(corev1.SchemeGroupVersion.WithResource("services")).Namespace(ns).Get(ctx, "test-service", metav1.GetOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	lb, _ := json.Marshal(corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.1"}}})
	_, err = svcs.Patch(ctx, "test-service", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"patchedstatus":"true"}},"status":{"loadBalancer":`+string(lb)+`}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	waitFor("status patched", watch.Modified, func(s *corev1.Service) bool {
		return s.Annotations["patchedstatus"] == "true" && len(s.Status.LoadBalancer.Ingress) == 1 && s.Status.LoadBalancer.Ingress[0].IP == "203.0.113.1"
	})

	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := svcs.Get(ctx, "test-service", metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Status.Conditions = append(s.Status.Conditions, metav1.Condition{
			Type: "StatusUpdate", Status: metav1.ConditionTrue, Reason: "E2E", Message: "Set from e2e test",
			LastTransitionTime: metav1.Now().Rfc3339Copy(),
		})
		_, err = svcs.UpdateStatus(ctx, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor("status updated", watch.Modified, func(s *corev1.Service) bool {
		for _, c := range s.Status.Conditions {
			if c.Type == "StatusUpdate" && c.Reason == "E2E" && c.Message == "Set from e2e test" {
				return s.Annotations["patchedstatus"] == "true"
			}
		}
		return false
	})

	patch, _ := json.Marshal(corev1.Service{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"test-service": "patched"}}})
	if _, err := svcs.Patch(ctx, "test-service", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("patched", watch.Modified, func(s *corev1.Service) bool { return s.Labels["test-service"] == "patched" })
	if err := svcs.Delete(ctx, "test-service", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("deleted", watch.Deleted, func(s *corev1.Service) bool { return s.Labels["test-service-static"] == "true" })
}

// TestPodGeneration follows "[sig-node] Pod Generation": generation starts
// at 1 whatever the client sends, moves with every spec change (not with
// metadata, nor with a generation the client sets) and with the start of
// a graceful deletion.
func TestPodGeneration(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "podgen")
	pods := client.CoreV1().Pods(ns)
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-generation", Generation: 100},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers:     []corev1.Container{{Name: "c", Image: "busybox"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Generation != 1 {
		t.Fatalf("generation on create: %d", pod.Generation)
	}
	steps := []struct {
		name   string
		update func(*corev1.Pod)
		bump   bool
	}{
		{"empty update", func(*corev1.Pod) {}, false},
		{"tolerations", func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule})
		}, true},
		{"activeDeadlineSeconds", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](5000) }, true},
		{"container image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx" }, true},
		{"init container image", func(p *corev1.Pod) { p.Spec.InitContainers[0].Image = "pause" }, true},
		{"annotations", func(p *corev1.Pod) { p.Annotations = map[string]string{"key": "value"} }, false},
		{"generation set by the client", func(p *corev1.Pod) { p.Generation = 1 }, false},
	}
	want := int64(1)
	for _, s := range steps {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.update(p)
			_, err = pods.Update(ctx, p, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.bump {
			want++
		}
		p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Generation != want {
			t.Errorf("%s: generation %d, want %d", s.name, p.Generation, want)
		}
	}

	// A status write that leaves observedGeneration out keeps the stored
	// one, in the pod and in its conditions.
	p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.ObservedGeneration = p.Generation
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, ObservedGeneration: p.Generation}}
	if p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err = pods.Patch(ctx, pod.Name, types.MergePatchType, []byte(`{"status":{"observedGeneration":null,"conditions":[{"type":"Ready","status":"True"}]}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.ObservedGeneration != want || len(p.Status.Conditions) != 1 || p.Status.Conditions[0].ObservedGeneration != want {
		t.Errorf("observedGeneration not kept: %d %+v", p.Status.ObservedGeneration, p.Status.Conditions)
	}

	// Graceful deletion of a bound pod is one more generation.
	err = pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: "podgen-node"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var deleted corev1.Pod
	var code int
	err = client.CoreV1().RESTClient().Delete().AbsPath("/api/v1/namespaces", ns, "pods", pod.Name).Param("gracePeriodSeconds", "60").Do(ctx).StatusCode(&code).Into(&deleted)
	if err != nil || code != http.StatusOK {
		t.Fatalf("graceful delete: %v %d", err, code)
	}
	if deleted.Generation != want+1 {
		t.Errorf("generation after graceful delete: %d, want %d", deleted.Generation, want+1)
	}
	// A shorter grace period later is not a new generation.
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
		t.Fatal(err)
	}
	if p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{}); err != nil || p.Generation != want+1 {
		t.Errorf("generation after a second delete: %v %d", err, p.Generation)
	}
	_ = pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})

	// Objects deleted through finalizers are one generation on as well.
	cm, err := client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "held"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "held"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.AppsV1().Deployments(ns).Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	held, err := client.AppsV1().Deployments(ns).Get(ctx, cm.Name, metav1.GetOptions{})
	if err != nil || held.DeletionTimestamp == nil || held.Generation != cm.Generation+1 {
		t.Errorf("deployment marked for deletion: %v generation %d, want %d", err, held.Generation, cm.Generation+1)
	}
	_, _ = client.AppsV1().Deployments(ns).Patch(ctx, cm.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
}

// TestPodServiceAccountAlias: a pod naming its service account only by the
// deprecated serviceAccount field runs as that account, and both fields
// read back alike, in pods and in templates; kubectl's server-side dry run
// shows the same.
func TestPodServiceAccountAlias(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "saalias")
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{DeprecatedServiceAccount: "legacy",
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.ServiceAccountName != "legacy" || pod.Spec.DeprecatedServiceAccount != "legacy" {
		t.Errorf("pod: serviceAccountName %q serviceAccount %q", pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount)
	}
	out := mustKubectl(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      serviceAccountName: legacy
      containers: [{name: c, image: busybox}]
`, "apply", "-n", ns, "--dry-run=server", "-o", "jsonpath={.spec.template.spec.serviceAccount}", "-f", "-")
	if out != "legacy" {
		t.Errorf("deployment template serviceAccount %q, want legacy", out)
	}
}

// TestStatefulSetClaimTemplateKinds: a StatefulSet's volume claim
// templates read back with apiVersion and kind, as upstream shows them, in
// the write's answer, from storage and from a watch (in JSON: protobuf has
// no place for them, upstream's or ours), and a write that leaves the spec
// alone is not a new generation.
func TestStatefulSetClaimTemplateKinds(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "stskinds")
	sets := dynamic.NewForConfigOrDie(restCfg).Resource(appsv1.SchemeGroupVersion.WithResource("statefulsets")).Namespace(ns)
	w, err := sets.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	sts := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 0
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: busybox}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`), &sts.Object); err != nil {
		t.Fatal(err)
	}
	check := func(what string, s *unstructured.Unstructured) {
		t.Helper()
		claims, _, _ := unstructured.NestedSlice(s.Object, "spec", "volumeClaimTemplates")
		if len(claims) != 1 {
			t.Fatalf("%s: claim templates %v", what, claims)
		}
		c := claims[0].(map[string]any)
		if c["apiVersion"] != "v1" || c["kind"] != "PersistentVolumeClaim" {
			t.Errorf("%s: claim template apiVersion %v kind %v", what, c["apiVersion"], c["kind"])
		}
	}
	created, err := sets.Create(ctx, sts, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("create", created)
	got, err := sets.Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("get", got)
	select {
	case ev := <-w.ResultChan():
		check("watch", ev.Object.(*unstructured.Unstructured))
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	patched, err := sets.Patch(ctx, "db", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if patched.GetGeneration() != created.GetGeneration() {
		t.Errorf("a metadata patch moved the generation: %d -> %d", created.GetGeneration(), patched.GetGeneration())
	}
}
