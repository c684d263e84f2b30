package storage

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/registry/registrytest"
)

// wantErr and checkErrs are the shared validation-test helpers.
type wantErr = registrytest.WantErr

var checkErrs = registrytest.CheckErrs

func TestDefaultCSIDriver(t *testing.T) {
	d := &storagev1.CSIDriver{}
	defaultCSIDriver(d)
	want := storagev1.CSIDriverSpec{
		AttachRequired:                utilptr.To(true),
		PodInfoOnMount:                utilptr.To(false),
		VolumeLifecycleModes:          []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
		StorageCapacity:               utilptr.To(false),
		FSGroupPolicy:                 utilptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy),
		RequiresRepublish:             utilptr.To(false),
		SELinuxMount:                  utilptr.To(false),
		PreventPodSchedulingIfMissing: utilptr.To(false),
	}
	if !apiequal(d.Spec, want) {
		t.Errorf("defaults\n%+v\nwant\n%+v", d.Spec, want)
	}

	set := storagev1.CSIDriverSpec{
		AttachRequired:                utilptr.To(false),
		PodInfoOnMount:                utilptr.To(true),
		VolumeLifecycleModes:          []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral},
		StorageCapacity:               utilptr.To(true),
		FSGroupPolicy:                 utilptr.To(storagev1.FileFSGroupPolicy),
		RequiresRepublish:             utilptr.To(true),
		SELinuxMount:                  utilptr.To(true),
		PreventPodSchedulingIfMissing: utilptr.To(true),
	}
	kept := &storagev1.CSIDriver{Spec: *set.DeepCopy()}
	defaultCSIDriver(kept)
	if !apiequal(kept.Spec, set) {
		t.Errorf("explicit values overwritten: %+v", kept.Spec)
	}
}

func validCSIDriver() *storagev1.CSIDriver {
	d := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "ebs.csi.aws.com"}}
	defaultCSIDriver(d)
	return d
}

func TestValidateCSIDriver(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.CSIDriver)
		want   []wantErr
	}{{
		name:   "defaulted",
		mutate: func(*storagev1.CSIDriver) {},
	}, {
		name: "every field set",
		mutate: func(d *storagev1.CSIDriver) {
			d.Spec.VolumeLifecycleModes = append(d.Spec.VolumeLifecycleModes, storagev1.VolumeLifecycleEphemeral)
			d.Spec.FSGroupPolicy = utilptr.To(storagev1.NoneFSGroupPolicy)
			d.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: ""}, {Audience: "vault", ExpirationSeconds: utilptr.To[int64](600)}}
			d.Spec.NodeAllocatableUpdatePeriodSeconds = utilptr.To[int64](10)
			d.Spec.ServiceAccountTokenInSecrets = utilptr.To(true)
		},
	}, {
		name: "undefaulted",
		mutate: func(d *storagev1.CSIDriver) {
			d.Spec = storagev1.CSIDriverSpec{}
		},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.attachedRequired"},
			{Type: field.ErrorTypeRequired, Field: "spec.podInfoOnMount"},
			{Type: field.ErrorTypeRequired, Field: "spec.storageCapacity"},
			{Type: field.ErrorTypeRequired, Field: "spec.seLinuxMount"},
			{Type: field.ErrorTypeRequired, Field: "spec.preventPodSchedulingIfMissing"},
		},
	}, {
		name: "unknown fsGroupPolicy and mode",
		mutate: func(d *storagev1.CSIDriver) {
			d.Spec.FSGroupPolicy = utilptr.To[storagev1.FSGroupPolicy]("Sometimes")
			d.Spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{"Persistent", "Transient"}
		},
		want: []wantErr{
			{Type: field.ErrorTypeNotSupported, Field: "spec.fsGroupPolicy", Detail: `supported values: "File", "None", "ReadWriteOnceWithFSType"`},
			{Type: field.ErrorTypeNotSupported, Field: "spec.volumeLifecycleModes", Detail: `supported values: "Persistent", "Ephemeral"`},
		},
	}, {
		name: "token requests",
		mutate: func(d *storagev1.CSIDriver) {
			d.Spec.TokenRequests = []storagev1.TokenRequest{
				{Audience: "a", ExpirationSeconds: utilptr.To[int64](599)},
				{Audience: "a", ExpirationSeconds: utilptr.To[int64](1)},
				{Audience: "b", ExpirationSeconds: utilptr.To[int64](1<<32 + 1)},
			}
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.tokenRequests[0].expirationSeconds", Detail: "may not specify a duration less than 10 minutes"},
			{Type: field.ErrorTypeDuplicate, Field: "spec.tokenRequests[1].audience"},
			{Type: field.ErrorTypeInvalid, Field: "spec.tokenRequests[2].expirationSeconds", Detail: "may not specify a duration larger than 2^32 seconds"},
		},
	}, {
		name: "short allocatable period, tokens in secrets without tokens",
		mutate: func(d *storagev1.CSIDriver) {
			d.Spec.NodeAllocatableUpdatePeriodSeconds = utilptr.To[int64](9)
			d.Spec.ServiceAccountTokenInSecrets = utilptr.To(false)
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.nodeAllocatableUpdatePeriodSeconds", Detail: "must be greater than or equal to 10 seconds"},
			{Type: field.ErrorTypeInvalid, Field: "spec.serviceAccountTokenInSecrets", Detail: "serviceAccountTokenInSecrets is set but no tokenRequests are specified"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := validCSIDriver()
			tc.mutate(d)
			checkErrs(t, validateCSIDriver(d), tc.want)
		})
	}
}

func TestValidateCSIDriverUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.CSIDriver)
		want   []wantErr
	}{{
		name: "mutable fields",
		mutate: func(d *storagev1.CSIDriver) {
			d.Spec.PodInfoOnMount = utilptr.To(true)
			d.Spec.StorageCapacity = utilptr.To(true)
			d.Spec.FSGroupPolicy = utilptr.To(storagev1.FileFSGroupPolicy)
			d.Spec.RequiresRepublish = utilptr.To(true)
			d.Spec.SELinuxMount = utilptr.To(true)
			d.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: "vault"}}
		},
	}, {
		name: "attachRequired and modes",
		mutate: func(d *storagev1.CSIDriver) {
			d.Spec.AttachRequired = utilptr.To(false)
			d.Spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral}
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.attachedRequired", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "spec.volumeLifecycleModes", Detail: "field is immutable"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validCSIDriver()
			d := old.DeepCopy()
			tc.mutate(d)
			checkErrs(t, validateCSIDriverUpdate(d, old), tc.want)
		})
	}
	// Upstream's message shows the new values as JSON.
	old := validCSIDriver()
	d := old.DeepCopy()
	d.Spec.AttachRequired = utilptr.To(false)
	if errs := validateCSIDriverUpdate(d, old); len(errs) != 1 || errs[0].Error() != "spec.attachedRequired: Invalid value: false: field is immutable" {
		t.Errorf("got %v", errs)
	}
}

func TestCSIDriverGeneration(t *testing.T) {
	old := validCSIDriver()
	old.Generation = 3
	same := old.DeepCopy()
	same.Labels = map[string]string{"a": "b"}
	prepareCSIDriverUpdate(same, old)
	if same.Generation != 3 {
		t.Errorf("metadata change: generation %d, want 3", same.Generation)
	}
	changed := old.DeepCopy()
	changed.Spec.PodInfoOnMount = utilptr.To(true)
	prepareCSIDriverUpdate(changed, old)
	if changed.Generation != 4 {
		t.Errorf("spec change: generation %d, want 4", changed.Generation)
	}
}
