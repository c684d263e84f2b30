package resource

import (
	"context"
	"fmt"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/core"
)

// Resourceslices is the resourceslices resource: the devices a driver
// offers, one pool at a time, on a node or on nodes a selector picks.
var Resourceslices = &registry.Resource{
	Group: "resource.k8s.io", Version: "v1", Name: "resourceslices", Singular: "resourceslice", Kind: "ResourceSlice",
	Namespaced:       false,
	TracksGeneration: true,
	New:              func() runtime.Object { return &resourcev1.ResourceSlice{} },
	NewList:          func() runtime.Object { return &resourcev1.ResourceSliceList{} },
	Default:          registry.Typed(defaultResourceSlice),
	PrepareForCreate: registry.Typed(func(s *resourcev1.ResourceSlice) { dropDisabledSliceFields(&s.Spec, nil) }),
	PrepareForUpdate: registry.Typed2(func(s, old *resourcev1.ResourceSlice) { dropDisabledSliceFields(&s.Spec, &old.Spec) }),
	Validate:         registry.TypedValidate(validateResourceSlice),
	ValidateUpdate:   registry.TypedValidateUpdate(validateResourceSliceUpdate),
	Table:            resourcesliceTable,
	Fields:           resourcesliceFields,
}

// resourcesliceFields are upstream's: kubelets and drivers list the
// slices of one node, driver or pool.
var resourcesliceFields = registry.TypedFields(func(s *resourcev1.ResourceSlice) fields.Set {
	node := ""
	if s.Spec.NodeName != nil {
		node = *s.Spec.NodeName
	}
	return fields.Set{
		resourcev1.ResourceSliceSelectorNodeName: node,
		resourcev1.ResourceSliceSelectorDriver:   s.Spec.Driver,
		"spec.pool.name":                         s.Spec.Pool.Name,
	}
})

// defaultResourceSlice stamps a device taint with when it was added.
func defaultResourceSlice(s *resourcev1.ResourceSlice) {
	for i := range s.Spec.Devices {
		defaultTaintTime(s.Spec.Devices[i].Taints)
	}
}

func defaultTaintTime(taints []resourcev1.DeviceTaint) {
	for i := range taints {
		defaultTaint(&taints[i])
	}
}

func defaultTaint(t *resourcev1.DeviceTaint) {
	if t.TimeAdded == nil {
		now := metav1.Now().Rfc3339Copy()
		t.TimeAdded = &now
	}
}

// dropDisabledSliceFields clears the fields of features that are alpha,
// and so off, in upstream's v1.37, unless the stored slice already uses
// them: list-valued attributes, node allocatable resources, counter
// compatibility groups, the partition type attribute and skipped node
// operations.
func dropDisabledSliceFields(spec, old *resourcev1.ResourceSliceSpec) {
	uses := func(in func(*resourcev1.ResourceSliceSpec) bool) bool { return old != nil && in(old) }
	if !uses(hasListAttributes) {
		for _, d := range spec.Devices {
			for name, a := range d.Attributes {
				a.BoolValues, a.IntValues, a.StringValues, a.VersionValues = nil, nil, nil, nil
				d.Attributes[name] = a
			}
		}
	}
	if !uses(hasNodeAllocatableResources) {
		for i := range spec.Devices {
			spec.Devices[i].NodeAllocatableResources = nil
		}
	}
	if !uses(hasCompatibilityGroups) {
		for i := range spec.Devices {
			for j := range spec.Devices[i].ConsumesCounters {
				spec.Devices[i].ConsumesCounters[j].CompatibilityGroups = nil
			}
		}
	}
	if !uses(func(s *resourcev1.ResourceSliceSpec) bool { return s.PartitionTypeAttribute != nil }) {
		spec.PartitionTypeAttribute = nil
	}
	if !uses(func(s *resourcev1.ResourceSliceSpec) bool { return len(s.SkipNodeOperations) > 0 }) {
		spec.SkipNodeOperations = nil
	}
}

