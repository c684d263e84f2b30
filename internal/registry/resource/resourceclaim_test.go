package resource

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// claim is the claim of upstream's conformance test: one device of class
// dra.example.com.
func claim(mutate func(*resourcev1.DeviceClaim)) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "test", Namespace: "dra"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name:    "req-0",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "dra.example.com"},
		}}}},
	}
	if mutate != nil {
		mutate(&c.Spec.Devices)
	}
	return c
}

func TestDefaultResourceClaim(t *testing.T) {
	c := claim(func(d *resourcev1.DeviceClaim) {
		d.Requests[0].Exactly.Tolerations = []resourcev1.DeviceToleration{{Key: "k"}}
		d.Requests = append(d.Requests, resourcev1.DeviceRequest{Name: "all", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeAll,
		}})
	})
	Resourceclaims.Default(c)
	e := c.Spec.Devices.Requests[0].Exactly
	if e.AllocationMode != resourcev1.DeviceAllocationModeExactCount || e.Count != 1 {
		t.Errorf("exact request defaults: mode %q count %d, want ExactCount 1", e.AllocationMode, e.Count)
	}
	if e.Tolerations[0].Operator != resourcev1.DeviceTolerationOpEqual {
		t.Errorf("toleration operator %q, want Equal", e.Tolerations[0].Operator)
	}
	if all := c.Spec.Devices.Requests[1].Exactly; all.Count != 0 {
		t.Errorf("an All request got count %d", all.Count)
	}
}

