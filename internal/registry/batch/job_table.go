package batch

import (
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// jobTable prints jobs as upstream's `kubectl get` does.
var jobTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Status", Type: "string", Description: "Status of the job."},
		{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
		{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
		printers.AgeColumn(),
		printers.ContainersColumn(),
		printers.ImagesColumn(),
		{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	},
	Row: registry.TypedRow(jobRow),
}

// jobFields lists the fields a field selector over jobs may name.
var jobFields = registry.TypedFields(func(job *batchv1.Job) fields.Set {
	return fields.Set{"status.successful": strconv.Itoa(int(job.Status.Succeeded))}
})

func jobRow(job *batchv1.Job, now time.Time) []any {
	var completions string
	switch {
	case job.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
	case job.Spec.Parallelism != nil && *job.Spec.Parallelism > 1:
		// A work-queue job is done after one success, whatever its
		// parallelism.
		completions = fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, *job.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", job.Status.Succeeded)
	}

	var jobDuration string
	switch {
	case job.Status.StartTime == nil:
	case job.Status.CompletionTime == nil:
		jobDuration = duration.HumanDuration(now.Sub(job.Status.StartTime.Time))
	default:
		jobDuration = duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
	}

	// Terminal conditions outrank deletion, which outranks the transient
	// ones.
	var status string
	switch {
	case hasJobCondition(job.Status.Conditions, batchv1.JobComplete):
		status = "Complete"
	case hasJobCondition(job.Status.Conditions, batchv1.JobFailed):
		status = "Failed"
	case job.DeletionTimestamp != nil:
		status = "Terminating"
	case hasJobCondition(job.Status.Conditions, batchv1.JobSuspended):
		status = "Suspended"
	case hasJobCondition(job.Status.Conditions, batchv1.JobFailureTarget):
		status = "FailureTarget"
	default:
		status = "Running"
	}

	names, images := printers.LayoutContainerCells(job.Spec.Template.Spec.Containers)
	return []any{
		status,
		completions,
		jobDuration,
		printers.TranslateTimestampSince(job.CreationTimestamp, now),
		names,
		images,
		metav1.FormatLabelSelector(job.Spec.Selector),
	}
}

// hasJobCondition looks at the first condition of the type only, as
// upstream does.
func hasJobCondition(conditions []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