func hasListAttributes(spec *resourcev1.ResourceSliceSpec) bool {
	for _, d := range spec.Devices {
		for _, a := range d.Attributes {
			if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
				return true
			}
		}
	}
	return false
}

func hasNodeAllocatableResources(spec *resourcev1.ResourceSliceSpec) bool {
	for _, d := range spec.Devices {
		if len(d.NodeAllocatableResources) > 0 {
			return true
		}
	}
	return false
}

func hasCompatibilityGroups(spec *resourcev1.ResourceSliceSpec) bool {
	for _, d := range spec.Devices {
		for _, c := range d.ConsumesCounters {
			if len(c.CompatibilityGroups) > 0 {
				return true
			}
		}
	}
	return false
}

func validateResourceSlice(s *resourcev1.ResourceSlice) field.ErrorList {
	p := field.NewPath("spec")
	allErrs := validateSliceSpec(&s.Spec, p)
	return append(allErrs, declarative(resourcev1.Validate_ResourceSliceSpec(context.Background(), createOp(), p, &s.Spec, nil))...)
}

// A slice stays with its driver, pool and node: consumers find it by
// them, and the pool's generation counts only that pool's slices.
func validateResourceSliceUpdate(s, old *resourcev1.ResourceSlice) field.ErrorList {
	p := field.NewPath("spec")
	allErrs := apivalidation.ValidateImmutableField(s.Spec.Pool.Name, old.Spec.Pool.Name, p.Child("pool", "name"))
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(s.Spec.Driver, old.Spec.Driver, p.Child("driver"))...)
	return append(allErrs, apivalidation.ValidateImmutableField(s.Spec.NodeName, old.Spec.NodeName, p.Child("nodeName"))...)
}

const nodeSelectionFields = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"

func validateSliceSpec(spec *resourcev1.ResourceSliceSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateDriverName(spec.Driver, fldPath.Child("driver"))
	poolPath := fldPath.Child("pool")
	allErrs = append(allErrs, validatePoolName(spec.Pool.Name, poolPath.Child("name"))...)
	if spec.Pool.ResourceSliceCount <= 0 {
		allErrs = append(allErrs, field.Invalid(poolPath.Child("resourceSliceCount"), spec.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if spec.Pool.Generation < 0 {
		allErrs = append(allErrs, field.Invalid(poolPath.Child("generation"), spec.Pool.Generation, "must be greater than or equal to zero"))
	}

	// Where the devices are: on one node, on the nodes a selector picks,
	// on every node, or said device by device.
	var set []string
	if spec.NodeName != nil {
		if *spec.NodeName != "" {
			set = append(set, "`nodeName`")
			allErrs = append(allErrs, core.ValidateDNS1123Subdomain(*spec.NodeName, fldPath.Child("nodeName"))...)
		} else {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeName"), *spec.NodeName, "must be either unset or set to a non-empty string"))
		}
	}
	if spec.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		allErrs = append(allErrs, core.ValidateNodeSelector(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
		if len(spec.NodeSelector.NodeSelectorTerms) != 1 {
			// One term keeps the selectors of devices from several slices
			// mergeable.
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeSelector", "nodeSelectorTerms"), spec.NodeSelector.NodeSelectorTerms, "must have exactly one node selector term"))
		}
	}
	if spec.AllNodes != nil {
		if *spec.AllNodes {
			set = append(set, "`allNodes`")
		} else {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("allNodes"), *spec.AllNodes, "must be either unset or set to true"))
		}
	}
	if spec.PerDeviceNodeSelection != nil {
		if *spec.PerDeviceNodeSelection {
			set = append(set, "`perDeviceNodeSelection`")
		} else {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("perDeviceNodeSelection"), *spec.PerDeviceNodeSelection, "must be either unset or set to true"))
		}
	}
	switch len(set) {
	case 0:
		allErrs = append(allErrs, field.Required(fldPath, nodeSelectionFields))
	case 1:
	default:
		allErrs = append(allErrs, field.Invalid(fldPath, fmt.Sprintf("{%s}", strings.Join(set, ", ")), nodeSelectionFields+", but multiple fields are set"))
	}

	if spec.SharedCounters != nil && spec.Devices != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, "", "only one of `sharedCounters` or `devices` is allowed"))
	}

	// Devices with taints or counters cost more to allocate, so fewer of
	// them fit in a slice.
	maxDevices := resourcev1.ResourceSliceMaxDevices
	if hasDeviceTaints(spec) || hasConsumesCounters(spec) || hasListAttributes(spec) {
		maxDevices = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
	}
	devPath := fldPath.Child("devices")
	if len(spec.Devices) > maxDevices {
		allErrs = append(allErrs, field.TooMany(devPath, len(spec.Devices), maxDevices).WithOrigin("maxItems"))
	} else {
		for i, d := range spec.Devices {
			allErrs = append(allErrs, validateDevice(d, devPath.Index(i), spec.PerDeviceNodeSelection != nil && *spec.PerDeviceNodeSelection)...)
		}
		for i, d := range spec.Devices {
			if slices.ContainsFunc(spec.Devices[:i], func(o resourcev1.Device) bool { return o.Name == d.Name }) {
				allErrs = append(allErrs, field.Duplicate(devPath.Index(i), d.Name))
			}
		}
	}

	if len(spec.SharedCounters) <= resourcev1.ResourceSliceMaxCounterSets {
		for i, cs := range spec.SharedCounters {
			if len(cs.Counters) > resourcev1.ResourceSliceMaxCountersPerCounterSet {
				allErrs = append(allErrs, field.TooMany(fldPath.Child("sharedCounters").Index(i).Child("counters"), len(cs.Counters), resourcev1.ResourceSliceMaxCountersPerCounterSet))
			}
		}
	}
	return allErrs
}

