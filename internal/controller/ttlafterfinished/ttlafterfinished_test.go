package ttlafterfinished

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func finishedJob(ttl *int32, ctype batchv1.JobConditionType, at time.Time) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "u1"}, Spec: batchv1.JobSpec{TTLSecondsAfterFinished: ttl}}
	if ctype != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: ctype, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}
	}
	return j
}

func TestTimeLeftAndNeedsCleanup(t *testing.T) {
	fin := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		job   *batchv1.Job
		now   time.Time
		needs bool
		left  time.Duration
	}{
		{"no ttl", finishedJob(nil, batchv1.JobComplete, fin), fin, false, 0},
		{"running", finishedJob(ptr.To[int32](10), "", fin), fin, false, 0},
		{"complete, 4s to go", finishedJob(ptr.To[int32](10), batchv1.JobComplete, fin), fin.Add(6 * time.Second), true, 4 * time.Second},
		{"failed, overdue", finishedJob(ptr.To[int32](10), batchv1.JobFailed, fin), fin.Add(time.Minute), true, -50 * time.Second},
		{"ttl zero", finishedJob(ptr.To[int32](0), batchv1.JobComplete, fin), fin, true, 0},
	} {
		if got := needsCleanup(tc.job); got != tc.needs {
			t.Errorf("%s: needsCleanup = %v", tc.name, got)
			continue
		}
		if !tc.needs {
			continue
		}
		if left, err := timeLeft(tc.job, tc.now); err != nil || left != tc.left {
			t.Errorf("%s: timeLeft = %v, %v; want %v", tc.name, left, err, tc.left)
		}
	}
}

func TestSyncDeletesOnlyExpiredJobsInForeground(t *testing.T) {
	fin := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	job := finishedJob(ptr.To[int32](30), batchv1.JobComplete, fin)
	client := fake.NewSimpleClientset(job)
	factory := informers.NewSharedInformerFactory(client, 0)
	clk := clocktesting.NewFakeClock(fin.Add(10 * time.Second))
	c, err := newController(client, factory, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), clk)
	if err != nil {
		t.Fatal(err)
	}
	if err := factory.Batch().V1().Jobs().Informer().GetIndexer().Add(job); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.sync(ctx, "ns/j"); err != nil {
		t.Fatal(err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() == "delete" {
			t.Fatalf("deleted a job with 20s left")
		}
	}
	if c.queue.Len() != 0 {
		t.Fatalf("requeued at once instead of after the time left")
	}
	clk.Step(25 * time.Second)
	if err := c.sync(ctx, "ns/j"); err != nil {
		t.Fatal(err)
	}
	var del *clienttesting.DeleteActionImpl
	for _, a := range client.Actions() {
		if d, ok := a.(clienttesting.DeleteActionImpl); ok {
			del = &d
		}
	}
	if del == nil {
		t.Fatal("expired job was not deleted")
	}
	opts := del.GetDeleteOptions()
	if opts.PropagationPolicy == nil || *opts.PropagationPolicy != metav1.DeletePropagationForeground || opts.Preconditions == nil || *opts.Preconditions.UID != "u1" {
		t.Errorf("delete options = %+v", opts)
	}
}
