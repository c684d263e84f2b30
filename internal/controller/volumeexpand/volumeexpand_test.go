package volumeexpand

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

func q(s string) resource.Quantity { return resource.MustParse(s) }

func claim(request, capacity string) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data", UID: "claim-uid", ResourceVersion: "1"},
		Spec: v1.PersistentVolumeClaimSpec{
			VolumeName: "pv-1",
			Resources:  v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: q(request)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
	}
	if capacity != "" {
		c.Status.Capacity = v1.ResourceList{v1.ResourceStorage: q(capacity)}
	}
	return c
}

func withAllocated(c *v1.PersistentVolumeClaim, size string, status v1.ClaimResourceStatus) *v1.PersistentVolumeClaim {
	c.Status.AllocatedResources = v1.ResourceList{v1.ResourceStorage: q(size)}
	if status != "" {
		c.Status.AllocatedResourceStatuses = map[v1.ResourceName]v1.ClaimResourceStatus{v1.ResourceStorage: status}
	}
	return c
}

func localPathVolume(capacity string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1", Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": LocalPathProvisioner}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: q(capacity)},
			ClaimRef:               &v1.ObjectReference{Namespace: "ns", Name: "data", UID: "claim-uid"},
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/lib/orca/storage/pv-1"}},
		},
	}
}

func csiVolume(capacity string) *v1.PersistentVolume {
	pv := localPathVolume(capacity)
	pv.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com"}
	pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}}
	return pv
}

func TestNeedsExpansion(t *testing.T) {
	pending := claim("2Gi", "1Gi")
	pending.Status.Phase = v1.ClaimPending
	unnamed := claim("2Gi", "1Gi")
	unnamed.Spec.VolumeName = ""
	interrupted := claim("2Gi", "2Gi")
	interrupted.Status.AllocatedResourceStatuses = map[v1.ResourceName]v1.ClaimResourceStatus{v1.ResourceStorage: v1.PersistentVolumeClaimControllerResizeInProgress}
	for _, tc := range []struct {
		name string
		pvc  *v1.PersistentVolumeClaim
		want bool
	}{
		{"request above capacity", claim("2Gi", "1Gi"), true},
		{"request equal, written differently", claim("1024Mi", "1Gi"), false},
		{"request below capacity", claim("1Gi", "2Gi"), false},
		{"no capacity recorded", claim("1Gi", ""), true},
		{"not bound", pending, false},
		{"bound without a volume name", unnamed, false},
		{"capacity as asked, resize still marked under way", interrupted, true},
	} {
		if got := NeedsExpansion(tc.pvc); got != tc.want {
			t.Errorf("%s: NeedsExpansion = %v", tc.name, got)
		}
	}
}

func TestDecide(t *testing.T) {
	other := localPathVolume("1Gi")
	other.Spec.ClaimRef.UID = "earlier-claim-uid"
	otherNS := localPathVolume("1Gi")
	otherNS.Spec.ClaimRef.Namespace = "elsewhere"
	unbound := localPathVolume("1Gi")
	unbound.Spec.ClaimRef = nil
	manual := localPathVolume("1Gi")
	manual.Annotations = nil
	for _, tc := range []struct {
		name string
		pv   *v1.PersistentVolume
		want Action
		err  string
	}{
		{"local-path volume", localPathVolume("1Gi"), Expand, ""},
		{"CSI volume", csiVolume("1Gi"), External, ""},
		{"volume made by hand", manual, External, ""},
		{"volume bound to an earlier claim of the name", other, External, "persistent Volume is not bound to PVC being updated : ns/data"},
		{"volume bound in another namespace", otherNS, External, "persistent Volume is not bound to PVC being updated : ns/data"},
		{"volume bound to nothing", unbound, External, "persistent Volume is not bound to PVC being updated : ns/data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decide(claim("2Gi", "1Gi"), tc.pv)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if msg != tc.err || (err == nil && got != tc.want) {
				t.Errorf("decide = %v, %q; want %v, %q", got, msg, tc.want, tc.err)
			}
		})
	}
}

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		name string
		pvc  *v1.PersistentVolumeClaim
		pv   string
		want string
	}{
		{"fresh expansion", claim("5Gi", "1Gi"), "1Gi", "5Gi"},
		{"resumes the size under way", withAllocated(claim("5Gi", "1Gi"), "3Gi", v1.PersistentVolumeClaimControllerResizeInProgress), "1Gi", "3Gi"},
		{"resumes a size pending on a node", withAllocated(claim("5Gi", "1Gi"), "3Gi", v1.PersistentVolumeClaimNodeResizePending), "1Gi", "3Gi"},
		{"an infeasible controller size gives way to the request", withAllocated(claim("2Gi", "1Gi"), "10Gi", v1.PersistentVolumeClaimControllerResizeInfeasible), "1Gi", "2Gi"},
		{"a finished earlier expansion does not hold back a new one", withAllocated(claim("5Gi", "2Gi"), "2Gi", ""), "2Gi", "5Gi"},
		{"volume grown but not recorded", withAllocated(claim("3Gi", "1Gi"), "3Gi", v1.PersistentVolumeClaimControllerResizeInProgress), "3Gi", "3Gi"},
		{"request shrank below the size under way", withAllocated(claim("2Gi", "1Gi"), "3Gi", v1.PersistentVolumeClaimControllerResizeInProgress), "3Gi", "3Gi"},
		{"volume grown by hand beyond a stale allocation", withAllocated(claim("4Gi", "1Gi"), "2Gi", ""), "8Gi", "4Gi"},
		{"volume already large, nothing allocated", claim("2Gi", "1Gi"), "8Gi", "2Gi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := target(tc.pvc, localPathVolume(tc.pv))
			if want := q(tc.want); got.Cmp(want) != 0 {
				t.Errorf("target = %s, want %s", got.String(), tc.want)
			}
		})
	}
}

