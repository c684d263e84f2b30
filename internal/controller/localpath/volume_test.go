package localpath

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/localpath"
)

func TestVolume(t *testing.T) {
	claim := func(mutate ...func(*v1.PersistentVolumeClaim)) *v1.PersistentVolumeClaim {
		c := &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns", UID: "u1"},
			Spec: v1.PersistentVolumeClaimSpec{
				AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		for _, m := range mutate {
			m(c)
		}
		return c
	}
	node := func(dir string) *v1.Node {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{v1.LabelHostname: "host1"}}}
		if dir != "" {
			n.Annotations = map[string]string{localpath.DirAnnotation: dir}
		}
		return n
	}
	class := localpath.Class()
	pv, err := Volume(claim(), class, node("/var/lib/orca/storage"))
	if err != nil {
		t.Fatal(err)
	}
	if pv.Name != "pvc-u1" || pv.Spec.Local.Path != "/var/lib/orca/storage/pvc-u1_ns_data" ||
		pv.Spec.ClaimRef.UID != "u1" || pv.Spec.StorageClassName != "local-path" ||
		pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete ||
		pv.Labels[localpath.NodeLabel] != "n1" || pv.Finalizers[0] != localpath.Finalizer ||
		pv.Annotations["pv.kubernetes.io/provisioned-by"] != localpath.Provisioner {
		t.Errorf("volume %+v", pv)
	}
	if q := pv.Spec.Capacity[v1.ResourceStorage]; q.String() != "1Gi" {
		t.Errorf("capacity %s", q.String())
	}
	if got := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0]; got.Key != v1.LabelHostname || got.Values[0] != "host1" {
		t.Errorf("affinity %+v", got)
	}
	retain := v1.PersistentVolumeReclaimRetain
	kept := class.DeepCopy()
	kept.ReclaimPolicy = &retain
	if pv, _ := Volume(claim(), kept, node("/s")); pv.Spec.PersistentVolumeReclaimPolicy != retain {
		t.Errorf("policy %s, want the class's Retain", pv.Spec.PersistentVolumeReclaimPolicy)
	}

	block := v1.PersistentVolumeBlock
	for _, tc := range []struct {
		name  string
		claim *v1.PersistentVolumeClaim
		class *storagev1.StorageClass
		node  *v1.Node
		want  string
	}{
		{"no node", claim(), class, nil, "WaitForFirstConsumer"},
		{"node without storage", claim(), class, node(""), `node "n1" keeps no local-path volumes`},
		{"relative storage directory", claim(), class, node("storage"), "invalid orca.io/local-path-dir"},
		{"block", claim(func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeMode = &block }), class, node("/s"), "volumeMode Block"},
		{"many writers", claim(func(c *v1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}
		}), class, node("/s"), "only the ReadWriteOnce and ReadWriteOncePod"},
		{"selector", claim(func(c *v1.PersistentVolumeClaim) { c.Spec.Selector = &metav1.LabelSelector{} }), class, node("/s"), "Selector is not supported"},
	} {
		if _, err := Volume(tc.claim, tc.class, tc.node); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := Volume(claim(func(c *v1.PersistentVolumeClaim) {
		c.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	}), class, node("/s")); err != nil {
		t.Errorf("ReadWriteOncePod: %v", err)
	}
}
