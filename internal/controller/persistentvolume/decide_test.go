package persistentvolume

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func pvc(name, class, size string, mutate ...func(*v1.PersistentVolumeClaim)) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid")},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
	}
	if class != "-" {
		c.Spec.StorageClassName = &class
	}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func pv(name, class, size string, mutate ...func(*v1.PersistentVolume)) *v1.PersistentVolume {
	p := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func claimedBy(c *v1.PersistentVolumeClaim) func(*v1.PersistentVolume) {
	return func(p *v1.PersistentVolume) {
		p.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name, UID: c.UID}
		p.Status.Phase = v1.VolumeBound
	}
}

func sc(name, provisioner string, mode storagev1.VolumeBindingMode, isDefault bool) *storagev1.StorageClass {
	s := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1, 0))}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if isDefault {
		s.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	}
	return s
}

func TestDecideClaim(t *testing.T) {
	classes := map[string]*storagev1.StorageClass{
		"local-path": sc("local-path", "orca.io/local-path", storagev1.VolumeBindingWaitForFirstConsumer, true),
		"fast":       sc("fast", "csi.example.com", storagev1.VolumeBindingImmediate, false),
		"manual":     sc("manual", NoProvisioner, storagev1.VolumeBindingImmediate, false),
	}
	bindCompleted := func(c *v1.PersistentVolumeClaim) {
		c.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
	}
	volumeName := func(n string) func(*v1.PersistentVolumeClaim) {
		return func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = n }
	}
	selected := func(c *v1.PersistentVolumeClaim) {
		c.Annotations = map[string]string{"volume.kubernetes.io/selected-node": "n1"}
	}
	rwx := func(p *v1.PersistentVolume) {
		p.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadWriteMany}
	}
	other := pvc("other", "manual", "1Gi")
	mine := pvc("mine", "manual", "1Gi")
	for _, tc := range []struct {
		name    string
		claim   *v1.PersistentVolumeClaim
		volumes []*v1.PersistentVolume
		classes map[string]*storagev1.StorageClass
		// want: the volume bound, the class set, the provisioner, or the
		// phase with the event's reason.
		bind, setClass, provision string
		phase                     v1.PersistentVolumeClaimPhase
		reason                    string
		err                       bool
	}{
		{name: "smallest fit", claim: pvc("c", "manual", "1Gi"),
			volumes: []*v1.PersistentVolume{pv("big", "manual", "10Gi"), pv("fit", "manual", "2Gi"), pv("tiny", "manual", "500Mi")}, bind: "fit"},
		{name: "narrowest access modes before size", claim: pvc("c", "manual", "1Gi"),
			volumes: []*v1.PersistentVolume{pv("rwx", "manual", "1Gi", rwx), pv("rwo", "manual", "5Gi")}, bind: "rwo"},
		{name: "access modes not offered", claim: pvc("c", "manual", "1Gi", func(c *v1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
		}), volumes: []*v1.PersistentVolume{pv("rwo", "manual", "5Gi")}, phase: v1.ClaimPending},
		{name: "other class", claim: pvc("c", "manual", "1Gi"), volumes: []*v1.PersistentVolume{pv("v", "fast", "5Gi")}, phase: v1.ClaimPending},
		{name: "selector", claim: pvc("c", "manual", "1Gi", func(c *v1.PersistentVolumeClaim) {
			c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}}
		}), volumes: []*v1.PersistentVolume{pv("plain", "manual", "1Gi"), pv("labelled", "manual", "9Gi", func(p *v1.PersistentVolume) { p.Labels = map[string]string{"tier": "fast"} })}, bind: "labelled"},
		{name: "volume reserved for the claim by name", claim: pvc("c", "manual", "1Gi"),
			volumes: []*v1.PersistentVolume{pv("small", "manual", "1Gi"), pv("reserved", "manual", "9Gi", func(p *v1.PersistentVolume) {
				p.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: "c"}
			})}, bind: "reserved"},
		{name: "volume of another claim", claim: pvc("c", "manual", "1Gi"), volumes: []*v1.PersistentVolume{pv("v", "manual", "1Gi", claimedBy(other))}, phase: v1.ClaimPending},
		{name: "released volume is not reused", claim: pvc("c", "manual", "1Gi"), volumes: []*v1.PersistentVolume{pv("v", "manual", "1Gi", func(p *v1.PersistentVolume) { p.Status.Phase = v1.VolumeReleased })}, phase: v1.ClaimPending},
		{name: "no class, no volume", claim: pvc("c", "", "1Gi"), phase: v1.ClaimPending, reason: reasonFailedBinding},
		{name: "class missing", claim: pvc("c", "gone", "1Gi"), phase: v1.ClaimPending, reason: reasonProvisioningFailed},
		{name: "no-provisioner class waits for an administrator", claim: pvc("c", "manual", "1Gi"), phase: v1.ClaimPending},
		{name: "immediate external provisioning", claim: pvc("c", "fast", "1Gi"), phase: v1.ClaimPending, provision: "csi.example.com", reason: reasonExternalProvisioning},
		{name: "wait for first consumer", claim: pvc("c", "local-path", "1Gi"), phase: v1.ClaimPending, reason: reasonWaitForFirstConsumer},
		{name: "wffc volumes are the scheduler's", claim: pvc("c", "local-path", "1Gi"), volumes: []*v1.PersistentVolume{pv("v", "local-path", "1Gi")}, phase: v1.ClaimPending, reason: reasonWaitForFirstConsumer},
		{name: "node selected: provision", claim: pvc("c", "local-path", "1Gi", selected), phase: v1.ClaimPending, provision: "orca.io/local-path", reason: reasonExternalProvisioning},
		{name: "provisioned volume for the claim is bound", claim: pvc("c", "local-path", "1Gi", selected),
			volumes: []*v1.PersistentVolume{pv("pvc-c-uid", "local-path", "1Gi", claimedBy(pvc("c", "local-path", "1Gi")))}, bind: "pvc-c-uid"},
		{name: "retroactive default class", claim: pvc("c", "-", "1Gi"), setClass: "local-path"},
		{name: "no default class yet", claim: pvc("c", "-", "1Gi"), classes: map[string]*storagev1.StorageClass{}, phase: v1.ClaimPending, reason: reasonFailedBinding},
		{name: "pre-bound claim, volume free", claim: pvc("c", "manual", "1Gi", volumeName("v")), volumes: []*v1.PersistentVolume{pv("v", "manual", "1Gi")}, bind: "v"},
		{name: "pre-bound claim, volume too small", claim: pvc("c", "manual", "5Gi", volumeName("v")), volumes: []*v1.PersistentVolume{pv("v", "manual", "1Gi")}, phase: v1.ClaimPending, reason: reasonFailedBinding},
		{name: "pre-bound claim, volume missing", claim: pvc("c", "manual", "1Gi", volumeName("v")), phase: v1.ClaimPending},
		{name: "pre-bound claim, volume another's", claim: pvc("c", "manual", "1Gi", volumeName("v")), volumes: []*v1.PersistentVolume{pv("v", "manual", "1Gi", claimedBy(other))}, phase: v1.ClaimPending},
		{name: "bound: repaired", claim: pvc("mine", "manual", "1Gi", volumeName("v"), bindCompleted), volumes: []*v1.PersistentVolume{pv("v", "manual", "1Gi", claimedBy(mine))}, bind: "v"},
		{name: "bound: volume unbound again", claim: pvc("mine", "manual", "1Gi", volumeName("v"), bindCompleted), volumes: []*v1.PersistentVolume{pv("v", "manual", "1Gi")}, bind: "v"},
		{name: "bound: volume gone", claim: pvc("mine", "manual", "1Gi", volumeName("v"), bindCompleted), phase: v1.ClaimLost, reason: reasonClaimLost},
		{name: "bound: reference gone", claim: pvc("mine", "manual", "1Gi", bindCompleted), phase: v1.ClaimLost, reason: reasonClaimLost},
		{name: "bound: volume bound to another", claim: pvc("mine", "manual", "1Gi", volumeName("v"), bindCompleted), volumes: []*v1.PersistentVolume{pv("v", "manual", "1Gi", claimedBy(other))}, phase: v1.ClaimLost, reason: reasonClaimMisbound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cls := classes
			if tc.classes != nil {
				cls = tc.classes
			}
			v := decideClaim(tc.claim, tc.volumes, cls)
			if (v.err != nil) != tc.err {
				t.Fatalf("err = %v", v.err)
			}
			got := ""
			if v.bind != nil {
				got = v.bind.Name
			}
			if got != tc.bind || v.setClass != tc.setClass || v.provision != tc.provision {
				t.Errorf("bind %q class %q provision %q, want %q %q %q", got, v.setClass, v.provision, tc.bind, tc.setClass, tc.provision)
			}
			if tc.bind == "" && tc.setClass == "" && v.phase != tc.phase {
				t.Errorf("phase %q, want %q", v.phase, tc.phase)
			}
			reason := ""
			if v.event != nil {
				reason = v.event.reason
			}
			if reason != tc.reason {
				t.Errorf("event %q, want %q", reason, tc.reason)
			}
		})
	}
}

