package job

import (
	"context"
	"log/slog"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// A pod that matches a FailJob rule fails its Job even when every status
// update after the first one conflicts: the verdict rides on the update
// that records the pod, because once the pod's finalizer is gone no later
// sync can see it again.
func TestFailJobVerdictSurvivesConflicts(t *testing.T) {
	ctx := context.Background()
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "job-uid"},
		Spec: batchv1.JobSpec{
			Parallelism:  ptr.To[int32](1),
			Completions:  ptr.To[int32](1),
			BackoffLimit: ptr.To[int32](6),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"job": "j"}},
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:      batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
			}}},
		},
		Status: batchv1.JobStatus{UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{}},
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "j-abc", Namespace: "ns", UID: "pod-uid",
			Labels:          map[string]string{"job": "j"},
			Finalizers:      []string{batchv1.JobTrackingFinalizer},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(j, controllerKind)}},
		Status: v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: []v1.ContainerStatus{{
			Name: "c", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 42}},
		}}},
	}
	client := fake.NewClientset(j, p)
	statusUpdates := 0
	conflicts := true
	client.PrependReactor("update", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		statusUpdates++
		if conflicts && statusUpdates > 1 {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, "j", nil)
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	refresh := func() {
		t.Helper()
		got, err := client.BatchV1().Jobs("ns").Get(ctx, "j", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod, err := client.CoreV1().Pods("ns").Get(ctx, "j-abc", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := factory.Batch().V1().Jobs().Informer().GetStore().Update(got); err != nil {
			t.Fatal(err)
		}
		if err := factory.Core().V1().Pods().Informer().GetStore().Update(pod); err != nil {
			t.Fatal(err)
		}
	}
	refresh()

	if err := c.sync(ctx, "ns/j"); err == nil {
		t.Fatal("sync succeeded although status updates after the first conflict")
	}
	got, _ := client.BatchV1().Jobs("ns").Get(ctx, "j", metav1.GetOptions{})
	ft := findCondition(got.Status.Conditions, batchv1.JobFailureTarget)
	if ft == nil || ft.Reason != batchv1.JobReasonPodFailurePolicy {
		t.Fatalf("after the first update the Job's conditions are %+v, want FailureTarget with reason PodFailurePolicy", got.Status.Conditions)
	}

	// The finalizer went with the first sync; the next one must still end
	// the Job as failed by the policy, not count the pod as an ordinary
	// failure and start another.
	conflicts = false
	refresh()
	if err := c.sync(ctx, "ns/j"); err != nil {
		t.Fatal(err)
	}
	got, _ = client.BatchV1().Jobs("ns").Get(ctx, "j", metav1.GetOptions{})
	failed := findCondition(got.Status.Conditions, batchv1.JobFailed)
	if failed == nil || failed.Reason != batchv1.JobReasonPodFailurePolicy {
		t.Fatalf("Job conditions %+v, want Failed with reason PodFailurePolicy", got.Status.Conditions)
	}
	if got.Status.Failed != 1 {
		t.Errorf("status.failed = %d, want 1", got.Status.Failed)
	}
	pods, _ := client.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	if len(pods.Items) != 1 {
		t.Errorf("%d pods exist, want only the failed one", len(pods.Items))
	}
}
