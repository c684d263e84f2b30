package batch

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// cronjobTable prints cronjobs as upstream's `kubectl get` does.
var cronjobTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Schedule", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]},
		{Name: "Timezone", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
		// Upstream types SUSPEND as a boolean yet fills it with "True",
		// "False" or "<unset>".
		{Name: "Suspend", Type: "boolean", Description: batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]},
		{Name: "Active", Type: "integer", Description: batchv1.CronJobStatus{}.SwaggerDoc()["active"]},
		{Name: "Last Schedule", Type: "string", Description: batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
		printers.AgeColumn(),
		printers.ContainersColumn(),
		printers.ImagesColumn(),
		{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	},
	Row: registry.TypedRow(func(cj *batchv1.CronJob, now time.Time) []any {
		lastSchedule := "<none>"
		if cj.Status.LastScheduleTime != nil {
			lastSchedule = printers.TranslateTimestampSince(*cj.Status.LastScheduleTime, now)
		}
		timeZone := "<none>"
		if cj.Spec.TimeZone != nil {
			timeZone = *cj.Spec.TimeZone
		}
		names, images := printers.LayoutContainerCells(cj.Spec.JobTemplate.Spec.Template.Spec.Containers)
		return []any{
			cj.Spec.Schedule,
			timeZone,
			printers.BoolPtr(cj.Spec.Suspend),
			int64(len(cj.Status.Active)),
			lastSchedule,
			printers.TranslateTimestampSince(cj.CreationTimestamp, now),
			names,
			images,
			metav1.FormatLabelSelector(cj.Spec.JobTemplate.Spec.Selector),
		}
	}),
}

// cronjobFields lists the fields a field selector over cronjobs may name.
var cronjobFields func(runtime.Object) fields.Set