func TestDecideVolume(t *testing.T) {
	c := pvc("c", "manual", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = "v" })
	unboundClaim := pvc("c", "manual", "1Gi")
	elsewhere := pvc("c", "manual", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = "w" })
	replaced := pvc("c", "manual", "1Gi", func(c *v1.PersistentVolumeClaim) { c.UID = "new" })
	phase := func(ph v1.PersistentVolumePhase) func(*v1.PersistentVolume) {
		return func(p *v1.PersistentVolume) { p.Status.Phase = ph }
	}
	policy := func(r v1.PersistentVolumeReclaimPolicy) func(*v1.PersistentVolume) {
		return func(p *v1.PersistentVolume) { p.Spec.PersistentVolumeReclaimPolicy = r }
	}
	provisioned := func(p *v1.PersistentVolume) {
		p.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": "orca.io/local-path"}
	}
	byController := func(p *v1.PersistentVolume) {
		p.Annotations = map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"}
	}
	for _, tc := range []struct {
		name      string
		pv        *v1.PersistentVolume
		claim     *v1.PersistentVolumeClaim
		phase     v1.PersistentVolumePhase
		unbind    bool
		syncClaim bool
		reason    string
	}{
		{name: "new volume", pv: pv("v", "manual", "1Gi", phase(v1.VolumePending)), phase: v1.VolumeAvailable},
		{name: "reserved by name", pv: pv("v", "manual", "1Gi", func(p *v1.PersistentVolume) { p.Spec.ClaimRef = &v1.ObjectReference{Namespace: "ns", Name: "c"} }), phase: v1.VolumeAvailable, syncClaim: true},
		{name: "bound", pv: pv("v", "manual", "1Gi", claimedBy(c), phase(v1.VolumeAvailable)), claim: c, phase: v1.VolumeBound},
		{name: "claim side pending", pv: pv("v", "manual", "1Gi", claimedBy(unboundClaim)), claim: unboundClaim, phase: v1.VolumeBound, syncClaim: true},
		{name: "claim deleted: released", pv: pv("v", "manual", "1Gi", claimedBy(c)), phase: v1.VolumeReleased},
		{name: "claim replaced: released", pv: pv("v", "manual", "1Gi", claimedBy(c)), claim: replaced, phase: v1.VolumeReleased},
		{name: "released, retain", pv: pv("v", "manual", "1Gi", claimedBy(c), phase(v1.VolumeReleased)), phase: v1.VolumeReleased},
		{name: "released, delete, provisioned: the provisioner's", pv: pv("v", "manual", "1Gi", claimedBy(c), phase(v1.VolumeReleased), policy(v1.PersistentVolumeReclaimDelete), provisioned), phase: v1.VolumeReleased},
		{name: "released, delete, made by hand: failed", pv: pv("v", "manual", "1Gi", claimedBy(c), phase(v1.VolumeReleased), policy(v1.PersistentVolumeReclaimDelete)), phase: v1.VolumeFailed, reason: reasonVolumeFailedDelete},
		{name: "released, recycle: failed", pv: pv("v", "manual", "1Gi", claimedBy(c), phase(v1.VolumeReleased), policy(v1.PersistentVolumeReclaimRecycle)), phase: v1.VolumeFailed, reason: reasonVolumeFailedRecycle},
		{name: "claim bound elsewhere: unbind", pv: pv("v", "manual", "1Gi", claimedBy(elsewhere), byController), claim: elsewhere, phase: v1.VolumeAvailable, unbind: true},
		{name: "provisioned for a claim bound elsewhere: released", pv: pv("v", "manual", "1Gi", claimedBy(elsewhere), provisioned, policy(v1.PersistentVolumeReclaimDelete)), claim: elsewhere, phase: v1.VolumeReleased},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := decideVolume(tc.pv, tc.claim)
			reason := ""
			if v.event != nil {
				reason = v.event.reason
			}
			if v.phase != tc.phase || v.unbind != tc.unbind || v.syncClaim != tc.syncClaim || reason != tc.reason {
				t.Errorf("got phase %q unbind %v syncClaim %v event %q, want %q %v %v %q", v.phase, v.unbind, v.syncClaim, reason, tc.phase, tc.unbind, tc.syncClaim, tc.reason)
			}
		})
	}
}

// A claim's capacity is the volume's when it becomes Bound, and left to
// the expand controller afterwards.
func TestBoundStatus(t *testing.T) {
	vol := pv("v", "manual", "2Gi")
	vol.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	got := boundStatus(v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}, vol)
	if q := got.Capacity[v1.ResourceStorage]; got.Phase != v1.ClaimBound || q.String() != "2Gi" || got.AccessModes[0] != v1.ReadWriteOncePod {
		t.Errorf("becoming bound: %+v", got)
	}
	resizing := v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
		AllocatedResources: v1.ResourceList{v1.ResourceStorage: resource.MustParse("2Gi")}}
	got = boundStatus(resizing, vol)
	if q := got.Capacity[v1.ResourceStorage]; q.String() != "1Gi" || got.AllocatedResources == nil {
		t.Errorf("bound already, volume grown under a resize: %+v", got)
	}
}
