package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	externalmetricsv1beta1 "k8s.io/metrics/pkg/apis/external_metrics/v1beta1"
	"k8s.io/utils/ptr"
)

// hpaDeployment is a Deployment whose pods the fake kubelet runs.
func hpaDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{NodeName: fakeNodeName, Containers: []corev1.Container{{Name: "app", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
			},
		},
	}
}

// TestHorizontalPodAutoscalerAPI exercises autoscaling/v2 and v1 as users
// see them: kubectl autoscale and get, defaults, validation, and the v1
// view of one object keeping what v1 cannot say.
func TestHorizontalPodAutoscalerAPI(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "hpa-api")
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, hpaDeployment(ns, "web", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	mustKubectl(t, "", "-n", ns, "autoscale", "deployment", "web", "--cpu=50%", "--min=1", "--max=5")
	hpa, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := hpa.Spec.Metrics; len(m) != 1 || m[0].Resource == nil || m[0].Resource.Name != corev1.ResourceCPU || *m[0].Resource.Target.AverageUtilization != 50 ||
		*hpa.Spec.MinReplicas != 1 || hpa.Spec.MaxReplicas != 5 || hpa.Spec.ScaleTargetRef != (autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}) {
		t.Fatalf("kubectl autoscale made %+v", hpa.Spec)
	}
	out := mustKubectl(t, "", "-n", ns, "get", "hpa")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE" {
		t.Errorf("header %q", lines[0])
	}
	// No metrics.k8s.io here: the current value stays unknown.
	if len(lines) != 2 || !strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "web Deployment/web cpu: <unknown>/50% 1 5 ") {
		t.Errorf("kubectl get hpa:\n%s", out)
	}
	// kubectl describe reads the HPA, its conditions and the controller's
	// events: without metrics.k8s.io the cpu metric cannot be read.
	eventually(t, 30*time.Second, func() error {
		out := mustKubectl(t, "", "-n", ns, "describe", "hpa", "web")
		for _, want := range []string{"Reference:", "Deployment/web", "(as a percentage of request):", "<unknown> / 50%",
			"ScalingActive", "FailedGetResourceMetric", "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu"} {
			if !strings.Contains(out, want) {
				return fmt.Errorf("kubectl describe hpa lacks %q:\n%s", want, out)
			}
		}
		return nil
	})
	// kubectl explain finds the preferred version's schema.
	if out := mustKubectl(t, "", "explain", "hpa.spec.maxReplicas"); !strings.Contains(out, "maxReplicas <integer>") || !strings.Contains(out, "v2") {
		t.Errorf("kubectl explain:\n%s", out)
	}
	// The same object through autoscaling/v1.
	v1hpa, err := client.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := v1hpa.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 50 {
		t.Errorf("v1 targetCPUUtilizationPercentage = %v", p)
	}
	if out := mustKubectl(t, "", "-n", ns, "get", "all"); !strings.Contains(out, "horizontalpodautoscaler.autoscaling/web") {
		t.Errorf("kubectl get all lacks the hpa:\n%s", out)
	}

	// Defaults: an 80% cpu target, min 1, and a behavior completed rule by rule.
	bare := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "bare"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    3,
			Behavior:       &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](30)}},
		},
	}
	got, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, bare, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	up, down := got.Spec.Behavior.ScaleUp, got.Spec.Behavior.ScaleDown
	if *got.Spec.MinReplicas != 1 || *got.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 ||
		*up.StabilizationWindowSeconds != 0 || *up.SelectPolicy != autoscalingv2.MaxChangePolicySelect || len(up.Policies) != 2 ||
		up.Policies[0] != (autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15}) ||
		up.Policies[1] != (autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}) ||
		*down.StabilizationWindowSeconds != 30 || len(down.Policies) != 1 || down.Policies[0].Value != 100 || got.Generation != 1 {
		t.Errorf("defaults: %+v behavior up %+v down %+v", got.Spec, up, down)
	}

	// Validation, with upstream's messages.
	bad := bare.DeepCopy()
	bad.Name, bad.Spec.MaxReplicas, bad.Spec.MinReplicas = "bad", 0, ptr.To[int32](2)
	bad.Spec.ScaleTargetRef.APIVersion = "v1"
	_, err = client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.maxReplicas: Required value: must be set and greater than 0") ||
		!strings.Contains(err.Error(), "spec.scaleTargetRef.apiVersion: Invalid value: \"v1\": apiVersion must specify API group") {
		t.Errorf("invalid create: %v", err)
	}
	res := runKubectl(t, "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: v1bad}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 2\n  targetCPUUtilizationPercentage: 0\n",
		"-n", ns, "create", "-f", "-")
	if res.Code == 0 || !strings.Contains(res.Stderr, "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0") {
		t.Errorf("v1 validation: %d %s", res.Code, res.Stderr)
	}

	// A v2 object whose metrics and behavior v1 has no fields for survives
	// an update through v1.
	rich := bare.DeepCopy()
	rich.Name = "rich"
	rich.Spec.Metrics = []autoscalingv2.MetricSpec{
		{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))}}},
		{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}},
	}
	created, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, rich, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	viaV1, err := client.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "rich", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if viaV1.Annotations["autoscaling.alpha.kubernetes.io/metrics"] == "" || viaV1.Annotations["autoscaling.alpha.kubernetes.io/behavior"] == "" || *viaV1.Spec.TargetCPUUtilizationPercentage != 60 {
		t.Errorf("v1 view: %+v %v", viaV1.Spec, viaV1.Annotations)
	}
	// The controller writes the HPA's status meanwhile: a conflict is
	// retried on a fresh read, as any client's update would be.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "rich", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.MaxReplicas = 7
		_, err = client.AutoscalingV1().HorizontalPodAutoscalers(ns).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	after, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "rich", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Spec.MaxReplicas != 7 || len(after.Spec.Metrics) != 2 || after.Spec.Metrics[0].Pods == nil || after.Spec.Metrics[0].Pods.Metric.Name != "qps" ||
		*after.Spec.Behavior.ScaleDown.StabilizationWindowSeconds != 30 || len(after.Annotations) != 0 || after.Generation != created.Generation+1 {
		t.Errorf("after a v1 update: %+v annotations %v generation %d", after.Spec, after.Annotations, after.Generation)
	}
	// A change v1 sees only in an annotation is a change of the spec.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		viaV1, err := client.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "rich", metav1.GetOptions{})
		if err != nil {
			return err
		}
		viaV1.Annotations["autoscaling.alpha.kubernetes.io/metrics"] = strings.Replace(viaV1.Annotations["autoscaling.alpha.kubernetes.io/metrics"], `"targetAverageValue":"10"`, `"targetAverageValue":"20"`, 1)
		_, err = client.AutoscalingV1().HorizontalPodAutoscalers(ns).Update(ctx, viaV1, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	final, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "rich", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if final.Spec.Metrics[0].Pods.Target.AverageValue.String() != "20" || final.Generation != after.Generation+1 {
		t.Errorf("after an annotation-only v1 update: %+v generation %d (was %d)", final.Spec.Metrics[0], final.Generation, after.Generation)
	}
}

