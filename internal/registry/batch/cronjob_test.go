package batch

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"
)

func newTestCronJob() *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "default"},
		Spec: batchv1.CronJobSpec{
			Schedule:    "*/5 * * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: batchPodTemplate()}},
		},
	}
	defaultCronJob(cj)
	return cj
}

func TestDefaultCronJob(t *testing.T) {
	tests := []struct {
		name   string
		in     batchv1.CronJobSpec
		policy batchv1.ConcurrencyPolicy
		keep   int32
	}{
		{"empty", batchv1.CronJobSpec{}, batchv1.AllowConcurrent, 3},
		{"explicit", batchv1.CronJobSpec{ConcurrencyPolicy: batchv1.ForbidConcurrent, SuccessfulJobsHistoryLimit: utilptr.To[int32](0)}, batchv1.ForbidConcurrent, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cj := &batchv1.CronJob{Spec: tc.in}
			defaultCronJob(cj)
			if cj.Spec.ConcurrencyPolicy != tc.policy {
				t.Errorf("concurrencyPolicy = %s", cj.Spec.ConcurrencyPolicy)
			}
			if *cj.Spec.SuccessfulJobsHistoryLimit != tc.keep || *cj.Spec.FailedJobsHistoryLimit != 1 || *cj.Spec.Suspend {
				t.Errorf("limits %d/%d suspend %v", *cj.Spec.SuccessfulJobsHistoryLimit, *cj.Spec.FailedJobsHistoryLimit, *cj.Spec.Suspend)
			}
			// Job-level defaults are left to each Job the controller creates.
			if js := cj.Spec.JobTemplate.Spec; js.BackoffLimit != nil || js.Completions != nil || js.Selector != nil {
				t.Errorf("job template defaulted: %+v", js)
			}
		})
	}
}

func TestPrepareCronJob(t *testing.T) {
	cj := newTestCronJob()
	cj.Spec.JobTemplate.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{}
	prepareCronJobForCreate(cj)
	if cj.Spec.JobTemplate.Spec.Scheduling != nil {
		t.Errorf("create kept scheduling")
	}
	updated := cj.DeepCopy()
	updated.Spec.JobTemplate.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{}
	prepareCronJobForUpdate(updated, cj)
	if updated.Spec.JobTemplate.Spec.Scheduling != nil {
		t.Errorf("update introduced the disabled scheduling field")
	}
}

func TestValidateCronJob(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*batchv1.CronJob)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*batchv1.CronJob) {},
	}, {
		name:   "macro schedule and zone",
		mutate: func(cj *batchv1.CronJob) { cj.Spec.Schedule = "@daily"; cj.Spec.TimeZone = utilptr.To("Europe/Berlin") },
	}, {
		name:   "missing schedule",
		mutate: func(cj *batchv1.CronJob) { cj.Spec.Schedule = "" },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.schedule", Detail: ""}},
	}, {
		name:   "bad schedule",
		mutate: func(cj *batchv1.CronJob) { cj.Spec.Schedule = "0 25 * * *" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.schedule", Detail: "end of range (25) above maximum (23): 25"}},
	}, {
		name:   "time zone in schedule",
		mutate: func(cj *batchv1.CronJob) { cj.Spec.Schedule = "CRON_TZ=UTC 0 * * * *" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.schedule", Detail: "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"}},
	}, {
		name:   "unknown time zone",
		mutate: func(cj *batchv1.CronJob) { cj.Spec.TimeZone = utilptr.To("Mars/Olympus_Mons") },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.timeZone", Detail: "unknown time zone Mars/Olympus_Mons"}},
	}, {
		name:   "empty time zone",
		mutate: func(cj *batchv1.CronJob) { cj.Spec.TimeZone = utilptr.To("") },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.timeZone", Detail: "timeZone must be nil or non-empty string"}},
	}, {
		name:   "path-like time zone",
		mutate: func(cj *batchv1.CronJob) { cj.Spec.TimeZone = utilptr.To("../../etc/passwd") },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.timeZone", Detail: "unknown time zone ../../etc/passwd"}},
	}, {
		name:   "local time zone",
		mutate: func(cj *batchv1.CronJob) { cj.Spec.TimeZone = utilptr.To("Local") },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.timeZone", Detail: "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"}},
	}, {
		name: "negative numbers",
		mutate: func(cj *batchv1.CronJob) {
			cj.Spec.StartingDeadlineSeconds = utilptr.To[int64](-1)
			cj.Spec.SuccessfulJobsHistoryLimit = utilptr.To[int32](-1)
			cj.Spec.FailedJobsHistoryLimit = utilptr.To[int32](-1)
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.startingDeadlineSeconds", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.successfulJobsHistoryLimit", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.failedJobsHistoryLimit", Detail: ""},
		},
	}, {
		name:   "missing concurrency policy",
		mutate: func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = "" },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.concurrencyPolicy", Detail: ""}},
	}, {
		name:   "unknown concurrency policy",
		mutate: func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = "Queue" },
		want:   []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.concurrencyPolicy", Detail: ""}},
	}, {
		name: "job template selector",
		mutate: func(cj *batchv1.CronJob) {
			cj.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
			cj.Spec.JobTemplate.Spec.ManualSelector = utilptr.To(true)
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.jobTemplate.spec.selector", Detail: "`selector` will be auto-generated"},
			{Type: field.ErrorTypeNotSupported, Field: "spec.jobTemplate.spec.manualSelector", Detail: ""},
		},
	}, {
		name: "job template spec",
		mutate: func(cj *batchv1.CronJob) {
			cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
			cj.Spec.JobTemplate.Spec.Parallelism = utilptr.To[int32](-1)
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.jobTemplate.spec.parallelism", Detail: ""},
			{Type: field.ErrorTypeRequired, Field: "spec.jobTemplate.spec.template.spec.restartPolicy", Detail: ""},
		},
	}, {
		name:   "name leaves no room for the job suffix",
		mutate: func(cj *batchv1.CronJob) { cj.Name = strings.Repeat("n", 53) },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "metadata.name", Detail: "must be no more than 52 characters"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cj := newTestCronJob()
			tc.mutate(cj)
			checkErrs(t, validateCronJob(cj), tc.want)
		})
	}
}