func TestValidateResourceClaim(t *testing.T) {
	exact := func(mutate func(*resourcev1.ExactDeviceRequest)) func(*resourcev1.DeviceClaim) {
		return func(d *resourcev1.DeviceClaim) { mutate(d.Requests[0].Exactly) }
	}
	for _, tc := range []struct {
		name   string
		mutate func(*resourcev1.DeviceClaim)
		want   []wantErr
	}{
		{name: "conformance claim"},
		{name: "no requests", mutate: func(d *resourcev1.DeviceClaim) { d.Requests = nil }},
		{name: "request name not a label", mutate: func(d *resourcev1.DeviceClaim) { d.Requests[0].Name = "Req_0" },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices.requests[0].name"}}},
		{name: "neither exactly nor firstAvailable", mutate: func(d *resourcev1.DeviceClaim) { d.Requests[0].Exactly = nil },
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.devices.requests[0]", Detail: "exactly one of `exactly` or `firstAvailable` is required"}}},
		{name: "both exactly and firstAvailable", mutate: func(d *resourcev1.DeviceClaim) {
			d.Requests[0].FirstAvailable = []resourcev1.DeviceSubRequest{{Name: "a", DeviceClassName: "c"}}
		}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices.requests[0]", Detail: "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"}}},
		{name: "no device class", mutate: exact(func(e *resourcev1.ExactDeviceRequest) { e.DeviceClassName = "" }),
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.devices.requests[0].exactly.deviceClassName"}}},
		{name: "device class not a subdomain", mutate: exact(func(e *resourcev1.ExactDeviceRequest) { e.DeviceClassName = "GPU!" }),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices.requests[0].exactly.deviceClassName"}}},
		{name: "negative count", mutate: exact(func(e *resourcev1.ExactDeviceRequest) { e.Count = -1 }),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices.requests[0].exactly.count", Detail: "must be greater than zero"}}},
		{name: "count with All", mutate: exact(func(e *resourcev1.ExactDeviceRequest) {
			e.AllocationMode, e.Count = resourcev1.DeviceAllocationModeAll, 2
		}),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices.requests[0].exactly.count", Detail: "must not be specified when allocationMode is 'All'"}}},
		{name: "unknown allocation mode", mutate: exact(func(e *resourcev1.ExactDeviceRequest) { e.AllocationMode = "Some" }),
			want: []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.devices.requests[0].exactly.allocationMode"}}},
		{name: "toleration with a value for Exists", mutate: exact(func(e *resourcev1.ExactDeviceRequest) {
			e.Tolerations = []resourcev1.DeviceToleration{{Key: "k", Operator: resourcev1.DeviceTolerationOpExists, Value: "v"}}
		}), want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices.requests[0].exactly.tolerations[0].value", Detail: "must be empty for operator `Exists`"}}},
		{name: "selector without CEL", mutate: exact(func(e *resourcev1.ExactDeviceRequest) { e.Selectors = []resourcev1.DeviceSelector{{}} }),
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.devices.requests[0].exactly.selectors[0].cel"}}},
		{name: "duplicate request names", mutate: func(d *resourcev1.DeviceClaim) { d.Requests = append(d.Requests, d.Requests[0]) },
			want: []wantErr{{Type: field.ErrorTypeDuplicate, Field: "spec.devices.requests[1]"}}},
		{name: "first available", mutate: func(d *resourcev1.DeviceClaim) {
			d.Requests[0].Exactly = nil
			d.Requests[0].FirstAvailable = []resourcev1.DeviceSubRequest{{Name: "big", DeviceClassName: "gpu-80g"}, {Name: "small", DeviceClassName: "gpu-40g", Count: 2}}
			d.Constraints = []resourcev1.DeviceConstraint{{Requests: []string{"req-0/big"}, MatchAttribute: ptr.To[resourcev1.FullyQualifiedName]("dra.example.com/model")}}
		}},
		{name: "subrequest without class", mutate: func(d *resourcev1.DeviceClaim) {
			d.Requests[0].Exactly = nil
			d.Requests[0].FirstAvailable = []resourcev1.DeviceSubRequest{{Name: "big"}}
		}, want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.devices.requests[0].firstAvailable[0].deviceClassName"}}},
		{name: "constraint on an unknown request", mutate: func(d *resourcev1.DeviceClaim) {
			d.Constraints = []resourcev1.DeviceConstraint{{Requests: []string{"req-1"}, MatchAttribute: ptr.To[resourcev1.FullyQualifiedName]("dra.example.com/model")}}
		}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices.constraints[0].requests[0]", Detail: requestRefMessage}}},
		{name: "constraint on a subrequest of a plain request", mutate: func(d *resourcev1.DeviceClaim) {
			d.Constraints = []resourcev1.DeviceConstraint{{Requests: []string{"req-0/a"}, MatchAttribute: ptr.To[resourcev1.FullyQualifiedName]("dra.example.com/model")}}
		}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices.constraints[0].requests[0]", Detail: requestRefMessage}}},
		{name: "constraint without attribute", mutate: func(d *resourcev1.DeviceClaim) {
			d.Constraints = []resourcev1.DeviceConstraint{{}}
		}, want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.devices.constraints[0]", Detail: `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`}}},
		{name: "constraint attribute without domain", mutate: func(d *resourcev1.DeviceClaim) {
			d.Constraints = []resourcev1.DeviceConstraint{{MatchAttribute: ptr.To[resourcev1.FullyQualifiedName]("model")}}
		}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices.constraints[0].matchAttribute"}}},
		{name: "configuration for a request", mutate: func(d *resourcev1.DeviceClaim) {
			d.Config = []resourcev1.DeviceClaimConfiguration{{Requests: []string{"req-0"}, DeviceConfiguration: opaque("dra.example.com", `{}`)}}
		}},
		{name: "configuration for an unknown request", mutate: func(d *resourcev1.DeviceClaim) {
			d.Config = []resourcev1.DeviceClaimConfiguration{{Requests: []string{"a/b/c"}, DeviceConfiguration: opaque("dra.example.com", `{}`)}}
		}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices.config[0].requests[0]", Detail: requestRefMessage}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, create(Resourceclaims, claim(tc.mutate)), tc.want)
		})
	}
}

// Derived attributes are alpha in upstream's v1.37 and dropped unless the
// stored claim has them.
func TestDerivedAttributesDropped(t *testing.T) {
	c := claim(func(d *resourcev1.DeviceClaim) {
		d.Requests[0].Exactly.DerivedAttributes = []resourcev1.DeviceDerivedAttribute{{Name: "x", Expression: "1"}}
	})
	create(Resourceclaims, c)
	if c.Spec.Devices.Requests[0].Exactly.DerivedAttributes != nil {
		t.Errorf("derived attributes kept on create")
	}
}

func TestUpdateResourceClaim(t *testing.T) {
	old := claim(nil)
	create(Resourceclaims, old)
	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"test.dra.example.com": "test"}
	checkErrs(t, update(Resourceclaims, labelled, old), nil)
	changed := old.DeepCopy()
	changed.Spec.Devices.Requests[0].Exactly.DeviceClassName = "other"
	errs := update(Resourceclaims, changed, old)
	checkErrs(t, errs, []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "field is immutable"}})
	if got := errs[0].Error(); got != "spec: Invalid value: null: field is immutable" {
		t.Errorf("immutable spec reads %q", got)
	}
}

func TestUpdateResourceClaimStatus(t *testing.T) {
	result := resourcev1.DeviceRequestAllocationResult{Request: "req-0", Driver: "dra.example.com", Pool: "node-1", Device: "gpu-0"}
	allocated := func(results ...resourcev1.DeviceRequestAllocationResult) *resourcev1.AllocationResult {
		return &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: results}}
	}
	pod := resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: "p", UID: "u1"}
	for _, tc := range []struct {
		name      string
		old, next resourcev1.ResourceClaimStatus
		want      []wantErr
	}{
		{name: "empty allocation, as the conformance test writes", next: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{}}},
		{name: "allocation and reservation", next: resourcev1.ResourceClaimStatus{Allocation: allocated(result), ReservedFor: []resourcev1.ResourceClaimConsumerReference{pod}}},
		{name: "reserved without allocation", next: resourcev1.ResourceClaimStatus{ReservedFor: []resourcev1.ResourceClaimConsumerReference{pod}},
			want: []wantErr{{Type: field.ErrorTypeForbidden, Field: "status.reservedFor", Detail: "may not be specified when `allocated` is not set"}}},
		{name: "consumer without uid", next: resourcev1.ResourceClaimStatus{Allocation: allocated(result), ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p"}}},
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "status.reservedFor[0].uid"}}},
		{name: "result for an unknown request", next: resourcev1.ResourceClaimStatus{Allocation: allocated(resourcev1.DeviceRequestAllocationResult{Request: "req-9", Driver: "dra.example.com", Pool: "p", Device: "d"})},
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.allocation.devices.results[0].request", Detail: requestRefMessage}}},
		{name: "result without device", next: resourcev1.ResourceClaimStatus{Allocation: allocated(resourcev1.DeviceRequestAllocationResult{Request: "req-0", Driver: "dra.example.com", Pool: "p"})},
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.allocation.devices.results[0].device"}}},
		{name: "allocation changed", old: resourcev1.ResourceClaimStatus{Allocation: allocated(result)}, next: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{}},
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.allocation", Detail: "field cannot be modified once set"}}},
		{name: "allocation removed", old: resourcev1.ResourceClaimStatus{Allocation: allocated(result)}},
		{name: "status of an allocated device", next: resourcev1.ResourceClaimStatus{Allocation: allocated(result), Devices: []resourcev1.AllocatedDeviceStatus{
			{Driver: "dra.example.com", Pool: "node-1", Device: "gpu-0", NetworkData: &resourcev1.NetworkDeviceData{IPs: []string{"10.9.8.7/24"}}},
		}}},
		{name: "status of another device", next: resourcev1.ResourceClaimStatus{Allocation: allocated(result), Devices: []resourcev1.AllocatedDeviceStatus{
			{Driver: "dra.example.com", Pool: "node-1", Device: "gpu-1"},
		}}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.devices[0]", Detail: "must be an allocated device in the claim"}}},
		{name: "device address without prefix", next: resourcev1.ResourceClaimStatus{Allocation: allocated(result), Devices: []resourcev1.AllocatedDeviceStatus{
			{Driver: "dra.example.com", Pool: "node-1", Device: "gpu-0", NetworkData: &resourcev1.NetworkDeviceData{IPs: []string{"10.9.8.7"}}},
		}}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.devices[0].networkData.ips[0]"}}},
		{name: "device data not an object", next: resourcev1.ResourceClaimStatus{Allocation: allocated(result), Devices: []resourcev1.AllocatedDeviceStatus{
			{Driver: "dra.example.com", Pool: "node-1", Device: "gpu-0", Data: &runtime.RawExtension{Raw: []byte(`"up"`)}},
		}}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "status.devices[0].data", Detail: "must be a valid JSON object"}}},
		{name: "allocation node selector", next: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{NodeSelector: &corev1.NodeSelector{}}},
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "status.allocation.nodeSelector.nodeSelectorTerms"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := claim(nil)
			create(Resourceclaims, old)
			old.Status = tc.old
			next := old.DeepCopy()
			next.Status = tc.next
			checkErrs(t, updateStatus(Resourceclaims, next, old), tc.want)
		})
	}
}

func TestNewConsumersOfADeletedClaim(t *testing.T) {
	allocation := &resourcev1.AllocationResult{}
	old := claim(nil)
	create(Resourceclaims, old)
	now := metav1.Now()
	old.DeletionTimestamp = &now
	old.Status = resourcev1.ResourceClaimStatus{Allocation: allocation, ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "a", UID: "1"}}}
	fewer := old.DeepCopy()
	fewer.Status.ReservedFor = nil
	checkErrs(t, updateStatus(Resourceclaims, fewer, old), nil)
	more := old.DeepCopy()
	more.Status.ReservedFor = append(more.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: "b", UID: "2"})
	checkErrs(t, updateStatus(Resourceclaims, more, old), []wantErr{{Type: field.ErrorTypeForbidden, Field: "status.reservedFor"}})
}

// A driver's report on a device goes when the claim lets the device go.
func TestDeallocationDropsDeviceStatus(t *testing.T) {
	result := resourcev1.DeviceRequestAllocationResult{Request: "req-0", Driver: "dra.example.com", Pool: "node-1", Device: "gpu-0"}
	old := claim(nil)
	old.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{result}}}
	old.Status.Devices = []resourcev1.AllocatedDeviceStatus{{Driver: "dra.example.com", Pool: "node-1", Device: "gpu-0"}}
	kept := old.DeepCopy()
	prepareClaimStatus(kept, old)
	if len(kept.Status.Devices) != 1 {
		t.Errorf("device status dropped while the device is still allocated")
	}
	deallocated := old.DeepCopy()
	deallocated.Status.Allocation = nil
	prepareClaimStatus(deallocated, old)
	if deallocated.Status.Devices != nil {
		t.Errorf("device status kept after deallocation: %+v", deallocated.Status.Devices)
	}
}

func TestValidateResourceClaimTemplate(t *testing.T) {
	template := func(mutate func(*resourcev1.ResourceClaimTemplateSpec)) *resourcev1.ResourceClaimTemplate {
		rct := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "test", Namespace: "dra"}, Spec: resourcev1.ResourceClaimTemplateSpec{Spec: claim(nil).Spec}}
		if mutate != nil {
			mutate(&rct.Spec)
		}
		return rct
	}
	for _, tc := range []struct {
		name   string
		mutate func(*resourcev1.ResourceClaimTemplateSpec)
		want   []wantErr
	}{
		{name: "conformance template"},
		{name: "claim labels", mutate: func(s *resourcev1.ResourceClaimTemplateSpec) { s.Labels = map[string]string{"app": "x"} }},
		{name: "claim name", mutate: func(s *resourcev1.ResourceClaimTemplateSpec) { s.Name = "fixed" },
			want: []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec.metadata.name", Detail: "cannot be set"}}},
		{name: "invalid request", mutate: func(s *resourcev1.ResourceClaimTemplateSpec) { s.Spec.Devices.Requests[0].Exactly.DeviceClassName = "" },
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.spec.devices.requests[0].exactly.deviceClassName"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, create(Resourceclaimtemplates, template(tc.mutate)), tc.want)
		})
	}
	old := template(nil)
	create(Resourceclaimtemplates, old)
	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"test.dra.example.com": "test"}
	checkErrs(t, update(Resourceclaimtemplates, labelled, old), nil)
	changed := old.DeepCopy()
	changed.Spec.Spec.Devices.Requests[0].Exactly.Count = 2
	checkErrs(t, update(Resourceclaimtemplates, changed, old), []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "field is immutable"}})
}
