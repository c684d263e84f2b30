package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

var extensionsOnly = flag.Bool("extensions-only", false, "run the API extension phases alone: custom resource creates against ConfigMap creates, and ConfigMap creates with and without a validating webhook")

// runExtensions measures what the API's extension points cost, each
// against its baseline in the same run on the same server: creates of a
// custom resource (JSON, its schema checked, pruned and defaulted)
// against creates of ConfigMaps in JSON and in protobuf, and creates
// through one validating webhook (served here over TLS, admitting
// everything) against the same creates in a namespace it does not match.
func runExtensions(ctx context.Context, payload string) error {
	srv, err := startServer(nil)
	if err != nil {
		return err
	}
	defer srv.stop()
	kc := filepath.Join(srv.dataDir, "kubeconfig")
	n, d := *concurrency, *duration
	cs, err := clients(kc, n)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 1e6, 1e6
	for _, ns := range []string{"cm-json", "cm-proto", "crs", "hooked", "plain"} {
		if _, err := cs[0].CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"name": ns}}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if err := installBenchCRD(ctx, apiextensionsclient.NewForConfigOrDie(cfg)); err != nil {
		return err
	}
	jsonClients := make([]kubernetes.Interface, n)
	dyns := make([]dynamic.Interface, n)
	for i := range n {
		c := *cfg
		c.Dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
		jsonClients[i] = kubernetes.NewForConfigOrDie(&c)
		dyns[i] = dynamic.NewForConfigOrDie(&c)
	}
	fmt.Printf("Orca API extension benchmark: %d clients, %s per phase\n\n", n, d)

	cm := func(clients []kubernetes.Interface, ns string) func(w, i int) error {
		return func(w, i int) error {
			_, err := clients[w].CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d-%d", w, i)},
				Data:       map[string]string{"payload": payload},
			}, metav1.CreateOptions{})
			return err
		}
	}
	cmJSON := hammer("API create ConfigMap (JSON)", n, d, cm(jsonClients, "cm-json"))
	fmt.Println(cmJSON)
	cmProto := hammer("API create ConfigMap (protobuf)", n, d, cm(cs, "cm-proto"))
	fmt.Println(cmProto)
	widgets := schema.GroupVersionResource{Group: "bench.example.com", Version: "v1", Resource: "widgets"}
	cr := hammer("API create custom resource (JSON)", n, d, func(w, i int) error {
		_, err := dyns[w].Resource(widgets).Namespace("crs").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "bench.example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w-%d-%d", w, i)},
			"spec":     map[string]any{"payload": payload, "replicas": int64(i % 10)},
		}}, metav1.CreateOptions{})
		return err
	})
	fmt.Println(cr)
	fmt.Printf("\ncustom resource / ConfigMap creates: %.2f (JSON), %.2f (against protobuf)\n\n",
		cr.throughput/cmJSON.throughput, cr.throughput/cmProto.throughput)

	stop, err := benchWebhook(ctx, cs[0])
	if err != nil {
		return err
	}
	defer stop()
	// Webhooks take effect once the server's informers see them.
	time.Sleep(2 * time.Second)
	plain := hammer("API create ConfigMap, no webhook", n, d, cm(cs, "plain"))
	fmt.Println(plain)
	hooked := hammer("API create ConfigMap, 1 webhook", n, d, cm(cs, "hooked"))
	fmt.Println(hooked)
	fmt.Printf("\none validating webhook adds p50 %.2f ms, p99 %.2f ms; throughput %.2f of without\n",
		ms(hooked.p50-plain.p50), ms(hooked.p99-plain.p99), hooked.throughput/plain.throughput)
	return nil
}

func installBenchCRD(ctx context.Context, ext apiextensionsclient.Interface) error {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.bench.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "bench.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {
						Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"payload":  {Type: "string", MaxLength: ptr.To[int64](1024)},
							"replicas": {Type: "integer", Minimum: ptr.To(0.0)},
							"color":    {Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"red"`)}},
						},
					}},
				}},
			}},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err == nil {
			for _, cond := range c.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("CRD not established")
}

// benchWebhook serves a validating webhook that admits everything and
// registers it for ConfigMaps in the namespace "hooked".
func benchWebhook(ctx context.Context, c kubernetes.Interface) (func(), error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench-webhook"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:   time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	})}
	go func() { _ = hs.Serve(ln) }()
	none := admissionregistrationv1.SideEffectClassNone
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "bench.webhook.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL:      ptr.To("https://" + ln.Addr().String() + "/validate"),
				CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"name": "hooked"}},
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		hs.Close()
		return nil, err
	}
	return func() { hs.Close() }, nil
}