func hasDeviceTaints(spec *resourcev1.ResourceSliceSpec) bool {
	return slices.ContainsFunc(spec.Devices, func(d resourcev1.Device) bool { return len(d.Taints) > 0 })
}

func hasConsumesCounters(spec *resourcev1.ResourceSliceSpec) bool {
	return slices.ContainsFunc(spec.Devices, func(d resourcev1.Device) bool { return len(d.ConsumesCounters) > 0 })
}

const perDeviceNodeFields = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"

// attributeAndCapacityMaxKeyLength bounds a qualified name: a domain, a
// slash and an identifier.
const attributeAndCapacityMaxKeyLength = resourcev1.DeviceMaxDomainLength + 1 + resourcev1.DeviceMaxIDLength

func validateDevice(d resourcev1.Device, fldPath *field.Path, perDeviceNodeSelection bool) field.ErrorList {
	allErrs := validateDeviceName(d.Name, fldPath.Child("name"))
	if n := len(d.Attributes) + len(d.Capacity); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		allErrs = append(allErrs, field.Invalid(fldPath, n, fmt.Sprintf("the total number of attributes and capacities must not exceed %d", resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)))
	}
	if n := len(d.Attributes); n > resourcev1.ResourceSliceMaxAttributeValuesPerDevice {
		allErrs = append(allErrs, field.Invalid(fldPath, n, fmt.Sprintf("the total number of attribute values must not exceed %d", resourcev1.ResourceSliceMaxAttributeValuesPerDevice)))
	}

	// Map entries are visited in name order, so that errors come out the
	// same every time (upstream's come in map order).
	attrPath := fldPath.Child("attributes")
	for _, name := range sortedKeys(d.Attributes) {
		allErrs = append(allErrs, validateQualifiedName(name, attrPath)...)
		allErrs = append(allErrs, validateAttributeValue(d.Attributes[name], attrPath.Key(truncate(string(name), attributeAndCapacityMaxKeyLength)))...)
	}
	capPath := fldPath.Child("capacity")
	for _, name := range sortedKeys(d.Capacity) {
		allErrs = append(allErrs, validateQualifiedName(name, capPath)...)
		// Consumable capacity's request policies are not checked further.
		if d.Capacity[name].RequestPolicy != nil && (d.AllowMultipleAllocations == nil || !*d.AllowMultipleAllocations) {
			allErrs = append(allErrs, field.Forbidden(capPath.Key(truncate(string(name), attributeAndCapacityMaxKeyLength)).Child("requestPolicy"), "allowMultipleAllocations must be true"))
		}
	}

	taintPath := fldPath.Child("taints")
	if len(d.Taints) > resourcev1.DeviceTaintsMaxLength {
		allErrs = append(allErrs, field.TooMany(taintPath, len(d.Taints), resourcev1.DeviceTaintsMaxLength).WithOrigin("maxItems"))
	} else {
		for i, t := range d.Taints {
			allErrs = append(allErrs, validateDeviceTaint(t, taintPath.Index(i))...)
		}
	}
	if len(d.ConsumesCounters) <= resourcev1.ResourceSliceMaxDeviceCounterConsumptionsPerDevice {
		for i, c := range d.ConsumesCounters {
			if len(c.Counters) > resourcev1.ResourceSliceMaxCountersPerDeviceCounterConsumption {
				allErrs = append(allErrs, field.TooMany(fldPath.Child("consumesCounters").Index(i).Child("counters"), len(c.Counters), resourcev1.ResourceSliceMaxCountersPerDeviceCounterConsumption))
			}
		}
	}

	if perDeviceNodeSelection {
		var set []string
		if d.NodeName != nil {
			if *d.NodeName != "" {
				set = append(set, "`nodeName`")
				allErrs = append(allErrs, core.ValidateDNS1123Subdomain(*d.NodeName, fldPath.Child("nodeName"))...)
			} else {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeName"), *d.NodeName, "must not be empty"))
			}
		}
		if d.NodeSelector != nil {
			set = append(set, "`nodeSelector`")
			allErrs = append(allErrs, core.ValidateNodeSelector(d.NodeSelector, fldPath.Child("nodeSelector"))...)
		}
		if d.AllNodes != nil {
			if *d.AllNodes {
				set = append(set, "`allNodes`")
			} else {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("allNodes"), *d.AllNodes, "must be either unset or set to true"))
			}
		}
		switch len(set) {
		case 0:
			allErrs = append(allErrs, field.Required(fldPath, perDeviceNodeFields))
		case 1:
		default:
			allErrs = append(allErrs, field.Invalid(fldPath, fmt.Sprintf("{%s}", strings.Join(set, ", ")), perDeviceNodeFields))
		}
	} else if d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"))
	}
	return append(allErrs, validateBindingConditions(d.BindingConditions, d.BindingFailureConditions, fldPath)...)
}

