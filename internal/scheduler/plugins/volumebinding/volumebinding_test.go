package volumebinding

import (
	"context"
	"errors"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/scheduler/framework"
	tu "github.com/orca-project/orca/internal/scheduler/testutil"
)

type fakeLister struct {
	claims  map[string]*v1.PersistentVolumeClaim
	volumes map[string]*v1.PersistentVolume
	classes map[string]*storagev1.StorageClass
	err     error
}

func notFound(resource, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func (f *fakeLister) Claim(ns, name string) (*v1.PersistentVolumeClaim, error) {
	if f.err != nil {
		return nil, f.err
	}
	if c, ok := f.claims[ns+"/"+name]; ok {
		return c, nil
	}
	return nil, notFound("persistentvolumeclaim", name)
}

func (f *fakeLister) Volume(name string) (*v1.PersistentVolume, error) {
	if pv, ok := f.volumes[name]; ok {
		return pv, nil
	}
	return nil, notFound("persistentvolume", name)
}

func (f *fakeLister) Volumes() ([]*v1.PersistentVolume, error) {
	var out []*v1.PersistentVolume
	for _, pv := range f.volumes {
		out = append(out, pv)
	}
	return out, nil
}

func (f *fakeLister) Class(name string) (*storagev1.StorageClass, error) {
	if c, ok := f.classes[name]; ok {
		return c, nil
	}
	return nil, notFound("storageclasses.storage.k8s.io", name)
}

func claim(name, class, volumeName string, mutate ...func(*v1.PersistentVolumeClaim)) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			VolumeName:  volumeName,
		},
	}
	if class != "" {
		c.Spec.StorageClassName = &class
	}
	if volumeName != "" {
		c.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
		c.Status.Phase = v1.ClaimBound
	}
	for _, m := range mutate {
		m(c)
	}
	return c
}

// pv is a 1Gi RWO volume of class, available, pinned to the hostnames.
func pv(name, class string, hosts ...string) *v1.PersistentVolume {
	p := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: class,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	if len(hosts) > 0 {
		p.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: hosts}},
		}}}}
	}
	return p
}

func class(name string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &mode}
}

func podWithClaims(names ...string) *v1.Pod {
	p := tu.Pod("p", "", "")
	for _, n := range names {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: n, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: n}}})
	}
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	return p
}

