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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// wardle is a minimal extension API server of the group
// wardle.example.com/v1alpha1: it trusts only requests whose client
// certificate the front proxy CA signed, reads the user from the front
// proxy's headers, and serves one namespaced resource, flunders, whose
// objects say who asked for them.
type wardle struct{ ns string }

func (wd wardle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		http.Error(w, "no front proxy certificate", http.StatusUnauthorized)
		return
	}
	user := r.Header.Get("X-Remote-User")
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/apis/wardle.example.com/v1alpha1":
		_ = json.NewEncoder(w).Encode(metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "wardle.example.com/v1alpha1",
			APIResources: []metav1.APIResource{{Name: "flunders", SingularName: "flunder", Namespaced: true, Kind: "Flunder", Verbs: metav1.Verbs{"get", "list"}}},
		})
	case r.URL.Path == "/apis/wardle.example.com/v1alpha1/namespaces/"+wd.ns+"/flunders":
		fmt.Fprintf(w, `{"apiVersion":"wardle.example.com/v1alpha1","kind":"FlunderList","metadata":{"resourceVersion":"1"},"items":[`+
			`{"apiVersion":"wardle.example.com/v1alpha1","kind":"Flunder","metadata":{"name":"first","namespace":%q,"annotations":{"seen-by":%q,"groups":%q}}}]}`,
			wd.ns, user, strings.Join(r.Header.Values("X-Remote-Group"), ","))
	case r.URL.Path == "/openapi/v2":
		fmt.Fprintf(w, `{"swagger":"2.0","info":{"title":"wardle","version":"v1alpha1"},`+
			`"paths":{"/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders":{"get":{"responses":{"200":{"description":"OK","schema":{"$ref":"#/definitions/%s"}}}}}},`+
			`"definitions":{%q:%s}}`, flunderModel, flunderModel, flunderSchema)
	case r.URL.Path == "/openapi/v3":
		fmt.Fprint(w, `{"paths":{"apis/wardle.example.com/v1alpha1":{"serverRelativeURL":"/openapi/v3/apis/wardle.example.com/v1alpha1?hash=1"}}}`)
	case r.URL.Path == "/openapi/v3/apis/wardle.example.com/v1alpha1":
		fmt.Fprintf(w, `{"openapi":"3.0.0","info":{"title":"wardle","version":"v1alpha1"},`+
			`"paths":{"/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders":{"get":{"x-kubernetes-group-version-kind":{"group":"wardle.example.com","kind":"Flunder","version":"v1alpha1"},`+
			`"responses":{"200":{"description":"OK","content":{"application/json":{"schema":{"$ref":"#/components/schemas/%s"}}}}}}}},`+
			`"components":{"schemas":{%q:%s}}}`, flunderModel, flunderModel, flunderSchema)
	default:
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
	}
}

// The wardle server's one model, in its OpenAPI documents.
const (
	flunderModel  = "com.example.wardle.v1alpha1.Flunder"
	flunderSchema = `{"type":"object","description":"A flunder is a thing.",` +
		`"properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},` +
		`"spec":{"type":"object","properties":{"reference":{"type":"string","description":"What the flunder refers to."}}}},` +
		`"x-kubernetes-group-version-kind":[{"group":"wardle.example.com","kind":"Flunder","version":"v1alpha1"}]}`
)

// TestAPIAggregation registers an extension API server behind a Service
// with an APIService, and uses it as users do: discovery and kubectl get
// go through the API server, which vouches for the user as front proxy;
// the APIService's Available condition follows the server's endpoints.
func TestAPIAggregation(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "aggregation")

	// Extension servers learn whom to trust from this ConfigMap.
	auth, err := client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if auth.Data["requestheader-allowed-names"] != `["front-proxy-client"]` || auth.Data["requestheader-username-headers"] != `["X-Remote-User"]` {
		t.Errorf("extension-apiserver-authentication: %v", auth.Data)
	}
	frontProxyCAs := x509.NewCertPool()
	if !frontProxyCAs.AppendCertsFromPEM([]byte(auth.Data["requestheader-client-ca-file"])) {
		t.Fatal("no front proxy CA published")
	}

	ip := hostIPv4(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	_, caPEM := tlsServerOn(t, ln, wardle{ns}, "wardle."+ns+".svc", func(c *tls.Config) {
		c.ClientAuth, c.ClientCAs = tls.VerifyClientCertIfGiven, frontProxyCAs
	})
	port := int32(ln.Addr().(*net.TCPAddr).Port)
	if _, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "wardle"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(port)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "wardle-1", Labels: map[string]string{discoveryv1.LabelServiceName: "wardle"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port)}},
	}
	if _, err := client.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	apiService := fmt.Sprintf(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1alpha1.wardle.example.com}
