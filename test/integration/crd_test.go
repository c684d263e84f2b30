package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// gadgetCRD declares a namespaced resource whose schema uses every kind
// of OpenAPI keyword a CRD may, CEL rules (one a transition rule), status
// and scale subresources, printer columns, a category, a short name and a
// selectable field.
const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.crd.example.com
spec:
  group: crd.example.com
  scope: Namespaced
  names:
    plural: gadgets
    singular: gadget
    kind: Gadget
    shortNames: [gdg]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    selectableFields:
    - jsonPath: .spec.color
    schema:
      openAPIV3Schema:
        type: object
        description: A gadget made of parts.
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: self.replicas <= self.maxReplicas
              message: replicas must not exceed maxReplicas
            - rule: self.size == oldSelf.size
              messageExpression: "'size is immutable, was %d'.format([oldSelf.size])"
            properties:
              color:
                type: string
                description: The colour of the gadget.
                enum: [red, green, blue]
                default: red
              size:
                type: integer
                minimum: 1
                maximum: 10
                multipleOf: 1
              replicas: {type: integer, minimum: 0, default: 1}
              maxReplicas: {type: integer, default: 5}
              name: {type: string, pattern: '^[a-z]+$', minLength: 2, maxLength: 8}
              ratio: {type: number, exclusiveMinimum: true, minimum: 0}
              email: {type: string, format: email}
              port: {x-kubernetes-int-or-string: true}
              tags:
                type: array
                maxItems: 3
                x-kubernetes-list-type: set
                items: {type: string}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
              labels:
                type: object
                maxProperties: 2
                x-kubernetes-map-type: granular
                additionalProperties: {type: string}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              template:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
              nickname:
                type: string
                nullable: true
              mode:
                type: string
                anyOf:
                - pattern: '^fast'
                - pattern: '^slow'
                not:
                  enum: [fastest]
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
`

// TestCustomResourceDefinitions creates a CRD and drives its custom
// resources with kubectl and client-go: establishment, defaults, pruning,
// schema and CEL refusals with upstream's messages, subresources,
// printer columns, explain, apply on a list map, selectors, and deletion
// of the CRD with its objects.
func TestCustomResourceDefinitions(t *testing.T) {
	ctx := context.Background()
	ext := apiextensionsclient.NewForConfigOrDie(restCfg)
	dyn := dynamic.NewForConfigOrDie(restCfg)
	gvr := schema.GroupVersionResource{Group: "crd.example.com", Version: "v1", Resource: "gadgets"}
	ns := newNamespace(t, client, "crd")

	mustKubectl(t, gadgetCRD, "apply", "-f", "-")
	waitEstablished(t, ext, "gadgets.crd.example.com")
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "gadgets.crd.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := crd.Status.AcceptedNames; got.Plural != "gadgets" || got.ListKind != "GadgetList" || got.Singular != "gadget" {
		t.Errorf("accepted names %+v", got)
	}
	if len(crd.Status.StoredVersions) != 1 || crd.Status.StoredVersions[0] != "v1" {
		t.Errorf("storedVersions %v, want [v1]", crd.Status.StoredVersions)
	}
	if !strings.Contains(mustKubectl(t, "", "api-resources", "--api-group=crd.example.com"), "gadgets") {
		t.Error("kubectl api-resources does not list gadgets")
	}

	t.Run("defaults and pruning", func(t *testing.T) {
		res := runKubectl(t, `apiVersion: crd.example.com/v1
kind: Gadget
metadata: {name: plain, namespace: `+ns+`}
spec:
  size: 3
  bogus: 1
  extra: {anything: [1, 2]}
  port: http
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: inner}
    data: {a: b}