// metricsAdapter is a minimal custom and external metrics API server: it
// serves custom.metrics.k8s.io/v1beta2 (a pods metric "qps" for every pod
// the selector names, a total load shared among them, and
// "requests-per-second" of services) and
// external.metrics.k8s.io/v1beta1 ("queue_messages"), with values the
// test sets, behind the aggregator's front proxy.
type metricsAdapter struct {
	ns string
	mu sync.Mutex
	// qps is the pods' total, rps the service's value, queue the
	// external metric's total.
	qps, rps, queue resource.Quantity
}

func (a *metricsAdapter) set(qps, rps, queue string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.qps, a.rps, a.queue = resource.MustParse(qps), resource.MustParse(rps), resource.MustParse(queue)
}

func (a *metricsAdapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		http.Error(w, "no front proxy certificate", http.StatusUnauthorized)
		return
	}
	a.mu.Lock()
	qps, rps, queue := a.qps, a.rps, a.queue
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	now := metav1.Now()
	custom := "/apis/custom.metrics.k8s.io/v1beta2"
	external := "/apis/external.metrics.k8s.io/v1beta1"
	var body any
	switch r.URL.Path {
	case custom:
		body = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "custom.metrics.k8s.io/v1beta2",
			APIResources: []metav1.APIResource{
				{Name: "pods/qps", Namespaced: true, Kind: "MetricValueList", Verbs: metav1.Verbs{"get"}},
				{Name: "services/requests-per-second", Namespaced: true, Kind: "MetricValueList", Verbs: metav1.Verbs{"get"}},
			}}
	case external:
		body = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "external.metrics.k8s.io/v1beta1",
			APIResources: []metav1.APIResource{{Name: "queue_messages", Namespaced: true, Kind: "ExternalMetricValueList", Verbs: metav1.Verbs{"get"}}}}
	case custom + "/namespaces/" + a.ns + "/pods/*/qps":
		pods, err := client.CoreV1().Pods(a.ns).List(r.Context(), metav1.ListOptions{LabelSelector: r.URL.Query().Get("labelSelector")})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		list := custommetricsv1beta2.MetricValueList{TypeMeta: metav1.TypeMeta{Kind: "MetricValueList", APIVersion: "custom.metrics.k8s.io/v1beta2"}}
		if len(pods.Items) > 0 {
			qps = *resource.NewMilliQuantity(qps.MilliValue()/int64(len(pods.Items)), resource.DecimalSI)
		}
		for _, p := range pods.Items {
			list.Items = append(list.Items, custommetricsv1beta2.MetricValue{
				DescribedObject: corev1.ObjectReference{Kind: "Pod", Namespace: a.ns, Name: p.Name, APIVersion: "/v1"},
				Metric:          custommetricsv1beta2.MetricIdentifier{Name: "qps"}, Timestamp: now, Value: qps,
			})
		}
		body = list
	case custom + "/namespaces/" + a.ns + "/services/front/requests-per-second":
		body = custommetricsv1beta2.MetricValueList{TypeMeta: metav1.TypeMeta{Kind: "MetricValueList", APIVersion: "custom.metrics.k8s.io/v1beta2"},
			Items: []custommetricsv1beta2.MetricValue{{
				DescribedObject: corev1.ObjectReference{Kind: "Service", Namespace: a.ns, Name: "front", APIVersion: "/v1"},
				Metric:          custommetricsv1beta2.MetricIdentifier{Name: "requests-per-second"}, Timestamp: now, Value: rps,
			}}}
	case external + "/namespaces/" + a.ns + "/queue_messages":
		body = externalmetricsv1beta1.ExternalMetricValueList{TypeMeta: metav1.TypeMeta{Kind: "ExternalMetricValueList", APIVersion: "external.metrics.k8s.io/v1beta1"},
			Items: []externalmetricsv1beta1.ExternalMetricValue{{MetricName: "queue_messages", MetricLabels: map[string]string{"queue": "jobs"}, Timestamp: now, Value: queue}}}
	default:
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
		return
	}
	_ = json.NewEncoder(w).Encode(body)
}