spec:
  group: wardle.example.com
  version: v1alpha1
  groupPriorityMinimum: 2000
  versionPriority: 200
  service: {name: wardle, namespace: %s, port: 443}
  caBundle: %s
`, ns, base64PEM(caPEM))
	mustKubectl(t, apiService, "apply", "-f", "-")
	defer runKubectl(t, "", "delete", "apiservice", "v1alpha1.wardle.example.com")

	eventually(t, 15*time.Second, func() error {
		out := mustKubectl(t, "", "get", "apiservice", "v1alpha1.wardle.example.com", "--no-headers")
		if f := strings.Fields(out); len(f) < 3 || f[1] != ns+"/wardle" || f[2] != "True" {
			return fmt.Errorf("kubectl get apiservice: %q", out)
		}
		return nil
	})
	eventually(t, 15*time.Second, func() error {
		out := mustKubectl(t, "", "api-resources", "--api-group=wardle.example.com", "--no-headers")
		if f := strings.Fields(out); len(f) < 4 || f[0] != "flunders" || f[1] != "wardle.example.com/v1alpha1" || f[3] != "Flunder" {
			return fmt.Errorf("kubectl api-resources: %q", out)
		}
		return nil
	})
	out := mustKubectl(t, "", "-n", ns, "get", "flunders", "-o", `jsonpath={.items[0].metadata.name} {.items[0].metadata.annotations.seen-by} {.items[0].metadata.annotations.groups}`)
	if f := strings.Fields(out); len(f) != 3 || f[0] != "first" || f[1] != "system:admin" || !strings.Contains(f[2], "system:masters") {
		t.Errorf("flunders through the aggregator: %q", out)
	}
	if out := mustKubectl(t, "", "get", "--raw", "/apis/wardle.example.com"); !strings.Contains(out, `"preferredVersion":{"groupVersion":"wardle.example.com/v1alpha1"`) {
		t.Errorf("/apis/wardle.example.com: %s", out)
	}
	// The extension server's OpenAPI joins the server's: kubectl explain
	// reads the v3 document, and the v2 one has the model too.
	eventually(t, 15*time.Second, func() error {
		res := runKubectl(t, "", "explain", "flunders.spec.reference")
		if res.Code != 0 || !strings.Contains(res.Stdout, "What the flunder refers to.") {
			return fmt.Errorf("kubectl explain: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
		}
		return nil
	})
	if out := mustKubectl(t, "", "get", "--raw", "/openapi/v2"); !strings.Contains(out, flunderModel) {
		t.Error("/openapi/v2 lacks the extension server's model")
	}

	// Without endpoints the APIService is unavailable and its requests
	// answered 503.
	if err := client.DiscoveryV1().EndpointSlices(ns).Delete(ctx, slice.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, func() error {
		out := mustKubectl(t, "", "get", "apiservice", "v1alpha1.wardle.example.com", "-o", `jsonpath={.status.conditions[0].status} {.status.conditions[0].reason}`)
		if out != "False MissingEndpoints" {
			return fmt.Errorf("Available condition: %q", out)
		}
		return nil
	})
	dyn := dynamic.NewForConfigOrDie(restCfg)
	_, err = dyn.Resource(schema.GroupVersionResource{Group: "wardle.example.com", Version: "v1alpha1", Resource: "flunders"}).Namespace(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsServiceUnavailable(err) {
		t.Errorf("list while unavailable: %v, want 503", err)
	}
}

// base64PEM encodes a PEM for a manifest's bytes field.
func base64PEM(pem []byte) string {
	data, _ := json.Marshal(pem)
	return strings.Trim(string(data), `"`)
}
