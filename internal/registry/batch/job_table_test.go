package batch

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

var (
	tableNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tableCol = printerstest.Col
)

type tableColumn = printerstest.Column

func tableAgo(d time.Duration) metav1.Time { return metav1.NewTime(tableNow.Add(-d)) }

func tableAgoPtr(d time.Duration) *metav1.Time { t := tableAgo(d); return &t }

func tablePtr[T any](v T) *T { return &v }

func jobConditionOf(t batchv1.JobConditionType, s corev1.ConditionStatus) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: s}
}

func TestJobColumns(t *testing.T) {
	printerstest.CheckColumns(t, jobTable, []tableColumn{
		tableCol("Status", "string", 0), tableCol("Completions", "string", 0), tableCol("Duration", "string", 0), tableCol("Age", "string", 0),
		tableCol("Containers", "string", 1), tableCol("Images", "string", 1), tableCol("Selector", "string", 1),
	})
}

func TestJobRow(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  batchv1.Job
		want map[string]any
	}{
		{
			name: "running",
			job: batchv1.Job{
				Spec:   batchv1.JobSpec{Completions: tablePtr(int32(3)), Parallelism: tablePtr(int32(2))},
				Status: batchv1.JobStatus{Succeeded: 1, StartTime: tableAgoPtr(3*time.Minute + 20*time.Second)},
			},
			want: map[string]any{"Status": "Running", "Completions": "1/3", "Duration": "3m20s"},
		},
		{
			name: "complete",
			job: batchv1.Job{
				Spec: batchv1.JobSpec{Completions: tablePtr(int32(1))},
				Status: batchv1.JobStatus{
					Succeeded: 1, StartTime: tableAgoPtr(time.Hour), CompletionTime: tableAgoPtr(time.Hour - 12*time.Second),
					Conditions: []batchv1.JobCondition{jobConditionOf(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue), jobConditionOf(batchv1.JobComplete, corev1.ConditionTrue)},
				},
			},
			want: map[string]any{"Status": "Complete", "Completions": "1/1", "Duration": "12s"},
		},
		{
			name: "failed",
			job: batchv1.Job{
				Spec: batchv1.JobSpec{Completions: tablePtr(int32(1))},
				Status: batchv1.JobStatus{StartTime: tableAgoPtr(time.Minute), Conditions: []batchv1.JobCondition{
					jobConditionOf(batchv1.JobFailureTarget, corev1.ConditionTrue), jobConditionOf(batchv1.JobFailed, corev1.ConditionTrue),
				}},
			},
			want: map[string]any{"Status": "Failed", "Duration": "60s"},
		},
		{
			name: "failure target",
			job: batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
				jobConditionOf(batchv1.JobFailureTarget, corev1.ConditionTrue),
			}}},
			want: map[string]any{"Status": "FailureTarget", "Duration": ""},
		},
		{
			name: "suspended, never started",
			job: batchv1.Job{
				Spec: batchv1.JobSpec{Completions: tablePtr(int32(5)), Suspend: tablePtr(true)},
				Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
					jobConditionOf(batchv1.JobSuspended, corev1.ConditionTrue),
				}},
			},
			want: map[string]any{"Status": "Suspended", "Completions": "0/5", "Duration": ""},
		},
		{
			name: "suspension lifted",
			job: batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
				jobConditionOf(batchv1.JobSuspended, corev1.ConditionFalse),
			}}},
			want: map[string]any{"Status": "Running"},
		},
		{
			name: "terminating",
			job: batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: tableAgoPtr(0)},
				Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
					jobConditionOf(batchv1.JobSuspended, corev1.ConditionTrue),
				}},
			},
			want: map[string]any{"Status": "Terminating"},
		},
		{
			name: "complete beats terminating",
			job: batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: tableAgoPtr(0)},
				Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
					jobConditionOf(batchv1.JobComplete, corev1.ConditionTrue),
				}},
			},
			want: map[string]any{"Status": "Complete"},
		},
		{
			name: "work queue",
			job: batchv1.Job{
				Spec:   batchv1.JobSpec{Parallelism: tablePtr(int32(4))},
				Status: batchv1.JobStatus{Succeeded: 2, StartTime: tableAgoPtr(10 * time.Hour)},
			},
			want: map[string]any{"Completions": "2/1 of 4", "Duration": "10h"},
		},
		{
			name: "single pod without completions",
			job:  batchv1.Job{Spec: batchv1.JobSpec{Parallelism: tablePtr(int32(1))}},
			want: map[string]any{"Completions": "0/1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { printerstest.CheckCells(t, jobTable, &tc.job, tableNow, tc.want) })
	}
}

func TestJobWideCells(t *testing.T) {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(5 * time.Minute)},
		Spec: batchv1.JobSpec{
			Completions: tablePtr(int32(1)),
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "u1"}},
			Template:    corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "pi", Image: "perl:5.34"}}}},
		},
	}
	printerstest.CheckRow(t, jobTable, job, tableNow, []any{"Running", "0/1", "", "5m", "pi", "perl:5.34", "batch.kubernetes.io/controller-uid=u1"})
	if got := jobFields(&batchv1.Job{Status: batchv1.JobStatus{Succeeded: 7}}); len(got) != 1 || got["status.successful"] != "7" {
		t.Errorf("fields %v", got)
	}
}

func TestCronJobTable(t *testing.T) {
	printerstest.CheckColumns(t, cronjobTable, []tableColumn{
		tableCol("Schedule", "string", 0), tableCol("Timezone", "string", 0), tableCol("Suspend", "boolean", 0), tableCol("Active", "integer", 0),
		tableCol("Last Schedule", "string", 0), tableCol("Age", "string", 0),
		tableCol("Containers", "string", 1), tableCol("Images", "string", 1), tableCol("Selector", "string", 1),
	})
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(3 * 24 * time.Hour)},
		Spec: batchv1.CronJobSpec{
			Schedule: "*/5 * * * *", TimeZone: tablePtr("Europe/Paris"), Suspend: tablePtr(false),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "hello", Image: "busybox"}},
			}}}},
		},
		Status: batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "j1"}, {Name: "j2"}}, LastScheduleTime: tableAgoPtr(4 * time.Minute)},
	}
	printerstest.CheckRow(t, cronjobTable, cj, tableNow, []any{"*/5 * * * *", "Europe/Paris", "False", int64(2), "4m", "3d", "hello", "busybox", "<none>"})
	printerstest.CheckCells(t, cronjobTable, &batchv1.CronJob{}, tableNow, map[string]any{
		"Timezone": "<none>", "Suspend": "<unset>", "Last Schedule": "<none>", "Active": int64(0),
	})
	printerstest.CheckCells(t, cronjobTable, &batchv1.CronJob{Spec: batchv1.CronJobSpec{Suspend: tablePtr(true)}}, tableNow, map[string]any{"Suspend": "True"})
}
