package resource

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// slice is the slice of upstream's conformance test: an empty pool on a
// node that does not exist.
func slice(mutate func(*resourcev1.ResourceSliceSpec)) *resourcev1.ResourceSlice {
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "test"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   "dra.example.com",
			Pool:     resourcev1.ResourcePool{Name: "cluster", Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To("no-such-node"),
		},
	}
	if mutate != nil {
		mutate(&s.Spec)
	}
	return s
}

func withDevice(d resourcev1.Device) func(*resourcev1.ResourceSliceSpec) {
	return func(s *resourcev1.ResourceSliceSpec) { s.Devices = append(s.Devices, d) }
}

func TestValidateResourceSlice(t *testing.T) {
	selector := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: corev1.NodeSelectorOpExists}}}}}
	for _, tc := range []struct {
		name   string
		mutate func(*resourcev1.ResourceSliceSpec)
		want   []wantErr
	}{
		{name: "conformance slice"},
		{name: "conformance update", mutate: withDevice(resourcev1.Device{Name: "device-0"})},
		{name: "no driver", mutate: func(s *resourcev1.ResourceSliceSpec) { s.Driver = "" },
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.driver"}}},
		{name: "driver not a subdomain", mutate: func(s *resourcev1.ResourceSliceSpec) { s.Driver = "dra_example" },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.driver"}}},
		{name: "pool of several parts", mutate: func(s *resourcev1.ResourceSliceSpec) { s.Pool.Name = "rack-1/node-2" }},
		{name: "no pool name", mutate: func(s *resourcev1.ResourceSliceSpec) { s.Pool.Name = "" },
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.pool.name"}}},
		{name: "bad pool part", mutate: func(s *resourcev1.ResourceSliceSpec) { s.Pool.Name = "a//b" },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.pool.name"}}},
		{name: "no slices in the pool", mutate: func(s *resourcev1.ResourceSliceSpec) { s.Pool.ResourceSliceCount = 0 },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.pool.resourceSliceCount", Detail: "must be greater than zero"}}},
		{name: "negative generation", mutate: func(s *resourcev1.ResourceSliceSpec) { s.Pool.Generation = -1 },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.pool.generation", Detail: "must be greater than or equal to zero"}}},
		{name: "no node", mutate: func(s *resourcev1.ResourceSliceSpec) { s.NodeName = nil },
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec", Detail: "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"}}},
		{name: "empty node name", mutate: func(s *resourcev1.ResourceSliceSpec) { s.NodeName = ptr.To("") },
			want: []wantErr{
				{Type: field.ErrorTypeInvalid, Field: "spec.nodeName", Detail: "must be either unset or set to a non-empty string"},
				{Type: field.ErrorTypeRequired, Field: "spec"},
			}},
		{name: "node and all nodes", mutate: func(s *resourcev1.ResourceSliceSpec) { s.AllNodes = ptr.To(true) },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"}}},
		{name: "node selector", mutate: func(s *resourcev1.ResourceSliceSpec) { s.NodeName, s.NodeSelector = nil, selector }},
		{name: "node selector of two terms", mutate: func(s *resourcev1.ResourceSliceSpec) {
			s.NodeName = nil
			s.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: append(selector.DeepCopy().NodeSelectorTerms, selector.NodeSelectorTerms[0])}
		}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.nodeSelector.nodeSelectorTerms", Detail: "must have exactly one node selector term"}}},
		{name: "all nodes false", mutate: func(s *resourcev1.ResourceSliceSpec) { s.NodeName, s.AllNodes = nil, ptr.To(false) },
			want: []wantErr{
				{Type: field.ErrorTypeInvalid, Field: "spec.allNodes", Detail: "must be either unset or set to true"},
				{Type: field.ErrorTypeRequired, Field: "spec"},
			}},
		{name: "counters and devices", mutate: func(s *resourcev1.ResourceSliceSpec) {
			s.Devices = []resourcev1.Device{{Name: "d"}}
			s.SharedCounters = []resourcev1.CounterSet{{Name: "mem", Counters: map[string]resourcev1.Counter{"bytes": {}}}}
		}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec", Detail: "only one of `sharedCounters` or `devices` is allowed"}}},
		{name: "device name not a label", mutate: withDevice(resourcev1.Device{Name: "gpu.0"}),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices[0].name"}}},
		{name: "duplicate devices", mutate: func(s *resourcev1.ResourceSliceSpec) { s.Devices = []resourcev1.Device{{Name: "d"}, {Name: "d"}} },
			want: []wantErr{{Type: field.ErrorTypeDuplicate, Field: "spec.devices[1]"}}},
		{name: "too many devices", mutate: func(s *resourcev1.ResourceSliceSpec) {
			s.Devices = make([]resourcev1.Device, resourcev1.ResourceSliceMaxDevices+1)
		}, want: []wantErr{{Type: field.ErrorTypeTooMany, Field: "spec.devices"}}},
		{name: "attributes", mutate: withDevice(resourcev1.Device{Name: "d", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"model": {StringValue: ptr.To("a100")}, "dra.example.com/driverVersion": {VersionValue: ptr.To("1.2.3-rc.1+build.5")},
		}})},
		{name: "attribute name not an identifier", mutate: withDevice(resourcev1.Device{Name: "d", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"model-name": {StringValue: ptr.To("a100")},
		}}), want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices[0].attributes"}}},
		{name: "attribute with an empty domain", mutate: withDevice(resourcev1.Device{Name: "d", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"/model": {StringValue: ptr.To("a100")},
		}}), want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices[0].attributes", Detail: "the domain must not be empty"}}},
		{name: "version not semver", mutate: withDevice(resourcev1.Device{Name: "d", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"v": {VersionValue: ptr.To("1.2")},
		}}), want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices[0].attributes[v].version", Detail: "must be a string compatible with semver.org spec 2.0.0"}}},
		{name: "string attribute too long", mutate: withDevice(resourcev1.Device{Name: "d", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"s": {StringValue: ptr.To(strings.Repeat("x", 65))},
		}}), want: []wantErr{{Type: field.ErrorTypeTooLong, Field: "spec.devices[0].attributes[s].string"}}},
		{name: "attribute without a value", mutate: withDevice(resourcev1.Device{Name: "d", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"s": {}}}),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices[0].attributes[s]"}}},
		{name: "request policy of a device allocated once", mutate: withDevice(resourcev1.Device{Name: "d", Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
			"memory": {RequestPolicy: &resourcev1.CapacityRequestPolicy{}},
		}}), want: []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec.devices[0].capacity[memory].requestPolicy", Detail: "allowMultipleAllocations must be true"}}},
		{name: "taint", mutate: withDevice(resourcev1.Device{Name: "d", Taints: []resourcev1.DeviceTaint{{Key: "example.com/broken", Value: "yes", Effect: resourcev1.DeviceTaintEffectNoSchedule}}})},
		{name: "taint with a bad key", mutate: withDevice(resourcev1.Device{Name: "d", Taints: []resourcev1.DeviceTaint{{Key: "bad key", Effect: resourcev1.DeviceTaintEffectNoSchedule}}}),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices[0].taints[0].key"}}},
		{name: "node name on a device", mutate: withDevice(resourcev1.Device{Name: "d", NodeName: ptr.To("n")}),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices[0]", Detail: "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"}}},
		{name: "per-device node selection", mutate: func(s *resourcev1.ResourceSliceSpec) {
			s.NodeName, s.PerDeviceNodeSelection = nil, ptr.To(true)
			s.Devices = []resourcev1.Device{{Name: "a", NodeName: ptr.To("n1")}, {Name: "b", AllNodes: ptr.To(true)}, {Name: "c"}}
		}, want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.devices[2]", Detail: "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"}}},
		{name: "binding failure conditions alone", mutate: withDevice(resourcev1.Device{Name: "d", BindingFailureConditions: []string{"failed"}}),
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.devices[0].bindingConditions", Detail: "bindingConditions are required to use bindingFailureConditions"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, create(Resourceslices, slice(tc.mutate)), tc.want)
		})
	}
}

func TestUpdateResourceSlice(t *testing.T) {
	old := slice(nil)
	create(Resourceslices, old)
	withDev := old.DeepCopy()
	withDev.Spec.Devices = []resourcev1.Device{{Name: "device-0"}}
	checkErrs(t, update(Resourceslices, withDev, old), nil)
	moved := old.DeepCopy()
	moved.Spec.NodeName = ptr.To("other-node")
	moved.Spec.Pool.Name = "other"
	checkErrs(t, update(Resourceslices, moved, old), []wantErr{
		{Type: field.ErrorTypeInvalid, Field: "spec.pool.name", Detail: "field is immutable"},
		{Type: field.ErrorTypeInvalid, Field: "spec.nodeName", Detail: "field is immutable"},
	})
}

// Alpha fields of upstream's v1.37 are dropped from new slices and kept
// on slices that already have them.
func TestResourceSliceAlphaFields(t *testing.T) {
	listy := func() *resourcev1.ResourceSlice {
		return slice(func(s *resourcev1.ResourceSliceSpec) {
			s.SkipNodeOperations = []resourcev1.SkipNodeOperation{resourcev1.SkipNodeOperationAll}
			s.Devices = []resourcev1.Device{{Name: "d", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"ids": {IntValues: []int64{1, 2}}}}}
		})
	}
	s := listy()
	create(Resourceslices, s)
	if s.Spec.SkipNodeOperations != nil || s.Spec.Devices[0].Attributes["ids"].IntValues != nil {
		t.Errorf("alpha fields kept on create: %+v", s.Spec)
	}
	old := listy()
	next := listy()
	Resourceslices.PrepareForUpdate(next, old)
	if next.Spec.SkipNodeOperations == nil || next.Spec.Devices[0].Attributes["ids"].IntValues == nil {
		t.Errorf("fields in use dropped on update: %+v", next.Spec)
	}
}

func TestResourceSliceTaintTime(t *testing.T) {
	s := slice(withDevice(resourcev1.Device{Name: "d", Taints: []resourcev1.DeviceTaint{{Key: "k", Effect: resourcev1.DeviceTaintEffectNoExecute}}}))
	Resourceslices.Default(s)
	if s.Spec.Devices[0].Taints[0].TimeAdded == nil {
		t.Error("taint without timeAdded")
	}
}

func TestResourceSliceFields(t *testing.T) {
	got := Resourceslices.Fields(slice(nil))
	want := fields.Set{"spec.nodeName": "no-such-node", "spec.driver": "dra.example.com", "spec.pool.name": "cluster"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	if got := Resourceslices.Fields(slice(func(s *resourcev1.ResourceSliceSpec) { s.NodeName = nil })); got["spec.nodeName"] != "" {
		t.Errorf("a slice without node selects as %q", got["spec.nodeName"])
	}
}
