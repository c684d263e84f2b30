package attachdetach

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/csinames"
)

func csiPV(name, driver, handle string) *v1.PersistentVolume {
	return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PersistentVolumeSpec{
		PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}}}}
}

func TestDesired(t *testing.T) {
	pod := func(name, node string, phase v1.PodPhase, claims ...string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: v1.PodSpec{NodeName: node}, Status: v1.PodStatus{Phase: phase}}
		for _, c := range claims {
			p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
		}
		return p
	}
	claims := map[string]*v1.PersistentVolumeClaim{
		"attach":   {Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-attach"}},
		"noattach": {Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-noattach"}},
		"nodriver": {Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-nodriver"}},
		"local":    {Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-local"}},
		"unbound":  {},
	}
	pvs := map[string]*v1.PersistentVolume{
		"pv-attach":   csiPV("pv-attach", "attaching.csi", "h1"),
		"pv-noattach": csiPV("pv-noattach", "plain.csi", "h2"),
		"pv-nodriver": csiPV("pv-nodriver", "unknown.csi", "h3"),
		"pv-local":    {ObjectMeta: metav1.ObjectMeta{Name: "pv-local"}, Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/x"}}}},
	}
	drivers := map[string]*storagev1.CSIDriver{
		"attaching.csi": {Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(true)}},
		"plain.csi":     {Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)}},
	}
	pods := []*v1.Pod{
		pod("a", "n1", v1.PodRunning, "attach", "noattach", "nodriver", "local", "unbound", "missing"),
		pod("b", "n2", v1.PodRunning, "attach"),
		pod("done", "n1", v1.PodSucceeded, "attach"),
	}
	got := Desired("n1", pods,
		func(_, name string) *v1.PersistentVolumeClaim { return claims[name] },
		func(name string) *v1.PersistentVolume { return pvs[name] },
		func(name string) *storagev1.CSIDriver { return drivers[name] })
	want := map[string]Attachment{
		csinames.Attachment("h1", "attaching.csi", "n1"): {Driver: "attaching.csi", Volume: "pv-attach", VolumeID: "h1"},
		// No CSIDriver object: attaching is required, as upstream.
		csinames.Attachment("h3", "unknown.csi", "n1"): {Driver: "unknown.csi", Volume: "pv-nodriver", VolumeID: "h3"},
	}
	if len(got) != len(want) {
		t.Fatalf("Desired = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Desired[%s] = %v, want %v", k, got[k], v)
		}
	}
}

func TestDetachWait(t *testing.T) {
	pv := csiPV("pv", "d.csi", "h")
	inUse := []v1.UniqueVolumeName{"kubernetes.io/csi/d.csi^h"}
	va := &storagev1.VolumeAttachment{}
	for _, tc := range []struct {
		name  string
		pv    *v1.PersistentVolume
		inUse []v1.UniqueVolumeName
		since time.Duration
		wait  bool
	}{
		{"still mounted on the node", pv, inUse, time.Minute, true},
		{"unmounted", pv, nil, 0, false},
		{"another volume in use", pv, []v1.UniqueVolumeName{"kubernetes.io/csi/d.csi^other"}, 0, false},
		{"waited long enough", pv, inUse, MaxWaitForUnmount, false},
		{"volume gone", nil, inUse, 0, false},
	} {
		if got := DetachWait(va, tc.pv, tc.inUse, tc.since) > 0; got != tc.wait {
			t.Errorf("%s: wait %v, want %v", tc.name, got, tc.wait)
		}
	}
}

func TestManaged(t *testing.T) {
	for name, want := range map[string]bool{
		csinames.Attachment("h", "d", "n"): true,
		"va-e2e-abcde":                     false,
		"csi-xyz":                          false,
		"csi-" + strings.Repeat("g", 64):   false,
	} {
		if got := Managed(&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name}}); got != want {
			t.Errorf("Managed(%s) = %v, want %v", name, got, want)
		}
	}
}

// TestPodsWorthASync: only pods with claims wake a node's sync, and the
// index files a pod under its node.
func TestPodsWorthASync(t *testing.T) {
	for _, tc := range []struct {
		name string
		vols []v1.Volume
		want bool
	}{
		{"no volumes", nil, false},
		{"emptyDir and configMap", []v1.Volume{{Name: "a", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}, {Name: "b", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}}}, false},
		{"a claim", []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}, true},
		{"a generic ephemeral volume", []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}}}, true},
	} {
		p := &v1.Pod{Spec: v1.PodSpec{NodeName: "n1", Volumes: tc.vols}}
		if got := usesClaims(p); got != tc.want {
			t.Errorf("%s: usesClaims %v, want %v", tc.name, got, tc.want)
		}
		if keys, _ := podsByNode(p); len(keys) != 1 || keys[0] != "n1" {
			t.Errorf("%s: index keys %v", tc.name, keys)
		}
	}
	if keys, _ := podsByNode(&v1.Pod{}); len(keys) != 0 {
		t.Errorf("an unbound pod is indexed under %v", keys)
	}
}