func TestMarkInProgressAndFinished(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	earlier := metav1.NewTime(now.Add(-time.Hour))
	pvc := claim("5Gi", "1Gi")
	pvc.Status.Conditions = []v1.PersistentVolumeClaimCondition{
		{Type: "ModifyingVolume", Status: v1.ConditionTrue},
		{Type: v1.PersistentVolumeClaimControllerResizeError, Status: v1.ConditionTrue, Message: "old failure"},
	}
	pvc.Status.AllocatedResourceStatuses = map[v1.ResourceName]v1.ClaimResourceStatus{"example.com/iops": v1.PersistentVolumeClaimControllerResizeInProgress}

	in := markInProgress(pvc, LocalPathProvisioner, q("5Gi"), now)
	if in.Annotations[AnnResizer] != LocalPathProvisioner {
		t.Errorf("resizer annotation %q", in.Annotations[AnnResizer])
	}
	if got := in.Status.AllocatedResources[v1.ResourceStorage]; got.Cmp(q("5Gi")) != 0 {
		t.Errorf("allocated %s", got.String())
	}
	if in.Status.AllocatedResourceStatuses[v1.ResourceStorage] != v1.PersistentVolumeClaimControllerResizeInProgress {
		t.Errorf("allocated statuses %v", in.Status.AllocatedResourceStatuses)
	}
	if got := conditionTypes(in); got != "ModifyingVolume,Resizing" {
		t.Errorf("conditions in progress: %s", got)
	}
	if pvc.Annotations != nil || len(pvc.Status.Conditions) != 2 || pvc.Status.AllocatedResources != nil {
		t.Error("markInProgress changed its argument")
	}

	// Marking again keeps the first transition time.
	in.Status.Conditions[1].LastTransitionTime = earlier
	again := markInProgress(in, LocalPathProvisioner, q("5Gi"), now)
	if !again.Status.Conditions[1].LastTransitionTime.Equal(&earlier) {
		t.Error("a standing Resizing condition got a new transition time")
	}

	done := markFinished(in, q("5Gi"))
	if got := done.Status.Capacity[v1.ResourceStorage]; got.Cmp(q("5Gi")) != 0 {
		t.Errorf("capacity %s", got.String())
	}
	if got := done.Status.AllocatedResources[v1.ResourceStorage]; got.Cmp(q("5Gi")) != 0 {
		t.Errorf("allocated %s after finishing", got.String())
	}
	if _, ok := done.Status.AllocatedResourceStatuses[v1.ResourceStorage]; ok || done.Status.AllocatedResourceStatuses["example.com/iops"] == "" {
		t.Errorf("allocated statuses after finishing: %v", done.Status.AllocatedResourceStatuses)
	}
	if got := conditionTypes(done); got != "ModifyingVolume" {
		t.Errorf("conditions after finishing: %s", got)
	}
	if only := markFinished(claim("5Gi", ""), q("5Gi")); only.Status.AllocatedResourceStatuses != nil || only.Status.Capacity == nil {
		t.Errorf("finishing a bare claim: %+v", only.Status)
	}
}

func conditionTypes(pvc *v1.PersistentVolumeClaim) string {
	var out []string
	for _, c := range pvc.Status.Conditions {
		out = append(out, string(c.Type))
	}
	return strings.Join(out, ",")
}

type harness struct {
	client *fake.Clientset
	rec    *record.FakeRecorder
	c      *Controller
}

