package integration

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// TestDynamicResourceAllocationAPI drives resource.k8s.io/v1 as upstream's
// conformance tests do (their objects and changes), then prints the
// kinds through kubectl.
func TestDynamicResourceAllocationAPI(t *testing.T) {
	ns := testNamespace(t, "dra")
	hasAllocation := func(st map[string]any) error {
		if _, ok := st["allocation"]; !ok {
			return errors.New("no allocation")
		}
		return nil
	}
	hasCondition := func(st map[string]any) error {
		if c, _ := st["conditions"].([]any); len(c) != 1 {
			return errors.New("no condition")
		}
		return nil
	}
	claimSpec := `{"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "dra.example.com"}}]}}`
	label := `{"metadata": {"labels": {"test.dra.example.com": "test"}}}`
	for _, tc := range []crudCase{
		{gvr: resourcev1.SchemeGroupVersion.WithResource("deviceclasses"),
			object: `{"spec": {"selectors": [{"cel": {"expression": "false"}}]}}`,
			spec:   `{"spec": {"selectors": [{"cel": {"expression": "1 == 0"}}]}}`},
		{gvr: resourcev1.SchemeGroupVersion.WithResource("devicetaintrules"),
			object: `{"spec": {"taint": {"key": "testing", "effect": "None"}}}`,
			spec:   `{"spec": {"taint": {"effect": "NoExecute"}}}`,
			status: `{"status": {"conditions": [{"type": "Testing", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "E2E_test_running", "message": "This condition can be ignored."}]}}`,
			check:  hasCondition},
		{gvr: resourcev1.SchemeGroupVersion.WithResource("resourceclaims"), namespaced: true,
			object: `{"spec": ` + claimSpec + `}`, spec: label,
			status: `{"status": {"allocation": {}}}`, check: hasAllocation},
		{gvr: resourcev1.SchemeGroupVersion.WithResource("resourceclaimtemplates"), namespaced: true,
			object: `{"spec": {"spec": ` + claimSpec + `}}`, spec: label},
		{gvr: resourcev1.SchemeGroupVersion.WithResource("resourceslices"),
			object: `{"spec": {"driver": "dra.example.com", "pool": {"name": "cluster", "generation": 1, "resourceSliceCount": 1}, "nodeName": "no-such-node"}}`,
			spec:   `{"spec": {"devices": [{"name": "device-0"}]}}`},
	} {
		t.Run(tc.gvr.Resource, func(t *testing.T) { runCRUD(t, ns, tc) })
	}

	suffix := utilrand.String(5)
	t.Cleanup(func() {
		runKubectl(t, "", "delete", "deviceclass/gpu-"+suffix, "resourceslice/gpus-"+suffix, "devicetaintrule/broken-"+suffix, "--ignore-not-found")
	})
	mustKubectl(t, fmt.Sprintf(`
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: %[1]s}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu-%[2]s}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu-%[2]s}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpus-%[2]s}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices: [{name: gpu-0, attributes: {model: {string: a100}}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: broken-%[2]s}
spec:
  deviceSelector: {driver: gpu.example.com, device: gpu-0}
  taint: {key: example.com/broken, value: "yes", effect: NoSchedule}
`, ns, suffix), "apply", "-f", "-")
	out := mustKubectl(t, "", "get", "resourceclaims", "-n", ns)
	if h := header(out); h != "NAME STATE AGE" {
		t.Errorf("resourceclaims header %q", h)
	}
	if row := tableRow(t, out, "gpu"); row[1] != "pending" {
		t.Errorf("resourceclaim row %q, want pending", row)
	}
	res := runKubectl(t, "", "patch", "resourceclaim", "gpu", "-n", ns, "--type=merge", "-p", `{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"other"}}]}}}`)
	if want := `The ResourceClaim "gpu" is invalid: spec: Invalid value: null: field is immutable`; res.Code == 0 || !strings.Contains(res.Stderr, want) {
		t.Errorf("changing a claim's spec: exit %d, stderr %q, want %q", res.Code, res.Stderr, want)
	}
	for _, tc := range []struct{ resource, name, header, row string }{
		{"deviceclasses", "gpu-" + suffix, "NAME AGE", ""},
		{"resourceslices", "gpus-" + suffix, "NAME NODE DRIVER POOL AGE", "node-1 gpu.example.com node-1"},
		{"devicetaintrules", "broken-" + suffix, "NAME KEY VALUE EFFECT TIMEADDED AGE", "example.com/broken yes NoSchedule"},
	} {
		out := mustKubectl(t, "", "get", tc.resource, tc.name)
		if h := header(out); h != tc.header {
			t.Errorf("%s header %q, want %q", tc.resource, h, tc.header)
		}
		if row := strings.Join(tableRow(t, out, tc.name)[1:], " "); !strings.HasPrefix(row, tc.row) {
			t.Errorf("%s row %q, want it to start with %q", tc.resource, row, tc.row)
		}
	}
	out = mustKubectl(t, "", "get", "resourceslices", "--field-selector", "spec.nodeName=node-1,spec.driver=gpu.example.com", "-o", "name")
	if strings.TrimSpace(out) != "resourceslice.resource.k8s.io/gpus-"+suffix {
		t.Errorf("slices of node-1 and the driver: %q", out)
	}
}
