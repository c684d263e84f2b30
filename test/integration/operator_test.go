package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The Greeting API of the operator under test, written by hand the way
// an operator's api/v1 package is, without code generation.

var greetingGV = schema.GroupVersion{Group: "operator.example.com", Version: "v1"}

const greetingDefaultedLabel = "operator.example.com/defaulted"

type GreetingSpec struct {
	Message  string `json:"message"`
	Replicas *int32 `json:"replicas,omitempty"`
}

type GreetingStatus struct {
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	ConfigMap          string `json:"configMap,omitempty"`
}

type Greeting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GreetingSpec   `json:"spec,omitempty"`
	Status            GreetingStatus `json:"status,omitzero"`
}

func (g *Greeting) DeepCopyObject() runtime.Object {
	out := *g
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if g.Spec.Replicas != nil {
		out.Spec.Replicas = ptr.To(*g.Spec.Replicas)
	}
	return &out
}

type GreetingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Greeting `json:"items"`
}

func (l *GreetingList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Greeting, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].DeepCopyObject().(*Greeting)
		}
	}
	return &out
}

func greetingScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddKnownTypes(greetingGV, &Greeting{}, &GreetingList{})
	metav1.AddToGroupVersion(s, greetingGV)
	return s
}

func greetingCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "greetings.operator.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: greetingGV.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "greetings", Singular: "greeting", Kind: "Greeting", ListKind: "GreetingList",
			},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: greetingGV.Version, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Message", Type: "string", JSONPath: ".spec.message"},
					{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
				},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Required: []string{"message"}, Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"message":  {Type: "string", MinLength: ptr.To[int64](1)},
							"replicas": {Type: "integer", Format: "int32", Minimum: ptr.To(0.0)},
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"observedGeneration": {Type: "integer", Format: "int64"},
							"configMap":          {Type: "string"},
						}},
					},
				}},
			}},
		},
	}
}

// greetingReconciler keeps, for each Greeting, a ConfigMap of the same
// name holding its message, and reports it in the Greeting's status.
type greetingReconciler struct {
	crclient.Client
	scheme *runtime.Scheme
}