// serveAggregated serves h as an extension API server behind the Service
// ns/name and registers an APIService for each group version, removed
// when the test ends; it returns once all are Available.
func serveAggregated(t *testing.T, ns, name string, h http.Handler, gvs ...string) {
	t.Helper()
	ctx := context.Background()
	auth, err := client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	frontProxyCAs := x509.NewCertPool()
	frontProxyCAs.AppendCertsFromPEM([]byte(auth.Data["requestheader-client-ca-file"]))
	ip := hostIPv4(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	_, caPEM := tlsServerOn(t, ln, h, name+"."+ns+".svc", func(c *tls.Config) {
		c.ClientAuth, c.ClientCAs = tls.VerifyClientCertIfGiven, frontProxyCAs
	})
	port := int32(ln.Addr().(*net.TCPAddr).Port)
	if _, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(port)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, gv := range gvs {
		group, version, _ := strings.Cut(gv, "/")
		apiService := fmt.Sprintf("apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: %s.%s}\n"+
			"spec: {group: %s, version: %s, groupPriorityMinimum: 100, versionPriority: 200, service: {name: %s, namespace: %s, port: 443}, caBundle: %s}\n",
			version, group, group, version, name, ns, base64PEM(caPEM))
		mustKubectl(t, apiService, "apply", "-f", "-")
		t.Cleanup(func() { runKubectl(t, "", "delete", "apiservice", version+"."+group) })
		eventually(t, 15*time.Second, func() error {
			out := mustKubectl(t, "", "get", "apiservice", version+"."+group, "--no-headers")
			if f := strings.Fields(out); len(f) < 3 || f[2] != "True" {
				return fmt.Errorf("kubectl get apiservice: %q", out)
			}
			return nil
		})
	}
}

// TestHorizontalPodAutoscalerController scales a Deployment by pods,
// object and external metrics read through an aggregated metrics adapter:
// up by the largest proposal, then down once every metric is below its
// target, within a zero scale-down stabilization window.
func TestHorizontalPodAutoscalerController(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "hpa-ctl")
	fakeKubelet(t, ns, nil)
	adapter := &metricsAdapter{ns: ns}
	adapter.set("60", "50", "10")
	serveAggregated(t, ns, "metrics-adapter", adapter, "custom.metrics.k8s.io/v1beta2", "external.metrics.k8s.io/v1beta1")

	if _, err := client.AppsV1().Deployments(ns).Create(ctx, hpaDeployment(ns, "web", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("10"))}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "front"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "requests-per-second"},
					Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resource.MustParse("100"))}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue_messages", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"queue": "jobs"}}},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("5"))}}},
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0)}},
		},
	}
	if _, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// 60 qps shared by 2 pods against 10 per pod asks for 3x the 2 pods;
	// the default scale-up policies (4 pods or 100% per 15 s) allow 6,
	// where the load, now shared by 6, is on target.
	waitForScale(t, ns, 6, "New size: 6; reason: pods metric qps above target")
	eventually(t, 20*time.Second, func() error {
		h, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		m := h.Status.CurrentMetrics
		if h.Status.DesiredReplicas != 6 || h.Status.LastScaleTime == nil || len(m) != 3 || m[0].Pods == nil || (m[0].Pods.Current.AverageValue.String() != "30" && m[0].Pods.Current.AverageValue.String() != "10") ||
			m[1].Object == nil || m[1].Object.Current.Value.String() != "50" || m[2].External == nil || m[2].External.Current.AverageValue == nil {
			return fmt.Errorf("status %+v", h.Status)
		}
		return hpaCondition(h, autoscalingv2.ScalingActive, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from pods metric qps")
	})

	// Now the external queue decides: 40 messages at 5 per pod is 8 pods.
	adapter.set("6", "50", "40")
	waitForScale(t, ns, 8, "New size: 8; reason: external metric queue_messages(&LabelSelector{MatchLabels:map[string]string{queue: jobs,},MatchExpressions:[]LabelSelectorRequirement{},}) above target")

	// Every metric below target: down, at once, to what the largest asks
	// (the service's 50 requests per second against 100 is half the 8
	// ready pods).
	eventually(t, 30*time.Second, func() error {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready := 0
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
					ready++
				}
			}
		}
		if ready != 8 {
			return fmt.Errorf("%d pods ready", ready)
		}
		return nil
	})
	adapter.set("6", "50", "10")
	waitForScale(t, ns, 4, "New size: 4; reason: All metrics below target")
	out := mustKubectl(t, "", "-n", ns, "get", "hpa", "web", "--no-headers")
	if f := strings.Fields(out); len(f) < 7 || !strings.HasSuffix(f[2], "/10,") || f[3] != "50/100" || f[4] != "+" {
		t.Errorf("kubectl get hpa: %q", out)
	}
}

// waitForScale waits until the HPA has set the Deployment's replicas and
// said so in an event.
func waitForScale(t *testing.T, ns string, replicas int32, message string) {
	t.Helper()
	eventually(t, 60*time.Second, func() error {
		d, err := client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if *d.Spec.Replicas != replicas {
			return fmt.Errorf("deployment replicas %d, want %d", *d.Spec.Replicas, replicas)
		}
		evs, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=SuccessfulRescale"})
		if err != nil {
			return err
		}
		var seen []string
		for _, e := range evs.Items {
			if e.Message == message && e.Source.Component == "horizontal-pod-autoscaler" {
				return nil
			}
			seen = append(seen, e.Message)
		}
		return fmt.Errorf("no event %q in %q", message, seen)
	})
}

func hpaCondition(h *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType, reason, message string) error {
	for _, c := range h.Status.Conditions {
		if c.Type == t {
			if c.Reason != reason || c.Message != message {
				return fmt.Errorf("%s: %s %q", t, c.Reason, c.Message)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s condition in %+v", t, h.Status.Conditions)
}
