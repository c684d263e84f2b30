package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// An Indexed Job runs real containers to completion: each sees its index
// in JOB_COMPLETION_INDEX and its hostname NAME-INDEX, exits 0 only then,
// and the Job completes with every index done once.
func TestIndexedJobRunsToCompletion(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "idx", Namespace: ns},
		Spec: batchv1.JobSpec{
			Completions: ptr.To[int32](3), Parallelism: ptr.To[int32](3), BackoffLimit: ptr.To[int32](0),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Template: v1.PodTemplateSpec{Spec: v1.PodSpec{
				NodeName: nodeName, RestartPolicy: v1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []v1.Container{{Name: "main", Image: busybox, ImagePullPolicy: v1.PullNever,
					Command: []string{"sh", "-c", `test -n "$JOB_COMPLETION_INDEX" && test "$(hostname)" = "idx-$JOB_COMPLETION_INDEX"`}}},
			}},
		},
	}
	if _, err := client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		bg := metav1.DeletePropagationBackground
		_ = client.BatchV1().Jobs(ns).Delete(ctx, "idx", metav1.DeleteOptions{PropagationPolicy: &bg})
	})
	eventually(t, 2*time.Minute, func() error {
		j, err := client.BatchV1().Jobs(ns).Get(ctx, "idx", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == v1.ConditionTrue {
				t.Fatalf("job failed: %s: %s", c.Reason, c.Message)
			}
			if c.Type == batchv1.JobComplete && c.Status == v1.ConditionTrue {
				if j.Status.CompletedIndexes != "0-2" || j.Status.Succeeded != 3 || j.Status.Failed != 0 {
					t.Fatalf("complete with status %+v", j.Status)
				}
				return nil
			}
		}
		return fmt.Errorf("status %+v", j.Status)
	})
}