// validateAttributeValue checks a scalar attribute's value; that exactly
// one is set is the generated rules' (list values are dropped above).
func validateAttributeValue(a resourcev1.DeviceAttribute, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if a.StringValue != nil && len(*a.StringValue) > resourcev1.DeviceAttributeMaxValueLength {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("string"), "", resourcev1.DeviceAttributeMaxValueLength))
	}
	if v := a.VersionValue; v != nil {
		p := fldPath.Child("version")
		if !semverRE.MatchString(*v) {
			allErrs = append(allErrs, field.Invalid(p, *v, "must be a string compatible with semver.org spec 2.0.0"))
		}
		if len(*v) > resourcev1.DeviceAttributeMaxValueLength {
			allErrs = append(allErrs, field.TooLong(p, "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	return allErrs
}

// truncate shortens a long map key in the middle for an error's path, as
// upstream does; the key itself is reported in full where it is checked.
func truncate(s string, maxLen int) string {
	maxLen = max(maxLen, 16)
	if len(s) <= maxLen {
		return s
	}
	const ellipsis = "..."
	remaining := maxLen - len(ellipsis)
	return s[:(remaining+1)/2] + ellipsis + s[len(s)-remaining/2:]
}

func sortedKeys[V any](m map[resourcev1.QualifiedName]V) []resourcev1.QualifiedName {
	keys := make([]resourcev1.QualifiedName, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
