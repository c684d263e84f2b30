package integration

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
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// TestCRDConversionWebhook serves a CRD in two versions whose fields
// differ, stored in v1 and converted by a webhook over TLS: objects
// written in one version read in the other, a failing webhook fails the
// reads that need it, and the stored versions and deprecation warnings
// follow the CRD.
func TestCRDConversionWebhook(t *testing.T) {
	ctx := context.Background()
	ext := apiextensionsclient.NewForConfigOrDie(restCfg)
	dyn := dynamic.NewForConfigOrDie(restCfg)
	ns := newNamespace(t, client, "crdconv")

	var calls, broken atomic.Int32
	srv, caPEM := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if broken.Load() == 1 {
			http.Error(w, "conversion is down", http.StatusInternalServerError)
			return
		}
		convertEndpoints(t, w, r)
	}))

	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "endpoints.conv.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "conv.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "endpoints", Singular: "endpoint", Kind: "Endpoint"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: objectSchema(map[string]apiextensionsv1.JSONSchemaProps{
					"hostPort": {Type: "string"}})},
				{Name: "v2", Served: true, Schema: objectSchema(map[string]apiextensionsv1.JSONSchemaProps{
					"host": {Type: "string"}, "port": {Type: "integer"}})},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{
						URL: ptr.To(srv.URL + "/convert"), CABundle: caPEM,
					},
				},
			},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crd.Name, metav1.DeleteOptions{})
	waitEstablished(t, ext, crd.Name)
	v1 := dyn.Resource(schema.GroupVersionResource{Group: "conv.example.com", Version: "v1", Resource: "endpoints"}).Namespace(ns)
	v2 := dyn.Resource(schema.GroupVersionResource{Group: "conv.example.com", Version: "v2", Resource: "endpoints"}).Namespace(ns)

	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "conv.example.com/v2", "kind": "Endpoint",
		"metadata": map[string]any{"name": "db"},
		"spec":     map[string]any{"host": "db.local", "port": int64(5432)},
	}}
	created, err := v2.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.GetAPIVersion() != "conv.example.com/v2" || fmt.Sprint(created.Object["spec"]) != "map[host:db.local port:5432]" {
		t.Errorf("created in v2: %v", created.Object)
	}
	got, err := v1.Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetAPIVersion() != "conv.example.com/v1" || fmt.Sprint(got.Object["spec"]) != "map[hostPort:db.local:5432]" {
		t.Errorf("read in v1: %v", got.Object)
	}
	eventually(t, 10*time.Second, func() error {
		l, err := v2.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(l.Items) != 1 || fmt.Sprint(l.Items[0].Object["spec"]) != "map[host:db.local port:5432]" {
			return fmt.Errorf("listed in v2: %v", l.Items)
		}
		return nil
	})
	if calls.Load() == 0 {
		t.Error("the webhook was never called")
	}

	// Reads that need a conversion fail while the webhook does; the
	// storage version needs none.
	broken.Store(1)
	if _, err := v2.Get(ctx, "db", metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "conversion webhook") {
		t.Errorf("read in v2 with the webhook failing: %v", err)
	}
	if _, err := v1.Get(ctx, "db", metav1.GetOptions{}); err != nil {
		t.Errorf("read in the storage version with the webhook failing: %v", err)
	}
	broken.Store(0)

	// Moving storage to v2 records both versions as stored.
	cur, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Versions[0].Storage, cur.Spec.Versions[1].Storage = false, true
	cur.Spec.Versions[0].Deprecated = true
	if cur, err = ext.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(cur.Status.StoredVersions, ",") != "v1,v2" {
		t.Errorf("storedVersions %v, want [v1 v2]", cur.Status.StoredVersions)
	}
	eventually(t, 10*time.Second, func() error {
		res := runKubectl(t, "", "-n", ns, "get", "endpoints.v1.conv.example.com", "db")
		if res.Code != 0 || !strings.Contains(res.Stderr, "Warning: conv.example.com/v1 Endpoint is deprecated; use conv.example.com/v2 Endpoint") {
			return fmt.Errorf("kubectl get in the deprecated version: exit %d, %s", res.Code, res.Stderr)
		}
		return nil
	})
}

// convertEndpoints is the conversion webhook: v1 keeps "host:port" in
// one field, v2 in two.
func convertEndpoints(t *testing.T, w http.ResponseWriter, r *http.Request) {
	var review apiextensionsv1.ConversionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("bad review: %v", err), http.StatusBadRequest)
		return
	}
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, raw := range review.Request.Objects {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			break
		}
		spec, _ := u.Object["spec"].(map[string]any)
		switch review.Request.DesiredAPIVersion {
		case "conv.example.com/v1":
			u.Object["spec"] = map[string]any{"hostPort": fmt.Sprintf("%v:%v", spec["host"], spec["port"])}
		case "conv.example.com/v2":
			host, port, _ := strings.Cut(fmt.Sprint(spec["hostPort"]), ":")
			var n int64
			fmt.Sscan(port, &n)
			u.Object["spec"] = map[string]any{"host": host, "port": n}
		}
		u.SetAPIVersion(review.Request.DesiredAPIVersion)
		data, _ := u.MarshalJSON()
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: data})
	}
	review.Request, review.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// objectSchema is a structural schema whose spec has the given fields.
func objectSchema(spec map[string]apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceValidation {
	return &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {Type: "object", Properties: spec},
		},
	}}
}

// tlsServer serves h over TLS on 127.0.0.1 with a certificate of its own
// CA, whose PEM it returns for a caBundle.
func tlsServer(t *testing.T, h http.Handler) (*httptest.Server, []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return tlsServerOn(t, ln, h, "localhost")
}

// tlsServerOn serves h over TLS on ln, with a self-signed certificate for
// the listener's address and dnsName; configure may change the TLS
// configuration before the server starts.
func tlsServerOn(t *testing.T, ln net.Listener, h http.Handler, dnsName string, configure ...func(*tls.Config)) (*httptest.Server, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "webhook"},
		IPAddresses: []net.IP{ln.Addr().(*net.TCPAddr).IP}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	for _, c := range configure {
		c(srv.TLS)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
