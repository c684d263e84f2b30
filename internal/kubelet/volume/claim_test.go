package volume

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClaimVolumes(t *testing.T) {
	hostDir := t.TempDir()
	claim := func(name string, mutate func(*v1.PersistentVolumeClaim)) *v1.PersistentVolumeClaim {
		c := &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: uidOf(name)},
			Spec:       v1.PersistentVolumeClaimSpec{VolumeName: "pv-" + name},
			Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
		}
		if mutate != nil {
			mutate(c)
		}
		return c
	}
	volume := func(claim string, src v1.PersistentVolumeSource) *v1.PersistentVolume {
		return &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pv-" + claim},
			Spec: v1.PersistentVolumeSpec{
				PersistentVolumeSource: src,
				ClaimRef:               &v1.ObjectReference{Namespace: "shop", Name: claim, UID: uidOf(claim)},
			},
		}
	}
	src := newFakeSources()
	add := func(c *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) {
		src.claims["shop/"+c.Name] = c
		if pv != nil {
			src.volumes[pv.Name] = pv
		}
	}
	add(claim("data", nil), volume("data", v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir + "/x/.."}}))
	add(claim("local", nil), volume("local", v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: hostDir}}))
	add(claim("pending", func(c *v1.PersistentVolumeClaim) { c.Status.Phase = v1.ClaimPending }), nil)
	add(claim("deleting", func(c *v1.PersistentVolumeClaim) { c.DeletionTimestamp = &metav1.Time{Time: time.Now()} }), nil)
	add(claim("nfs", nil), volume("nfs", v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/"}}))
	stolen := volume("stolen", v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir}})
	stolen.Spec.ClaimRef.UID = "someone-else"
	add(claim("stolen", nil), stolen)
	add(claim("typed", nil), volume("typed", v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir, Type: ptr(v1.HostPathFile)}}))
	add(claim("web-eph", nil), volume("web-eph", v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir}}))
	add(claim("web-owned", func(c *v1.PersistentVolumeClaim) {
		c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "web", UID: "uid-1", Controller: ptr(true)}}
	}), volume("web-owned", v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir}}))

	pvc := func(name string, readOnly bool) v1.VolumeSource {
		return v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name, ReadOnly: readOnly}}
	}
	eph := v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}
	tests := []struct {
		name    string
		vol     string
		src     v1.VolumeSource
		want    Volume
		wantErr string
	}{
		{name: "bound hostPath", vol: "v", src: pvc("data", false), want: Volume{HostPath: hostDir}},
		{name: "claim read-only", vol: "v", src: pvc("data", true), want: Volume{HostPath: hostDir, ReadOnly: true}},
		{name: "local", vol: "v", src: pvc("local", false), want: Volume{HostPath: hostDir}},
		{name: "missing claim", vol: "v", src: pvc("ghost", false), wantErr: `MountVolume.SetUp failed for volume "v" : error processing PVC shop/ghost: persistentvolumeclaims "ghost" not found`},
		{name: "not bound", vol: "v", src: pvc("pending", false), wantErr: `MountVolume.SetUp failed for volume "v" : error processing PVC shop/pending: PVC is not bound`},
		{name: "being deleted", vol: "v", src: pvc("deleting", false), wantErr: `MountVolume.SetUp failed for volume "v" : error processing PVC shop/deleting: PVC is being deleted`},
		{name: "volume bound elsewhere", vol: "v", src: pvc("stolen", false), wantErr: `error processing PVC shop/stolen: found PV object pv-stolen but its pv.Spec.ClaimRef.UID someone-else does not point to claim.UID stolen`},
		{name: "unsupported volume", vol: "v", src: pvc("nfs", false), wantErr: `MountVolume.SetUp failed for volume "v" : persistent volume pv-nfs: no volume plugin matched`},
		{name: "hostPath type of the PV", vol: "v", src: pvc("typed", false), wantErr: "hostPath type check failed: " + hostDir + " is not a file"},
		{name: "ephemeral claim not owned by the pod", vol: "eph", src: eph, wantErr: `MountVolume.SetUp failed for volume "eph" : PVC shop/web-eph was not created for pod shop/web (pod is not owner)`},
		{name: "ephemeral claim owned by the pod", vol: "owned", src: eph, want: Volume{HostPath: hostDir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, src)
			vols, err := setup(t, m, podWith(v1.Volume{Name: tt.vol, VolumeSource: tt.src}))
			if tt.wantErr != "" {
				if err == nil || !contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := vols[tt.vol]; got != tt.want {
				t.Fatalf("volume %+v, want %+v", got, tt.want)
			}
		})
	}
}