func TestVolumeBinding(t *testing.T) {
	deleting := func(c *v1.PersistentVolumeClaim) { now := metav1.Now(); c.DeletionTimestamp = &now }
	lost := func(c *v1.PersistentVolumeClaim) { c.Status.Phase = v1.ClaimLost }
	selected := func(node string) func(*v1.PersistentVolumeClaim) {
		return func(c *v1.PersistentVolumeClaim) {
			c.Annotations = map[string]string{"volume.kubernetes.io/selected-node": node}
		}
	}
	claimedBy := func(p *v1.PersistentVolume, c string) *v1.PersistentVolume {
		p.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: c}
		p.Status.Phase = v1.VolumeBound
		return p
	}
	provisioned := class("local", storagev1.VolumeBindingWaitForFirstConsumer)
	provisioned.Provisioner = "orca.io/local-path"
	onlyB := class("only-b", storagev1.VolumeBindingWaitForFirstConsumer)
	onlyB.Provisioner = "orca.io/local-path"
	onlyB.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: v1.LabelHostname, Values: []string{"b"}}}}}
	classes := []*storagev1.StorageClass{
		class("wffc", storagev1.VolumeBindingWaitForFirstConsumer),
		class("immediate", storagev1.VolumeBindingImmediate),
		provisioned, onlyB,
	}
	ephemeralPod := func() *v1.Pod {
		p := tu.Pod("p", "", "")
		p.UID = "pod-uid"
		p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}}}
		return p
	}
	ownedBy := func(uid string) func(*v1.PersistentVolumeClaim) {
		return func(c *v1.PersistentVolumeClaim) {
			yes := true
			c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: types.UID(uid), Controller: &yes}}
		}
	}
	nodes := []string{"a", "b"}
	type want struct {
		code    framework.Code // of PreFilter, when it rejects
		message string         // of PreFilter
		// per node: Filter's reasons (nil: fits)
		filter map[string][]string
	}
	fits := map[string][]string{"a": nil, "b": nil}
	for _, tc := range []struct {
		name    string
		pod     *v1.Pod
		claims  []*v1.PersistentVolumeClaim
		volumes []*v1.PersistentVolume
		want    want
	}{
		{"no claims", podWithClaims(), nil, nil, want{filter: fits}},
		{"missing claim", podWithClaims("data"), nil, nil,
			want{code: framework.UnschedulableAndUnresolvable, message: `persistentvolumeclaim "data" not found`}},
		{"claim being deleted", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "", "vol", deleting)}, nil,
			want{code: framework.UnschedulableAndUnresolvable, message: `persistentvolumeclaim "data" is being deleted`}},
		{"claim lost", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "", "vol", lost)}, nil,
			want{code: framework.UnschedulableAndUnresolvable, message: `persistentvolumeclaim "data" bound to non-existent persistentvolume "vol"`}},
		{"unbound without class", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "", "")}, nil,
			want{code: framework.UnschedulableAndUnresolvable, message: ErrReasonUnboundImmediate}},
		{"unbound immediate class", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "immediate", "")}, nil,
			want{code: framework.UnschedulableAndUnresolvable, message: ErrReasonUnboundImmediate}},
		{"unbound with a class that does not exist", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "gone", "")}, nil,
			want{code: framework.UnschedulableAndUnresolvable, message: ErrReasonUnboundImmediate}},
		{"pre-bound by name, not yet bound", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "wffc", "", func(c *v1.PersistentVolumeClaim) { c.Spec.VolumeName = "vol" })}, nil,
			want{code: framework.UnschedulableAndUnresolvable, message: ErrReasonUnboundImmediate}},
		{"bound, volume without affinity", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "", "vol")}, []*v1.PersistentVolume{pv("vol", "")},
			want{filter: fits}},
		{"bound, volume pinned to b", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "", "vol")}, []*v1.PersistentVolume{pv("vol", "", "b")},
			want{filter: map[string][]string{"a": {ErrReasonNodeConflict}, "b": nil}}},
		{"bound by status only", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "", "vol", func(c *v1.PersistentVolumeClaim) { c.Annotations = nil })}, []*v1.PersistentVolume{pv("vol", "", "b")},
			want{filter: map[string][]string{"a": {ErrReasonNodeConflict}, "b": nil}}},
		{"bound to a volume that does not exist", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "", "vol")}, nil,
			want{filter: map[string][]string{"a": {ErrReasonPVNotExist}, "b": {ErrReasonPVNotExist}}}},
		{"wffc, available volume on a", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "wffc", "")}, []*v1.PersistentVolume{pv("local-a", "wffc", "a")},
			want{filter: map[string][]string{"a": nil, "b": {ErrReasonBindConflict}}}},
		{"wffc, volume of another class", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "wffc", "")}, []*v1.PersistentVolume{pv("local-a", "other", "a")},
			want{filter: map[string][]string{"a": {ErrReasonBindConflict}, "b": {ErrReasonBindConflict}}}},
		{"wffc, volume already claimed by another", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "wffc", "")}, []*v1.PersistentVolume{claimedBy(pv("local-a", "wffc", "a"), "other")},
			want{filter: map[string][]string{"a": {ErrReasonBindConflict}, "b": {ErrReasonBindConflict}}}},
		{"wffc, two claims need two volumes", podWithClaims("x", "y"), []*v1.PersistentVolumeClaim{claim("x", "wffc", ""), claim("y", "wffc", "")},
			[]*v1.PersistentVolume{pv("a1", "wffc", "a"), pv("b1", "wffc", "b"), pv("b2", "wffc", "b")},
			want{filter: map[string][]string{"a": {ErrReasonBindConflict}, "b": nil}}},
		{"wffc, being provisioned for b", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "wffc", "", selected("b"))}, nil,
			want{filter: map[string][]string{"a": {ErrReasonBindConflict}, "b": nil}}},
		{"bound on b and wffc only on a", podWithClaims("x", "y"), []*v1.PersistentVolumeClaim{claim("x", "", "vol"), claim("y", "wffc", "")},
			[]*v1.PersistentVolume{pv("vol", "", "b"), pv("a1", "wffc", "a")},
			want{filter: map[string][]string{"a": {ErrReasonNodeConflict}, "b": {ErrReasonBindConflict}}}},
		{"wffc with a provisioner, no volumes: provisioned anywhere", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "local", "")}, nil,
			want{filter: fits}},
		{"wffc with a provisioner, an available volume is taken first", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "local", "")}, []*v1.PersistentVolume{pv("local-a", "local", "a")},
			want{filter: fits}},
		{"provisioner with allowed topologies", podWithClaims("data"), []*v1.PersistentVolumeClaim{claim("data", "only-b", "")}, nil,
			want{filter: map[string][]string{"a": {ErrReasonBindConflict}, "b": nil}}},
		{"ephemeral claim not created yet", ephemeralPod(), nil, nil,
			want{code: framework.UnschedulableAndUnresolvable, message: `waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"`}},
		{"ephemeral claim of another pod", ephemeralPod(), []*v1.PersistentVolumeClaim{claim("p-scratch", "local", "", ownedBy("other-uid"))}, nil,
			want{code: framework.UnschedulableAndUnresolvable, message: `persistentvolumeclaim "p-scratch" was not created for the pod`}},
		{"ephemeral claim of this pod", ephemeralPod(), []*v1.PersistentVolumeClaim{claim("p-scratch", "local", "", ownedBy("pod-uid"))}, nil,
			want{filter: fits}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &fakeLister{claims: map[string]*v1.PersistentVolumeClaim{}, volumes: map[string]*v1.PersistentVolume{}, classes: map[string]*storagev1.StorageClass{}}
			for _, c := range tc.claims {
				l.claims[c.Namespace+"/"+c.Name] = c
			}
			for _, v := range tc.volumes {
				l.volumes[v.Name] = v
			}
			for _, c := range classes {
				l.classes[c.Name] = c
			}
			pl := &Plugin{Lister: l}
			cs := framework.NewCycleState()
			pi := framework.NewPodInfo(tc.pod)
			st := pl.PreFilter(context.Background(), cs, pi, nil)
			if st.Code() != tc.want.code || st.Message() != tc.want.message {
				t.Fatalf("PreFilter = %v %q, want %v %q", st.Code(), st.Message(), tc.want.code, tc.want.message)
			}
			if !st.IsSuccess() {
				return
			}
			for _, n := range nodes {
				st := pl.Filter(context.Background(), cs, pi, framework.NewNodeInfo(tu.Node(n, 1, 1, nil)))
				want := tc.want.filter[n]
				if !reflect.DeepEqual(st.Reasons(), want) {
					t.Errorf("Filter on %s = %q, want %q", n, st.Reasons(), want)
				}
				if !st.IsSuccess() && st.Code() != framework.UnschedulableAndUnresolvable {
					t.Errorf("Filter on %s code = %v, want UnschedulableAndUnresolvable", n, st.Code())
				}
			}
		})
	}
}

func TestListerFailureIsAnError(t *testing.T) {
	pl := &Plugin{Lister: &fakeLister{err: errors.New("cache broken")}}
	st := pl.PreFilter(context.Background(), framework.NewCycleState(), framework.NewPodInfo(podWithClaims("data")), nil)
	if st.Code() != framework.Error {
		t.Errorf("code = %v, want Error", st.Code())
	}
}