func newHarness(t *testing.T, pvc *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) *harness {
	t.Helper()
	client := fake.NewClientset([]runtime.Object{pvc, pv}...)
	factory := informers.NewSharedInformerFactory(client, 0)
	rec := record.NewFakeRecorder(10)
	c, err := newController(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := factory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(pvc); err != nil {
		t.Fatal(err)
	}
	return &harness{client: client, rec: rec, c: c}
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (h *harness) writes() []string {
	var out []string
	for _, a := range h.client.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		w := a.GetVerb() + " " + a.GetResource().Resource
		if s := a.GetSubresource(); s != "" {
			w += "/" + s
		}
		out = append(out, w)
	}
	return out
}

func TestSyncExpandsLocalPathVolume(t *testing.T) {
	pvc := claim("5Gi", "1Gi")
	pvc.Status.Conditions = []v1.PersistentVolumeClaimCondition{{Type: v1.PersistentVolumeClaimControllerResizeError, Status: v1.ConditionTrue}}
	h := newHarness(t, pvc, localPathVolume("1Gi"))
	ctx := context.Background()
	if err := h.c.sync(ctx, "ns/data"); err != nil {
		t.Fatal(err)
	}
	want := []string{"update persistentvolumeclaims/status", "patch persistentvolumes", "update persistentvolumeclaims/status"}
	if got := h.writes(); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("writes %q, want %q", got, want)
	}
	pv, _ := h.client.CoreV1().PersistentVolumes().Get(ctx, "pv-1", metav1.GetOptions{})
	if got := pv.Spec.Capacity[v1.ResourceStorage]; got.Cmp(q("5Gi")) != 0 || pv.Spec.HostPath == nil || pv.Spec.ClaimRef == nil {
		t.Errorf("volume after expansion: capacity %s, spec %+v", got.String(), pv.Spec)
	}
	got, _ := h.client.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "data", metav1.GetOptions{})
	if c := got.Status.Capacity[v1.ResourceStorage]; c.Cmp(q("5Gi")) != 0 {
		t.Errorf("claim capacity %s", c.String())
	}
	if a := got.Status.AllocatedResources[v1.ResourceStorage]; a.Cmp(q("5Gi")) != 0 {
		t.Errorf("claim allocated %s", a.String())
	}
	if got.Status.AllocatedResourceStatuses != nil || len(got.Status.Conditions) != 0 || got.Annotations[AnnResizer] != LocalPathProvisioner {
		t.Errorf("claim after expansion: annotations %v, status %+v", got.Annotations, got.Status)
	}
	if ev := h.events(); len(ev) != 1 || ev[0] != "Normal VolumeResizeSuccessful ExpandVolume succeeded for volume ns/data" {
		t.Errorf("events %q", ev)
	}
}

func TestSyncLeavesOtherVolumesToExternalResizers(t *testing.T) {
	h := newHarness(t, claim("5Gi", "1Gi"), csiVolume("1Gi"))
	if err := h.c.sync(context.Background(), "ns/data"); err != nil {
		t.Fatal(err)
	}
	if w := h.writes(); len(w) != 0 {
		t.Errorf("writes %q, want none", w)
	}
	if ev := h.events(); len(ev) != 1 || ev[0] != "Normal ExternalExpanding waiting for an external controller to expand this PVC" {
		t.Errorf("events %q", ev)
	}
}

func TestSyncRetriesUntilVolumeIsBoundToClaim(t *testing.T) {
	pv := localPathVolume("1Gi")
	pv.Spec.ClaimRef.UID = "earlier-claim-uid"
	h := newHarness(t, claim("5Gi", "1Gi"), pv)
	if err := h.c.sync(context.Background(), "ns/data"); err == nil {
		t.Fatal("expanded a volume bound to another claim")
	}
	if w := h.writes(); len(w) != 0 {
		t.Errorf("writes %q, want none", w)
	}
}

func TestSyncIgnoresClaimsThatFit(t *testing.T) {
	h := newHarness(t, claim("1Gi", "1Gi"), localPathVolume("1Gi"))
	if err := h.c.sync(context.Background(), "ns/data"); err != nil {
		t.Fatal(err)
	}
	if n := len(h.client.Actions()); n != 0 {
		t.Errorf("%d API calls for a claim that needs nothing", n)
	}
}

func TestSyncReportsFailureAndLeavesClaimInProgress(t *testing.T) {
	h := newHarness(t, claim("5Gi", "1Gi"), localPathVolume("1Gi"))
	h.client.PrependReactor("patch", "persistentvolumes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd is down")
	})
	ctx := context.Background()
	err := h.c.sync(ctx, "ns/data")
	const want = "error updating pv for pvc ns/data: etcd is down"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if ev := h.events(); len(ev) != 1 || ev[0] != "Warning VolumeResizeFailed "+want {
		t.Errorf("events %q", ev)
	}
	got, _ := h.client.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "data", metav1.GetOptions{})
	if got.Status.AllocatedResourceStatuses[v1.ResourceStorage] != v1.PersistentVolumeClaimControllerResizeInProgress {
		t.Errorf("claim status %+v, want the expansion recorded as under way", got.Status)
	}
	if c := got.Status.Capacity[v1.ResourceStorage]; c.Cmp(q("1Gi")) != 0 {
		t.Errorf("capacity %s before the volume grew", c.String())
	}
}
