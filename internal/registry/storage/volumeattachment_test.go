package storage

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"
)

func validVolumeAttachment() *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-0123"},
		Spec: storagev1.VolumeAttachmentSpec{
			Attacher: "ebs.csi.aws.com",
			NodeName: "node-1",
			Source:   storagev1.VolumeAttachmentSource{PersistentVolumeName: utilptr.To("pv-1")},
		},
	}
}

func inlineSpec() *corev1.PersistentVolumeSpec {
	return &corev1.PersistentVolumeSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{
			CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"},
		},
	}
}

func TestDefaultVolumeAttachment(t *testing.T) {
	va := validVolumeAttachment()
	va.Spec.Source = storagev1.VolumeAttachmentSource{InlineVolumeSpec: &corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1500u")},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}},
	}}
	defaultVolumeAttachment(va)
	spec := va.Spec.Source.InlineVolumeSpec
	if q := spec.Capacity[corev1.ResourceStorage]; q.String() != "2m" {
		t.Errorf("capacity %s, want rounded up to 2m", q.String())
	}
	if spec.HostPath.Type == nil || *spec.HostPath.Type != corev1.HostPathUnset {
		t.Errorf("hostPath type %v, want the empty default", spec.HostPath.Type)
	}
	// A volume object's defaults are not an inline spec's.
	if spec.PersistentVolumeReclaimPolicy != "" || spec.VolumeMode != nil {
		t.Errorf("reclaim policy %q, volume mode %v: want none", spec.PersistentVolumeReclaimPolicy, spec.VolumeMode)
	}
}

func TestValidateVolumeAttachment(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.VolumeAttachment)
		want   []wantErr
	}{{
		name:   "persistent volume",
		mutate: func(*storagev1.VolumeAttachment) {},
	}, {
		name: "inline volume",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Spec.Source = storagev1.VolumeAttachmentSource{InlineVolumeSpec: inlineSpec()}
		},
	}, {
		name: "no source",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Spec.Source = storagev1.VolumeAttachmentSource{}
		},
		want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.source", Detail: "must specify exactly one of inlineVolumeSpec and persistentVolumeName"}},
	}, {
		name: "both sources",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Spec.Source.InlineVolumeSpec = inlineSpec()
		},
		want: []wantErr{{Type: field.ErrorTypeForbidden, Field: "spec.source", Detail: "must specify exactly one of inlineVolumeSpec and persistentVolumeName"}},
	}, {
		name: "empty volume name is reported twice, as upstream does",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Spec.Source.PersistentVolumeName = utilptr.To("")
		},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.source.persistentVolumeName", Detail: "must specify non empty persistentVolumeName"},
			{Type: field.ErrorTypeInvalid, Field: "spec.source.persistentVolumeName"},
		},
	}, {
		name: "an inline spec is a CSI volume and nothing of a volume object",
		mutate: func(va *storagev1.VolumeAttachment) {
			spec := inlineSpec()
			spec.CSI = nil
			spec.NFS = &corev1.NFSVolumeSource{Server: "nfs", Path: "/export"}
			spec.ClaimRef = &corev1.ObjectReference{Name: "claim"}
			spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
			spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
			spec.NodeAffinity = &corev1.VolumeNodeAffinity{}
			spec.StorageClassName = "fast"
			spec.VolumeMode = utilptr.To(corev1.PersistentVolumeBlock)
			spec.VolumeAttributesClassName = utilptr.To("")
			va.Spec.Source = storagev1.VolumeAttachmentSource{InlineVolumeSpec: spec}
		},
		want: []wantErr{
			{Type: field.ErrorTypeForbidden, Field: "spec.source.inlineVolumeSpec.claimRef", Detail: "may not be specified in the context of inline volumes"},
			{Type: field.ErrorTypeForbidden, Field: "spec.source.inlineVolumeSpec.capacity", Detail: "may not be specified in the context of inline volumes"},
			{Type: field.ErrorTypeRequired, Field: "spec.source.inlineVolumeSpec.csi", Detail: "has to be specified in the context of inline volumes"},
			{Type: field.ErrorTypeForbidden, Field: "spec.source.inlineVolumeSpec.persistentVolumeReclaimPolicy", Detail: "may only be Retain in the context of inline volumes"},
			{Type: field.ErrorTypeForbidden, Field: "spec.source.inlineVolumeSpec.nodeAffinity", Detail: "may not be specified in the context of inline volumes"},
			{Type: field.ErrorTypeForbidden, Field: "spec.source.inlineVolumeSpec.storageClassName", Detail: "may not be specified in the context of inline volumes"},
			{Type: field.ErrorTypeForbidden, Field: "spec.source.inlineVolumeSpec.volumeMode", Detail: "may not specify volumeMode other than Filesystem in the context of inline volumes"},
		},
	}, {
		name: "bad node name",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Spec.NodeName = "Node_1"
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.nodeName"}},
	}, {
		// The attacher's errors are upstream's declarative ones, which
		// come after the handwritten errors.
		name: "missing attacher",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Spec.Attacher = ""
			va.Spec.NodeName = ""
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.nodeName"},
			{Type: field.ErrorTypeRequired, Field: "spec.attacher", Detail: ""},
		},
	}, {
		name: "bad attacher",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Spec.Attacher = strings.Repeat("a", 63) + "_"
			va.Spec.NodeName = ""
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.nodeName"},
			{Type: field.ErrorTypeInvalid, Field: "spec.attacher"},
			{Type: field.ErrorTypeTooLong, Field: "spec.attacher", Detail: "may not be more than 63 characters"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			va := validVolumeAttachment()
			tc.mutate(va)
			checkErrs(t, validateVolumeAttachment(va), tc.want)
		})
	}
}

func TestValidateVolumeAttachmentUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*storagev1.VolumeAttachment)
		mutate func(*storagev1.VolumeAttachment)
		want   []string
	}{{
		name: "status and metadata",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Labels = map[string]string{"a": "b"}
			va.Status = storagev1.VolumeAttachmentStatus{Attached: true, AttachmentMetadata: map[string]string{"device": "/dev/xvdb"}}
		},
	}, {
		name: "spec",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Spec.NodeName = "node-2"
		},
		want: []string{"spec: Invalid value: null: field is immutable"},
	}, {
		// Upstream's declarative rules stop at the immutable spec, so the
		// attacher keeps its handwritten message.
		name: "spec with a bad attacher",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Spec.Attacher = strings.Repeat("a", 64)
		},
		want: []string{
			"spec.attacher: Too long: may not be more than 63 bytes",
			"spec: Invalid value: null: field is immutable",
		},
	}, {
		name: "status errors",
		mutate: func(va *storagev1.VolumeAttachment) {
			va.Status.AttachmentMetadata = map[string]string{"blob": strings.Repeat("x", 256<<10)}
			va.Status.AttachError = &storagev1.VolumeError{Message: strings.Repeat("m", 1025)}
			va.Status.DetachError = &storagev1.VolumeError{ErrorCode: utilptr.To[int32](-1)}
		},
		want: []string{
			"status.attachmentMetadata: Too long: may not be more than 262144 bytes",
			"status.attachError.message: Too long: may not be more than 1024 bytes",
			"status.detachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validVolumeAttachment()
			if tc.old != nil {
				tc.old(old)
			}
			va := old.DeepCopy()
			tc.mutate(va)
			var got []string
			for _, e := range validateVolumeAttachmentUpdate(va, old) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// On create the attacher's errors read as upstream's declarative rules
// word them ("an RFC 1123 subdomain"), not as its handwritten check of a
// CSI driver name does ("a lowercase RFC 1123 subdomain").
func TestVolumeAttachmentAttacherMessages(t *testing.T) {
	va := validVolumeAttachment()
	va.Spec.Attacher = "Bad_Attacher"
	errs := validateVolumeAttachment(va)
	want := `spec.attacher: Invalid value: "Bad_Attacher": an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'Example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("got %v\nwant %s", errs, want)
	}
}
