package resource

import (
	"context"
	"slices"

	resourcev1 "k8s.io/api/resource/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry/core"
)

// Limits of a device's status that the Go API does not export.
const (
	allocatedDeviceStatusMaxConditions = 8
	allocatedDeviceStatusDataMaxLength = 10 * 1024
	networkDeviceDataMaxIPs            = 16
)

// validateClaimStatusUpdate checks a write to /status, which is how the
// scheduler allocates a claim and reserves it for pods, and drivers
// report on the devices they prepared.
func validateClaimStatusUpdate(claim, old *resourcev1.ResourceClaim) field.ErrorList {
	fldPath := field.NewPath("status")
	status, oldStatus := &claim.Status, &old.Status
	var allErrs field.ErrorList

	if len(status.ReservedFor) <= resourcev1.ResourceClaimReservedForMaxSize {
		for i, ref := range status.ReservedFor {
			p := fldPath.Child("reservedFor").Index(i)
			if ref.Resource == "" {
				allErrs = append(allErrs, field.Required(p.Child("resource"), ""))
			}
			if ref.Name == "" {
				allErrs = append(allErrs, field.Required(p.Child("name"), ""))
			}
			if ref.UID == "" {
				allErrs = append(allErrs, field.Required(p.Child("uid"), ""))
			}
		}
	}
	allocated := map[string]bool{}
	if status.Allocation != nil {
		for _, r := range status.Allocation.Devices.Results {
			allocated[deviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID))] = true
		}
	}
	for i, d := range status.Devices {
		allErrs = append(allErrs, validateDeviceStatus(d, fldPath.Child("devices").Index(i), allocated)...)
	}

	if len(status.ReservedFor) > 0 {
		if status.Allocation == nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("reservedFor"), "may not be specified when `allocated` is not set"))
		} else if claim.DeletionTimestamp != nil {
			// A claim being deleted may lose consumers, not gain them.
			for _, ref := range status.ReservedFor {
				if !slices.Contains(oldStatus.ReservedFor, ref) {
					allErrs = append(allErrs, field.Forbidden(fldPath.Child("reservedFor"), "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
					break
				}
			}
		}
	}
	// An allocation, once made, is only ever removed whole (which the
	// generated rules enforce); a new one is checked here.
	if status.Allocation != nil && oldStatus.Allocation == nil {
		allErrs = append(allErrs, validateAllocationResult(status.Allocation, fldPath.Child("allocation"), gatherRequestNames(&claim.Spec.Devices))...)
	}
	return append(allErrs, declarative(resourcev1.Validate_ResourceClaimStatus(context.Background(), updateOp(), fldPath, status, oldStatus))...)
}

// deviceID names an allocated device as upstream's SharedDeviceID prints.
func deviceID(driver, pool, device string, shareID *string) string {
	id := driver + "/" + pool + "/" + device
	if shareID != nil && *shareID != "" {
		id += "/" + *shareID
	}
	return id
}

func validateDeviceStatus(d resourcev1.AllocatedDeviceStatus, fldPath *field.Path, allocated map[string]bool) field.ErrorList {
	allErrs := validateDriverName(d.Driver, fldPath.Child("driver"))
	allErrs = append(allErrs, validatePoolName(d.Pool, fldPath.Child("pool"))...)
	allErrs = append(allErrs, validateDeviceName(d.Device, fldPath.Child("device"))...)
	if id := deviceID(d.Driver, d.Pool, d.Device, d.ShareID); !allocated[id] {
		allErrs = append(allErrs, field.Invalid(fldPath, id, "must be an allocated device in the claim"))
	}
	if len(d.Conditions) > allocatedDeviceStatusMaxConditions {
		allErrs = append(allErrs, field.TooMany(fldPath.Child("conditions"), len(d.Conditions), allocatedDeviceStatusMaxConditions))
	}
	allErrs = append(allErrs, metav1validation.ValidateConditions(d.Conditions, fldPath.Child("conditions"))...)
	if d.Data != nil && len(d.Data.Raw) > 0 {
		allErrs = append(allErrs, validateRawExtension(*d.Data, fldPath.Child("data"), allocatedDeviceStatusDataMaxLength)...)
	}
	if nd := d.NetworkData; nd != nil && len(nd.IPs) <= networkDeviceDataMaxIPs {
		for i, ip := range nd.IPs {
			allErrs = append(allErrs, validation.IsValidInterfaceAddress(fldPath.Child("networkData", "ips").Index(i), ip)...)
		}
	}
	return allErrs
}

func validateAllocationResult(a *resourcev1.AllocationResult, fldPath *field.Path, names requestNames) field.ErrorList {
	var allErrs field.ErrorList
	devPath := fldPath.Child("devices")
	if len(a.Devices.Results) <= resourcev1.AllocationResultsMaxSize {
		for i, r := range a.Devices.Results {
			p := devPath.Child("results").Index(i)
			// Driver, pool and share ID are the generated rules'.
			allErrs = append(allErrs, validateRequestRef(r.Request, p.Child("request"), names)...)
			allErrs = append(allErrs, validateDeviceName(r.Device, p.Child("device"))...)
			allErrs = append(allErrs, validateBindingConditions(r.BindingConditions, r.BindingFailureConditions, p)...)
			allErrs = append(allErrs, validateDeviceTolerations(r.Tolerations, p.Child("tolerations"))...)
		}
	}
	// A class's configuration and a claim's, both passed on.
	if len(a.Devices.Config) <= 2*resourcev1.DeviceConfigMaxSize {
		for i, c := range a.Devices.Config {
			p := devPath.Child("config").Index(i)
			allErrs = append(allErrs, validateRequestRefs(c.Requests, p.Child("requests"), names)...)
			allErrs = append(allErrs, validateDeviceConfiguration(c.DeviceConfiguration, p)...)
		}
	}
	if a.NodeSelector != nil {
		allErrs = append(allErrs, core.ValidateNodeSelector(a.NodeSelector, fldPath.Child("nodeSelector"))...)
	}
	return allErrs
}

// prepareClaimStatus drops from a status write what upstream's v1.37
// drops: status entries of devices the claim no longer holds (a driver
// need not clean up after a deallocation), and the alpha
// skipNodeOperations of new allocation results.
func prepareClaimStatus(claim, old *resourcev1.ResourceClaim) {
	if a := claim.Status.Allocation; a != nil && !usesSkipNodeOperations(old.Status.Allocation) {
		for i := range a.Devices.Results {
			a.Devices.Results[i].SkipNodeOperations = nil
		}
	}
	if old.Status.Allocation == nil {
		return
	}
	held := map[string]bool{}
	if a := claim.Status.Allocation; a != nil {
		for _, r := range a.Devices.Results {
			held[deviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID))] = true
		}
	}
	released := map[string]bool{}
	for _, r := range old.Status.Allocation.Devices.Results {
		if id := deviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID)); !held[id] {
			released[id] = true
		}
	}
	devices := claim.Status.Devices[:0]
	for _, d := range claim.Status.Devices {
		if !released[deviceID(d.Driver, d.Pool, d.Device, d.ShareID)] {
			devices = append(devices, d)
		}
	}
	claim.Status.Devices = devices
	if len(devices) == 0 {
		claim.Status.Devices = nil
	}
}

func usesSkipNodeOperations(a *resourcev1.AllocationResult) bool {
	if a == nil {
		return false
	}
	for _, r := range a.Devices.Results {
		if len(r.SkipNodeOperations) > 0 {
			return true
		}
	}
	return false
}