`, "apply", "--validate=warn", "-f", "-")
		if res.Code != 0 {
			t.Fatalf("apply: %s", res.Stderr)
		}
		if !strings.Contains(res.Stderr, `unknown field "spec.bogus"`) {
			t.Errorf("stderr %q lacks the unknown field warning", res.Stderr)
		}
		u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, "plain", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec := u.Object["spec"].(map[string]any)
		if _, ok := spec["bogus"]; ok {
			t.Error("unknown field kept")
		}
		want := map[string]any{"color": "red", "replicas": int64(1), "maxReplicas": int64(5), "port": "http"}
		for k, v := range want {
			if spec[k] != v {
				t.Errorf("spec.%s = %#v, want %#v", k, spec[k], v)
			}
		}
		if fmt.Sprint(spec["extra"]) != "map[anything:[1 2]]" {
			t.Errorf("preserved subtree: %v", spec["extra"])
		}
		if tpl := spec["template"].(map[string]any); tpl["kind"] != "ConfigMap" || fmt.Sprint(tpl["data"]) != "map[a:b]" {
			t.Errorf("embedded resource: %v", tpl)
		}
		if u.GetGeneration() != 1 {
			t.Errorf("generation %d, want 1", u.GetGeneration())
		}

		strict := runKubectl(t, `{"apiVersion":"crd.example.com/v1","kind":"Gadget","metadata":{"name":"strict","namespace":"`+ns+`"},"spec":{"size":1,"bogus":1}}`, "create", "-f", "-")
		if strict.Code == 0 || !strings.Contains(strict.Stderr, `strict decoding error: unknown field "spec.bogus"`) {
			t.Errorf("strict create: exit %d, %s", strict.Code, strict.Stderr)
		}
	})

	t.Run("schema refusals", func(t *testing.T) {
		cases := []struct{ spec, want string }{
			{`{"size":0}`, `spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`},
			{`{"size":11}`, `spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10`},
			{`{}`, `spec.size: Required value`},
			{`{"size":1,"color":"pink"}`, `spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"`},
			{`{"size":1,"name":"Bad_Name"}`, `spec.name in body should match '^[a-z]+$'`},
			{`{"size":1,"name":"x"}`, `spec.name in body should be at least 2 chars long`},
			{`{"size":1,"ratio":0}`, `spec.ratio in body should be greater than 0`},
			{`{"size":1,"email":"nope"}`, `spec.email in body must be of type email`},
			{`{"size":1,"tags":["a","a"]}`, `spec.tags[1]: Duplicate value: "a"`},
			{`{"size":1,"tags":["a","b","c","d"]}`, `spec.tags: Too many: 4: must have at most 3 items`},
			{`{"size":1,"ports":[{"name":"a"},{"name":"a"}]}`, `spec.ports[1]: Duplicate value: {"name":"a"}`},
			{`{"size":1,"labels":{"a":"1","b":"2","c":"3"}}`, `spec.labels: Too many: 3: must have at most 2 items`},
			{`{"size":1,"mode":"medium"}`, `spec.mode`},
			{`{"size":1,"mode":"fastest"}`, `"spec.mode" must not validate the schema (not)`},
			{`{"size":1,"port":true}`, `spec.port`},
			{`{"size":1,"replicas":9}`, `spec: Invalid value: replicas must not exceed maxReplicas`},
			{`{"size":1,"replicas":-1}`, `spec.replicas in body should be greater than or equal to 0`},
		}
		for i, c := range cases {
			body := fmt.Sprintf(`{"apiVersion":"crd.example.com/v1","kind":"Gadget","metadata":{"name":"bad%d","namespace":%q},"spec":%s}`, i, ns, c.spec)
			res := runKubectl(t, body, "create", "-f", "-")
			if res.Code == 0 {
				t.Errorf("spec %s was accepted", c.spec)
				continue
			}
			if !strings.Contains(res.Stderr, `The Gadget "bad`) || !strings.Contains(res.Stderr, c.want) {
				t.Errorf("spec %s: %s\nwant it to contain %q", c.spec, strings.TrimSpace(res.Stderr), c.want)
			}
		}
		// null for a nullable field is kept; for another, dropped.
		u := gadget(ns, "nulls", map[string]any{"size": int64(2), "nickname": nil, "name": nil})
		out, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec := out.Object["spec"].(map[string]any)
		if v, ok := spec["nickname"]; !ok || v != nil {
			t.Errorf("nullable null: %v %v", v, ok)
		}
		if _, ok := spec["name"]; ok {
			t.Error("null of a non-nullable field kept")
		}
	})

	t.Run("transition rule", func(t *testing.T) {
		mustKubectl(t, "", "-n", ns, "patch", "gadget", "plain", "--type=merge", "-p", `{"spec":{"color":"blue"}}`)
		res := runKubectl(t, "", "-n", ns, "patch", "gadget", "plain", "--type=merge", "-p", `{"spec":{"size":4}}`)
		if res.Code == 0 || !strings.Contains(res.Stderr, "size is immutable, was 3") {
			t.Errorf("changing size: exit %d, %s", res.Code, res.Stderr)
		}
		u, _ := dyn.Resource(gvr).Namespace(ns).Get(ctx, "plain", metav1.GetOptions{})
		if u.GetGeneration() != 2 {
			t.Errorf("generation after one spec change: %d, want 2", u.GetGeneration())
		}
		res = runKubectl(t, "", "-n", ns, "patch", "gadget", "plain", "--type=strategic", "-p", `{"spec":{"color":"red"}}`)
		if res.Code == 0 || !strings.Contains(res.Stderr, "application/strategic-merge-patch+json is not supported") {
			t.Errorf("strategic merge patch: exit %d, %s", res.Code, res.Stderr)
		}
	})

	t.Run("status and scale", func(t *testing.T) {
		mustKubectl(t, "", "-n", ns, "scale", "gadget", "plain", "--replicas=4")
		sc, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, "plain", metav1.GetOptions{}, "scale")
		if err != nil {
			t.Fatal(err)
		}
		if sc.GetKind() != "Scale" || fmt.Sprint(sc.Object["spec"]) != "map[replicas:4]" {
			t.Errorf("scale: %v", sc.Object)
		}
		// Status is ignored through the object and written through /status.
		u, _ := dyn.Resource(gvr).Namespace(ns).Get(ctx, "plain", metav1.GetOptions{})
		_ = unstructured.SetNestedField(u.Object, int64(9), "status", "replicas")
		u, err = dyn.Resource(gvr).Namespace(ns).Update(ctx, u, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := u.Object["status"]; ok {
			t.Errorf("status written through the object: %v", u.Object["status"])
		}
		mustKubectl(t, "", "-n", ns, "patch", "gadget", "plain", "--subresource=status", "--type=merge", "-p", `{"status":{"replicas":3,"selector":"app=x"},"spec":{"color":"green"}}`)
		u, _ = dyn.Resource(gvr).Namespace(ns).Get(ctx, "plain", metav1.GetOptions{})
		if r, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas"); r != 3 {
			t.Errorf("status.replicas %d, want 3", r)
		}
		if c, _, _ := unstructured.NestedString(u.Object, "spec", "color"); c != "blue" {
			t.Errorf("spec written through /status: color %q", c)
		}
		sc, _ = dyn.Resource(gvr).Namespace(ns).Get(ctx, "plain", metav1.GetOptions{}, "scale")
		if fmt.Sprint(sc.Object["status"]) != "map[replicas:3 selector:app=x]" {
			t.Errorf("scale status %v", sc.Object["status"])
		}
	})

	t.Run("kubectl get, explain and selectors", func(t *testing.T) {
		out := mustKubectl(t, "", "-n", ns, "get", "gdg", "plain")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME COLOR REPLICAS AGE" || !strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "plain blue 4 ") {
			t.Errorf("kubectl get:\n%s", out)
		}
		if out := mustKubectl(t, "", "-n", ns, "get", "all"); !strings.Contains(out, "gadget.crd.example.com/plain") {
			t.Errorf("kubectl get all lacks the gadget:\n%s", out)
		}
		if out := mustKubectl(t, "", "-n", ns, "get", "gadgets", "--field-selector=spec.color=blue", "-o", "name"); strings.TrimSpace(out) != "gadget.crd.example.com/plain" {
			t.Errorf("field selector spec.color=blue: %q", out)
		}
		if out := mustKubectl(t, "", "-n", ns, "get", "gadgets", "--field-selector=spec.color=green", "-o", "name"); strings.TrimSpace(out) != "" {
			t.Errorf("field selector spec.color=green: %q", out)
		}
		res := runKubectl(t, "", "-n", ns, "get", "gadgets", "--field-selector=spec.size=3")
		if res.Code == 0 || !strings.Contains(res.Stderr, `field label not supported: spec.size`) {
			t.Errorf("unselectable field: exit %d, %s", res.Code, res.Stderr)
		}
		eventually(t, 20*time.Second, func() error {
			res := runKubectl(t, "", "explain", "gadgets.spec.color")
			if res.Code != 0 || !strings.Contains(res.Stdout, "The colour of the gadget.") {
				return fmt.Errorf("kubectl explain: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
			}
			return nil
		})
	})

	t.Run("apply merges a list map by its keys", func(t *testing.T) {
		mustKubectl(t, `apiVersion: crd.example.com/v1
kind: Gadget
metadata: {name: applied, namespace: `+ns+`}
spec:
  size: 2
  ports: [{name: http, port: 80}]
`, "apply", "--server-side", "--field-manager=first", "-f", "-")
		mustKubectl(t, `apiVersion: crd.example.com/v1
kind: Gadget
metadata: {name: applied, namespace: `+ns+`}
spec:
  size: 2
  ports: [{name: https, port: 443}]
`, "apply", "--server-side", "--field-manager=second", "-f", "-")
		u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, "applied", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
		if fmt.Sprint(ports) != "[map[name:http port:80] map[name:https port:443]]" {
			t.Errorf("ports after two managers applied: %v", ports)
		}
		managers := map[string]bool{}
		for _, m := range u.GetManagedFields() {
			managers[m.Manager] = true
		}
		if !managers["first"] || !managers["second"] {
			t.Errorf("managedFields managers %v", managers)
		}
	})

	t.Run("watch", func(t *testing.T) {
		w, err := dyn.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, gadget(ns, "watched", map[string]any{"size": int64(5)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		timeout := time.After(10 * time.Second)
		for {
			select {
			case ev := <-w.ResultChan():
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetName() == "watched" {
					if c, _, _ := unstructured.NestedString(u.Object, "spec", "color"); c != "red" {
						t.Errorf("watched object not defaulted: %v", u.Object["spec"])
					}
					return
				}
			case <-timeout:
				t.Fatal("no watch event for the created gadget")
			}
		}
	})

	t.Run("name conflicts", func(t *testing.T) {
		other := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets.crd.example.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "crd.example.com", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Gadget"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}},
			},
		}
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, other, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, other.Name, metav1.DeleteOptions{})
		// Kind and list kind both conflict; as upstream, the condition
		// names the last conflict found.
		eventually(t, 10*time.Second, func() error {
			c, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, other.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, cond := range c.Status.Conditions {
				if cond.Type == apiextensionsv1.NamesAccepted && cond.Status == apiextensionsv1.ConditionFalse &&
					cond.Reason == "ListKindConflict" && cond.Message == `"GadgetList" is already in use` {
					return nil
				}
			}
			return fmt.Errorf("conditions %+v", c.Status.Conditions)
		})
		if _, err := dyn.Resource(gvr.GroupVersion().WithResource("widgets")).Namespace(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("list of a CRD whose names were refused: %v, want NotFound", err)
		}
		bad := other.DeepCopy()
		bad.Name = "wrong.crd.example.com"
		_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, bad, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `metadata.name: Invalid value: "wrong.crd.example.com": must be spec.names.plural+"."+spec.group`) {
			t.Errorf("CRD named other than plural.group: %v", err)
		}
	})

	t.Run("deleting the CRD deletes its objects", func(t *testing.T) {
		held := gadget(ns, "held", map[string]any{"size": int64(1)})
		held.SetFinalizers([]string{"crd.example.com/hold"})
		if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, held, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "gadgets.crd.example.com", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() error {
			l, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(l.Items) != 1 || l.Items[0].GetName() != "held" || l.Items[0].GetDeletionTimestamp() == nil {
				return fmt.Errorf("%d gadgets left", len(l.Items))
			}
			return nil
		})
		_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, gadget(ns, "late", map[string]any{"size": int64(1)}), metav1.CreateOptions{})
		if !apierrors.IsMethodNotSupported(err) || !strings.Contains(err.Error(), "create not allowed while custom resource definition is terminating") {
			t.Errorf("create while terminating: %v", err)
		}
		c, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "gadgets.crd.example.com", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Finalizers) != 1 || c.Finalizers[0] != apiextensionsv1.CustomResourceCleanupFinalizer {
			t.Errorf("finalizers of the terminating CRD: %v", c.Finalizers)
		}
		if _, err := dyn.Resource(gvr).Namespace(ns).Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() error {
			_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "gadgets.crd.example.com", metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD still there: %v", err)
			}
			return nil
		})
		eventually(t, 10*time.Second, func() error {
			if _, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("list after the CRD went: %v, want NotFound", err)
			}
			return nil
		})
	})
}

// gadget builds a Gadget with the given spec.
func gadget(ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("crd.example.com/v1")
	u.SetKind("Gadget")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// waitEstablished waits for a CRD's Established condition.
func waitEstablished(t *testing.T, ext apiextensionsclient.Interface, name string) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		c, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not established: %+v", c.Status.Conditions)
	})
}