func (r *greetingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var g Greeting
	if err := r.Get(ctx, req.NamespacedName, &g); err != nil {
		return ctrl.Result{}, crclient.IgnoreNotFound(err)
	}
	if !g.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: g.Name, Namespace: g.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["message"] = g.Spec.Message
		return controllerutil.SetControllerReference(&g, cm, r.scheme)
	}); err != nil {
		return ctrl.Result{}, err
	}
	if g.Status.ObservedGeneration != g.Generation || g.Status.ConfigMap != cm.Name {
		g.Status.ObservedGeneration, g.Status.ConfigMap = g.Generation, cm.Name
		if err := r.Status().Update(ctx, &g); err != nil {
			if apierrors.IsConflict(err) {
				// A newer Greeting is on its way through the cache.
				return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
			}
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// greetingDefaulter is the mutating webhook: replicas default to 1, and
// defaulted Greetings are labelled.
type greetingDefaulter struct{}

func (greetingDefaulter) Default(_ context.Context, g *Greeting) error {
	if g.Spec.Replicas == nil {
		g.Spec.Replicas = ptr.To[int32](1)
	}
	if g.Labels == nil {
		g.Labels = map[string]string{}
	}
	g.Labels[greetingDefaultedLabel] = "true"
	return nil
}

// greetingValidator is the validating webhook: no forbidden greetings.
type greetingValidator struct{}

func validateGreeting(g *Greeting) error {
	if strings.Contains(g.Spec.Message, "forbidden") {
		return errors.New(`spec.message must not contain "forbidden"`)
	}
	return nil
}

func (greetingValidator) ValidateCreate(_ context.Context, g *Greeting) (admission.Warnings, error) {
	return nil, validateGreeting(g)
}

func (greetingValidator) ValidateUpdate(_ context.Context, _, g *Greeting) (admission.Warnings, error) {
	return nil, validateGreeting(g)
}

func (greetingValidator) ValidateDelete(context.Context, *Greeting) (admission.Warnings, error) {
	return nil, nil
}

// operatorT is the test that controller-runtime's errors are logged to,
// nil when none runs.
var operatorT atomic.Pointer[testing.T]

// operatorLogSink gives controller-runtime a logr sink that drops its
// info messages and logs its errors to the running test.
type operatorLogSink struct {
	name   string
	values []any
}

func (operatorLogSink) Init(logr.RuntimeInfo)    {}
func (operatorLogSink) Enabled(int) bool         { return false }
func (operatorLogSink) Info(int, string, ...any) {}
func (s operatorLogSink) WithName(n string) logr.LogSink {
	if s.name != "" {
		n = s.name + "." + n
	}
	s.name = n
	return s
}

func (s operatorLogSink) WithValues(kv ...any) logr.LogSink {
	s.values = append(slices.Clip(s.values), kv...)
	return s
}

func (s operatorLogSink) Error(err error, msg string, kv ...any) {
	if t := operatorT.Load(); t != nil {
		t.Logf("controller-runtime %s: %s: %v %v", s.name, msg, err, append(slices.Clip(s.values), kv...))
	}
}

func greetingYAML(ns, name, message, extra string) string {
	return fmt.Sprintf(`apiVersion: operator.example.com/v1
kind: Greeting
metadata:
  name: %s
  namespace: %s
spec:
  message: %q
%s`, name, ns, message, extra)
}

// TestOperator runs an operator written with controller-runtime against
// the server: a CRD, a manager with a reconciler that owns ConfigMaps, and
// defaulting and validating webhooks built by controller-runtime and
// served over TLS; and checks what a kubectl user sees.
func TestOperator(t *testing.T) {
	ctx := context.Background()
	ext := apiextensionsclient.NewForConfigOrDie(restCfg)
	ns := newNamespace(t, client, "operator")
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})

	operatorT.Store(t)
	t.Cleanup(func() { operatorT.Store(nil) })
	ctrl.SetLogger(logr.New(operatorLogSink{}))

	// 1. The CRD.
	crd := greetingCRD()
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete CRD: %v", err)
			return
		}
		eventually(t, 30*time.Second, func() error {
			_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("CRD still there: %v", err)
		})
	})
	waitEstablished(t, ext, crd.Name)

	// 2-4. The operator: a manager with the controller, and the webhooks
	// registered by controller-runtime's builder on the manager's webhook
	// server. That server does not listen (port -1, it wants certificate
	// files): the test serves its mux over TLS instead.
	sch := greetingScheme(t)
	mux := http.NewServeMux()
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                 sch,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		WebhookServer:          webhook.NewServer(webhook.Options{Port: -1, WebhookMux: mux}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).
		For(&Greeting{}).
		Owns(&corev1.ConfigMap{}).
		Complete(&greetingReconciler{Client: mgr.GetClient(), scheme: sch}); err != nil {
		t.Fatal(err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &Greeting{}).
		WithDefaulter(greetingDefaulter{}).
		WithValidator(greetingValidator{}).
		Complete(); err != nil {
		t.Fatal(err)
	}
	srv, caPEM := tlsServer(t, mux)

	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{greetingGV.Group}, APIVersions: []string{greetingGV.Version},
			Resources: []string{"greetings"}, Scope: ptr.To(admissionregistrationv1.NamespacedScope),
		},
	}}
	const mutatingName, validatingName = "mgreeting.operator.example.com", "vgreeting.operator.example.com"
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "operator-test-greetings-mutating"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: mutatingName,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To(srv.URL + "/mutate-operator-example-com-v1-greeting"), CABundle: caPEM,
			},
			Rules: rules, FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "operator-test-greetings-validating"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: validatingName,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To(srv.URL + "/validate-operator-example-com-v1-greeting"), CABundle: caPEM,
			},
			Rules: rules, FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), mwc.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete MutatingWebhookConfiguration: %v", err)
		}
	})
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), vwc.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete ValidatingWebhookConfiguration: %v", err)
		}
	})

	mgrCtx, stopMgr := context.WithCancel(context.Background())
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	t.Cleanup(func() {
		stopMgr()
		select {
		case err := <-mgrDone:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the manager did not stop within a minute")
		}
	})

	// A client as operators have, reading from the server directly.
	cl, err := crclient.New(restCfg, crclient.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}

	// The webhook configurations take effect: a dry-run create is
	// defaulted by one and refused by the other.
	eventually(t, 20*time.Second, func() error {
		g := &Greeting{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns}, Spec: GreetingSpec{Message: "probe"}}
		if err := cl.Create(ctx, g, crclient.DryRunAll); err != nil {
			return err
		}
		if g.Spec.Replicas == nil || g.Labels[greetingDefaultedLabel] != "true" {
			return fmt.Errorf("not defaulted yet: %+v %v", g.Spec, g.Labels)
		}
		bad := &Greeting{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns}, Spec: GreetingSpec{Message: "forbidden probe"}}
		if err := cl.Create(ctx, bad, crclient.DryRunAll); err == nil {
			return errors.New("not refused yet")
		}
		return nil
	})

	select {
	case err := <-mgrDone:
		t.Fatalf("the manager stopped: %v", err)
	default:
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the manager's cache did not sync")
	}

	getGreeting := func(name string) (*Greeting, error) {
		g := &Greeting{}
		return g, cl.Get(ctx, crclient.ObjectKey{Namespace: ns, Name: name}, g)
	}
	// reconciled waits until the Greeting's ConfigMap holds message and
	// its status reports the ConfigMap and its generation.
	reconciled := func(t *testing.T, name, message string) (*Greeting, *corev1.ConfigMap) {
		t.Helper()
		var g *Greeting
		var cm *corev1.ConfigMap
		eventually(t, 30*time.Second, func() error {
			var err error
			if g, err = getGreeting(name); err != nil {
				return err
			}
			if cm, err = client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
			if cm.Data["message"] != message {
				return fmt.Errorf("configmap data %v, want message %q", cm.Data, message)
			}
			if g.Status.ObservedGeneration != g.Generation || g.Status.ConfigMap != name {
				return fmt.Errorf("status %+v at generation %d", g.Status, g.Generation)
			}
			return nil
		})
		return g, cm
	}

	// 5. What a user sees.
	out := mustKubectl(t, greetingYAML(ns, "hello", "hello world", ""), "apply", "-f", "-")
	if !strings.Contains(out, "greeting.operator.example.com/hello created") {
		t.Errorf("kubectl apply printed %q", out)
	}
	g, cm := reconciled(t, "hello", "hello world")
	if g.Generation != 1 {
		t.Errorf("generation %d after create, want 1", g.Generation)
	}
	if g.Spec.Replicas == nil || *g.Spec.Replicas != 1 {
		t.Errorf("spec.replicas %v, want 1 from the mutating webhook", g.Spec.Replicas)
	}
	if g.Labels[greetingDefaultedLabel] != "true" {
		t.Errorf("labels %v, want %s=true from the mutating webhook", g.Labels, greetingDefaultedLabel)
	}
	wantOwner := metav1.OwnerReference{
		APIVersion: "operator.example.com/v1", Kind: "Greeting", Name: "hello", UID: g.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
	if len(cm.OwnerReferences) != 1 || !equalOwnerRef(cm.OwnerReferences[0], wantOwner) {
		t.Errorf("configmap ownerReferences %+v, want [%+v]", cm.OwnerReferences, wantOwner)
	}

	// kubectl shows the Greeting as the server stored it.
	var shown Greeting
	if err := json.Unmarshal([]byte(mustKubectl(t, "", "-n", ns, "get", "greeting", "hello", "-o", "json")), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Kind != "Greeting" || shown.APIVersion != "operator.example.com/v1" || shown.Spec.Message != "hello world" ||
		shown.Spec.Replicas == nil || *shown.Spec.Replicas != 1 || shown.Status.ConfigMap != "hello" ||
		shown.Status.ObservedGeneration != shown.Generation {
		t.Errorf("kubectl get -o json: %+v", shown)
	}
	// With printer columns of its own, a CRD has no default Age column.
	table := mustKubectl(t, "", "-n", ns, "get", "greetings")
	if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 2 ||
		strings.Join(strings.Fields(lines[0]), " ") != "NAME MESSAGE REPLICAS" ||
		strings.Join(strings.Fields(lines[1]), " ") != "hello hello world 1" {
		t.Errorf("kubectl get greetings:\n%s", table)
	}

	t.Run("explicit replicas are kept", func(t *testing.T) {
		mustKubectl(t, greetingYAML(ns, "explicit", "hi", "  replicas: 3\n"), "apply", "-f", "-")
		g, _ := reconciled(t, "explicit", "hi")
		if g.Spec.Replicas == nil || *g.Spec.Replicas != 3 || g.Labels[greetingDefaultedLabel] != "true" {
			t.Errorf("spec %+v labels %v, want replicas 3 and the label", g.Spec, g.Labels)
		}
	})

	t.Run("update is reconciled", func(t *testing.T) {
		out := mustKubectl(t, greetingYAML(ns, "hello", "hello again", ""), "apply", "-f", "-")
		if !strings.Contains(out, "greeting.operator.example.com/hello configured") {
			t.Errorf("kubectl apply printed %q", out)
		}
		g, _ := reconciled(t, "hello", "hello again")
		if g.Generation != 2 || g.Status.ObservedGeneration != 2 {
			t.Errorf("generation %d, observedGeneration %d, want 2", g.Generation, g.Status.ObservedGeneration)
		}
		if g.Spec.Replicas == nil || *g.Spec.Replicas != 1 {
			t.Errorf("spec.replicas %v after apply, want 1 still", g.Spec.Replicas)
		}
	})

	t.Run("owned configmap is recreated", func(t *testing.T) {
		before, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "hello", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mustKubectl(t, "", "-n", ns, "delete", "configmap", "hello")
		eventually(t, 30*time.Second, func() error {
			cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "hello", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.UID == before.UID || cm.Data["message"] != "hello again" {
				return fmt.Errorf("configmap %s %v", cm.UID, cm.Data)
			}
			return nil
		})
	})

	t.Run("forbidden message is refused", func(t *testing.T) {
		want := `admission webhook "` + validatingName + `" denied the request: spec.message must not contain "forbidden"`
		res := runKubectl(t, greetingYAML(ns, "bad", "a forbidden greeting", ""), "create", "-f", "-")
		if res.Code == 0 || !strings.Contains(res.Stderr, want) || !strings.Contains(res.Stderr, "Error from server (Forbidden)") {
			t.Errorf("create: exit %d, stderr %q, want Forbidden with %q", res.Code, res.Stderr, want)
		}
		if _, err := getGreeting("bad"); !apierrors.IsNotFound(err) {
			t.Errorf("refused Greeting stored: %v", err)
		}
		// An update to a forbidden message is refused too, and the
		// ConfigMap keeps the last allowed message.
		res = runKubectl(t, greetingYAML(ns, "hello", "now forbidden", ""), "apply", "-f", "-")
		if res.Code == 0 || !strings.Contains(res.Stderr, want) {
			t.Errorf("update: exit %d, stderr %q, want %q", res.Code, res.Stderr, want)
		}
		if g, err := getGreeting("hello"); err != nil || g.Spec.Message != "hello again" {
			t.Errorf("after the refused update: %v, %v", g, err)
		}
	})

	t.Run("schema validation", func(t *testing.T) {
		res := runKubectl(t, greetingYAML(ns, "empty", "", ""), "create", "-f", "-")
		if res.Code == 0 || !strings.Contains(res.Stderr, `spec.message in body should be at least 1 chars long`) {
			t.Errorf("exit %d, stderr %q, want the schema's minLength refusal", res.Code, res.Stderr)
		}
	})

	t.Run("deletion collects the configmap", func(t *testing.T) {
		mustKubectl(t, "", "-n", ns, "delete", "greeting", "hello")
		// The garbage collector rediscovers resources every 30 seconds:
		// the Greeting may come and go before it watches greetings. As
		// upstream's, it must then keep checking the owner it has not
		// observed until it finds it gone (https://issue.k8s.io/56121).
		eventually(t, 90*time.Second, func() error {
			cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "hello", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("configmap still there, owned by %+v", cm.OwnerReferences)
		})
		if _, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "explicit", metav1.GetOptions{}); err != nil {
			t.Errorf("the other Greeting's configmap: %v", err)
		}
	})
}

func equalOwnerRef(a, b metav1.OwnerReference) bool {
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
		ptr.Deref(a.Controller, false) == ptr.Deref(b.Controller, false) &&
		ptr.Deref(a.BlockOwnerDeletion, false) == ptr.Deref(b.BlockOwnerDeletion, false)
}
