package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTableNotAcceptable follows "Servers with support for Table
// transformation should return a 406 for a backend which does not
// implement metadata": a SelfSubjectAccessReview has no table form.
func TestTableNotAcceptable(t *testing.T) {
	ctx := context.Background()
	sar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/", Verb: "get"},
	}}
	table := &metav1.Table{}
	err := client.AuthorizationV1().RESTClient().Post().Resource("selfsubjectaccessreviews").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Body(sar).Do(ctx).Into(table)
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Code != http.StatusNotAcceptable {
		t.Fatalf("want 406, got %v", err)
	}
	if msg := st.Status().Message; !strings.HasPrefix(msg, "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf") {
		t.Errorf("message: %q", msg)
	}
	// The review itself is served: every authenticated user is allowed.
	out, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil || !out.Status.Allowed {
		t.Fatalf("review: %v %+v", err, out)
	}
	if out := mustKubectl(t, "", "auth", "can-i", "get", "pods"); strings.TrimSpace(out) != "yes" {
		t.Errorf("kubectl auth can-i: %q", out)
	}
	// With JSON as a fallback, as kubectl asks, the server answers in JSON.
	code := rawRequestAccept(t, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json", sar)
	if code != http.StatusCreated {
		t.Errorf("with a JSON fallback: %d", code)
	}
	// A resource the server prints still gets a Table, on reads and on
	// writes.
	if err := client.CoreV1().RESTClient().Get().Resource("namespaces").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Into(table); err != nil || len(table.Rows) == 0 {
		t.Errorf("namespaces as Table: %v", err)
	}
	ns := newNamespace(t, client, "tables")
	cms := "/api/v1/namespaces/" + ns + "/configmaps"
	created := &metav1.Table{}
	err = client.CoreV1().RESTClient().Post().AbsPath(cms).SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		SetHeader("Content-Type", "application/json").Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"as-table"}}`)).Do(ctx).Into(created)
	if err != nil || len(created.Rows) != 1 || created.Rows[0].Cells[0] != "as-table" {
		t.Errorf("create answered as a Table: %v %+v", err, created)
	}
	// A client that accepts nothing the server writes is refused before
	// anything is written.
	if code := rawRequestAccept(t, "POST", cms, "application/xml", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "refused"}}); code != http.StatusNotAcceptable {
		t.Errorf("create accepting only XML: %d", code)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "refused", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused create was written: %v", err)
	}
}

// rawRequestAccept sends body as JSON with the given Accept header and
// returns the status code of the answer.
func rawRequestAccept(t *testing.T, method, path, accept string, body any) int {
	t.Helper()
	data, _ := json.Marshal(body)
	var code int
	client.CoreV1().RESTClient().Verb(method).AbsPath(path).SetHeader("Accept", accept).
		SetHeader("Content-Type", "application/json").Body(data).Do(context.Background()).StatusCode(&code)
	return code
}
