package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValidatingAdmissionPolicy binds a policy with a ConfigMap of
// parameters that caps a Deployment's replicas: Deny refuses with the
// policy's message, Warn lets the write through with a warning, and a
// missing parameter denies as the binding says.
func TestValidatingAdmissionPolicy(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "vap")
	mustKubectl(t, "", "label", "namespace", ns, "vap=on")
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Data: map[string]string{"maxReplicas": "3"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	policy := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replica-limit}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  variables:
  - name: limit
    expression: int(params.data.maxReplicas)
  validations:
  - expression: object.spec.replicas <= variables.limit
    messageExpression: "'replicas ' + string(object.spec.replicas) + ' exceed the limit of ' + string(variables.limit)"
    reason: Invalid
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replica-limit-` + ns + `}
spec:
  policyName: replica-limit
  validationActions: [Deny]
  paramRef: {name: limits, namespace: ` + ns + `, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector: {matchLabels: {vap: "on"}}
`
	mustKubectl(t, policy, "apply", "-f", "-")
	defer runKubectl(t, "", "delete", "validatingadmissionpolicy", "replica-limit")
	defer runKubectl(t, "", "delete", "validatingadmissionpolicybinding", "replica-limit-"+ns)

	deployment := func(name string, replicas int) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: %s}
spec:
  replicas: %d
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers: [{name: c, image: busybox}]
`, name, ns, replicas, name, name)
	}
	want := `The deployments "big" is invalid: : ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-` + ns + `' denied request: replicas 5 exceed the limit of 3`
	eventually(t, 10*time.Second, func() error {
		res := runKubectl(t, deployment("big", 5), "create", "-f", "-")
		if res.Code == 0 {
			runKubectl(t, "", "-n", ns, "delete", "deployment", "big")
			return fmt.Errorf("over the limit: accepted")
		}
		if !strings.Contains(res.Stderr, want) {
			return fmt.Errorf("over the limit: %s\nwant %s", res.Stderr, want)
		}
		return nil
	})
	mustKubectl(t, deployment("small", 2), "create", "-f", "-")
	res := runKubectl(t, "", "-n", ns, "patch", "deployment", "small", "-p", `{"spec":{"replicas":4}}`)
	if res.Code == 0 || !strings.Contains(res.Stderr, "replicas 4 exceed the limit of 3") {
		t.Errorf("updating over the limit: exit %d, %s", res.Code, res.Stderr)
	}

	// Raising the parameter raises the limit.
	mustKubectl(t, "", "-n", ns, "patch", "configmap", "limits", "--type=merge", "-p", `{"data":{"maxReplicas":"10"}}`)
	eventually(t, 10*time.Second, func() error {
		if res := runKubectl(t, deployment("medium", 5), "create", "-f", "-"); res.Code != 0 {
			return fmt.Errorf("under the raised limit: %s", res.Stderr)
		}
		return nil
	})

	// Warn: the write goes through, the client is told.
	mustKubectl(t, "", "patch", "validatingadmissionpolicybinding", "replica-limit-"+ns, "--type=merge", "-p", `{"spec":{"validationActions":["Warn"]}}`)
	eventually(t, 10*time.Second, func() error {
		res := runKubectl(t, deployment("warned", 11), "create", "-f", "-")
		if res.Code != 0 {
			runKubectl(t, "", "-n", ns, "delete", "deployment", "warned")
			return fmt.Errorf("with Warn: %s", res.Stderr)
		}
		if !strings.Contains(res.Stderr, "Warning: Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-"+ns+"': replicas 11 exceed the limit of 10") {
			return fmt.Errorf("with Warn, stderr %q", res.Stderr)
		}
		return nil
	})

	// Without its parameter the binding denies, as parameterNotFoundAction
	// says.
	mustKubectl(t, "", "patch", "validatingadmissionpolicybinding", "replica-limit-"+ns, "--type=merge", "-p", `{"spec":{"validationActions":["Deny"]}}`)
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, "limits", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		res := runKubectl(t, deployment("orphan", 1), "create", "-f", "-")
		if res.Code == 0 {
			runKubectl(t, "", "-n", ns, "delete", "deployment", "orphan")
			return fmt.Errorf("without the parameter: accepted")
		}
		if !strings.Contains(res.Stderr, "no params found for policy binding with `Deny` parameterNotFoundAction") {
			return fmt.Errorf("without the parameter: %s", res.Stderr)
		}
		return nil
	})
}

// TestMutatingAdmissionPolicy adds a label to the ConfigMaps of a
// namespace with an apply configuration written in CEL.
func TestMutatingAdmissionPolicy(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, client, "map")
	mustKubectl(t, "", "label", "namespace", ns, "map=on")
	mustKubectl(t, `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: label-configmaps}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: {"policy": "applied"}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: label-configmaps-`+ns+`}
spec:
  policyName: label-configmaps
  matchResources:
    namespaceSelector: {matchLabels: {map: "on"}}
`, "apply", "-f", "-")
	defer runKubectl(t, "", "delete", "mutatingadmissionpolicy", "label-configmaps")
	defer runKubectl(t, "", "delete", "mutatingadmissionpolicybinding", "label-configmaps-"+ns)
	eventually(t, 10*time.Second, func() error {
		name := fmt.Sprintf("cm-%d", time.Now().UnixNano())
		cm, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if cm.Labels["policy"] != "applied" {
			return fmt.Errorf("labels %v", cm.Labels)
		}
		return nil
	})
	// Outside the binding's namespaces nothing changes.
	cm, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "unbound-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.CoreV1().ConfigMaps("default").Delete(ctx, cm.Name, metav1.DeleteOptions{})
	if _, ok := cm.Labels["policy"]; ok {
		t.Errorf("configmap outside the binding mutated: %v", cm.Labels)
	}
}
