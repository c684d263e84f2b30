package batch

import (
	"math"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"
)

const testJobUID = "2b7b4c1e-uid"

func newTestJob() *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default", UID: testJobUID},
		Spec:       batchv1.JobSpec{Template: batchPodTemplate()},
	}
}

func defaultedTestJob() *batchv1.Job {
	job := newTestJob()
	defaultJob(job)
	return job
}

func TestDefaultJob(t *testing.T) {
	generated := map[string]string{
		"batch.kubernetes.io/controller-uid": testJobUID,
		"batch.kubernetes.io/job-name":       "pi",
		"controller-uid":                     testJobUID,
		"job-name":                           "pi",
	}
	withApp := func(m map[string]string) map[string]string {
		out := map[string]string{"app": "pi"}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name   string
		mutate func(*batchv1.Job)
		check  func(*testing.T, *batchv1.Job)
	}{{
		name:   "bare job",
		mutate: func(*batchv1.Job) {},
		check: func(t *testing.T, job *batchv1.Job) {
			want := batchv1.JobSpec{
				Completions:          utilptr.To[int32](1),
				Parallelism:          utilptr.To[int32](1),
				BackoffLimit:         utilptr.To[int32](6),
				CompletionMode:       utilptr.To(batchv1.NonIndexedCompletion),
				Suspend:              utilptr.To(false),
				PodReplacementPolicy: utilptr.To(batchv1.TerminatingOrFailed),
				ManualSelector:       utilptr.To(false),
				Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": testJobUID}},
				Template:             job.Spec.Template,
			}
			if !apiequality.Semantic.DeepEqual(job.Spec, want) {
				t.Errorf("spec = %+v\nwant %+v", job.Spec, want)
			}
			if !apiequality.Semantic.DeepEqual(job.Spec.Template.Labels, generated) {
				t.Errorf("template labels = %v", job.Spec.Template.Labels)
			}
			if !apiequality.Semantic.DeepEqual(job.Labels, generated) {
				t.Errorf("object labels = %v", job.Labels)
			}
		},
	}, {
		name:   "parallel work queue keeps completions unset",
		mutate: func(job *batchv1.Job) { job.Spec.Parallelism = utilptr.To[int32](4) },
		check: func(t *testing.T, job *batchv1.Job) {
			if job.Spec.Completions != nil || *job.Spec.Parallelism != 4 {
				t.Errorf("completions %v parallelism %v", job.Spec.Completions, *job.Spec.Parallelism)
			}
		},
	}, {
		name:   "fixed completions get parallelism 1",
		mutate: func(job *batchv1.Job) { job.Spec.Completions = utilptr.To[int32](8) },
		check: func(t *testing.T, job *batchv1.Job) {
			if *job.Spec.Completions != 8 || *job.Spec.Parallelism != 1 {
				t.Errorf("completions %v parallelism %v", *job.Spec.Completions, *job.Spec.Parallelism)
			}
		},
	}, {
		name: "per-index backoff lifts the global limit",
		mutate: func(job *batchv1.Job) {
			job.Spec.CompletionMode = utilptr.To(batchv1.IndexedCompletion)
			job.Spec.BackoffLimitPerIndex = utilptr.To[int32](1)
		},
		check: func(t *testing.T, job *batchv1.Job) {
			if *job.Spec.BackoffLimit != math.MaxInt32 {
				t.Errorf("backoffLimit = %d", *job.Spec.BackoffLimit)
			}
			if *job.Spec.CompletionMode != batchv1.IndexedCompletion {
				t.Errorf("completion mode overwritten")
			}
		},
	}, {
		name: "pod failure policy",
		mutate: func(job *batchv1.Job) {
			job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}},
			}}}
		},
		check: func(t *testing.T, job *batchv1.Job) {
			if *job.Spec.PodReplacementPolicy != batchv1.Failed {
				t.Errorf("podReplacementPolicy = %s", *job.Spec.PodReplacementPolicy)
			}
			if s := job.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Status; s != corev1.ConditionTrue {
				t.Errorf("pattern status = %q", s)
			}
		},
	}, {
		name: "manual selector is left alone",
		mutate: func(job *batchv1.Job) {
			job.Spec.ManualSelector = utilptr.To(true)
			job.Spec.Template.Labels = map[string]string{"app": "pi"}
		},
		check: func(t *testing.T, job *batchv1.Job) {
			if job.Spec.Selector != nil {
				t.Errorf("selector generated: %v", job.Spec.Selector)
			}
			if !apiequality.Semantic.DeepEqual(job.Spec.Template.Labels, map[string]string{"app": "pi"}) {
				t.Errorf("template labels = %v", job.Spec.Template.Labels)
			}
			if !apiequality.Semantic.DeepEqual(job.Labels, map[string]string{"app": "pi"}) {
				t.Errorf("object labels = %v", job.Labels)
			}
		},
	}, {
		name: "user labels kept, generated ones added",
		mutate: func(job *batchv1.Job) {
			job.Labels = map[string]string{"team": "math"}
			job.Spec.Template.Labels = map[string]string{"app": "pi"}
		},
		check: func(t *testing.T, job *batchv1.Job) {
			if !apiequality.Semantic.DeepEqual(job.Spec.Template.Labels, withApp(generated)) {
				t.Errorf("template labels = %v", job.Spec.Template.Labels)
			}
			if !apiequality.Semantic.DeepEqual(job.Labels, map[string]string{"team": "math"}) {
				t.Errorf("object labels = %v", job.Labels)
			}
		},
	}, {
		name:   "defaulting twice changes nothing",
		mutate: func(job *batchv1.Job) { defaultJob(job) },
		check: func(t *testing.T, job *batchv1.Job) {
			again := defaultedTestJob()
			if !apiequality.Semantic.DeepEqual(job, again) {
				t.Errorf("not idempotent:\n%+v\n%+v", job, again)
			}
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := newTestJob()
			tc.mutate(job)
			defaultJob(job)
			tc.check(t, job)
		})
	}
}

func TestPrepareJob(t *testing.T) {
	job := defaultedTestJob()
	job.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{}
	prepareJobForCreate(job)
	if job.Spec.Scheduling != nil {
		t.Errorf("create kept scheduling %+v", job.Spec.Scheduling)
	}
	updated := job.DeepCopy()
	updated.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{}
	prepareJobForUpdate(updated, job)
	if updated.Spec.Scheduling != nil {
		t.Errorf("update introduced the disabled scheduling field")
	}
}

func TestValidateJob(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*batchv1.Job)
		want   []wantErr
	}{{
		name:   "valid",
		mutate: func(*batchv1.Job) {},
	}, {
		name:   "restart policy Always",
		mutate: func(job *batchv1.Job) { job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.template.spec.restartPolicy", Detail: `valid values: "OnFailure", "Never"`}},
	}, {
		name:   "unknown restart policy",
		mutate: func(job *batchv1.Job) { job.Spec.Template.Spec.RestartPolicy = "Sometimes" },
		// The pod template check rejects it first, as upstream's does.
		want: []wantErr{
			{Type: field.ErrorTypeNotSupported, Field: "spec.template.spec.restartPolicy", Detail: `supported values: "Always", "OnFailure", "Never"`},
			{Type: field.ErrorTypeNotSupported, Field: "spec.template.spec.restartPolicy", Detail: `supported values: "OnFailure", "Never"`},
		},
	}, {
		name: "negative counts",
		mutate: func(job *batchv1.Job) {
			job.Spec.Parallelism = utilptr.To[int32](-1)
			job.Spec.Completions = utilptr.To[int32](-1)
			job.Spec.ActiveDeadlineSeconds = utilptr.To[int64](-1)
			job.Spec.BackoffLimit = utilptr.To[int32](-1)
			job.Spec.TTLSecondsAfterFinished = utilptr.To[int32](-1)
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.parallelism", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.completions", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.activeDeadlineSeconds", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.backoffLimit", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.ttlSecondsAfterFinished", Detail: ""},
		},
	}, {
		name:   "per-index settings need indexed mode",
		mutate: func(job *batchv1.Job) { job.Spec.MaxFailedIndexes = utilptr.To[int32](1) },
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.backoffLimitPerIndex", Detail: "when maxFailedIndexes is specified"},
			{Type: field.ErrorTypeInvalid, Field: "spec.maxFailedIndexes", Detail: "requires indexed completion mode"},
		},
	}, {
		name: "indexed without completions",
		mutate: func(job *batchv1.Job) {
			job.Spec.CompletionMode = utilptr.To(batchv1.IndexedCompletion)
			job.Spec.Completions = nil
		},
		want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.completions", Detail: "when completion mode is Indexed"}},
	}, {
		name: "indexed with too many failed indexes",
		mutate: func(job *batchv1.Job) {
			job.Spec.CompletionMode = utilptr.To(batchv1.IndexedCompletion)
			job.Spec.BackoffLimitPerIndex = utilptr.To[int32](1)
			job.Spec.MaxFailedIndexes = utilptr.To[int32](2)
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.maxFailedIndexes", Detail: "must be less than or equal to completions"}},
	}, {
		name:   "unknown completion mode",
		mutate: func(job *batchv1.Job) { job.Spec.CompletionMode = utilptr.To[batchv1.CompletionMode]("Sometimes") },
		want:   []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.completionMode", Detail: ""}},
	}, {
		name: "indexed hostname would be too long",
		mutate: func(job *batchv1.Job) {
			job.Name = strings.Repeat("a", 61)
			job.Spec.Template.Labels["job-name"] = job.Name
			job.Spec.Template.Labels["batch.kubernetes.io/job-name"] = job.Name
			job.Spec.CompletionMode = utilptr.To(batchv1.IndexedCompletion)
			job.Spec.Completions = utilptr.To[int32](100)
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "metadata.name", Detail: "will not able to create pod with invalid DNS label: " + strings.Repeat("a", 61) + "-99"}},
	}, {
		name:   "managedBy must be a domain-prefixed path",
		mutate: func(job *batchv1.Job) { job.Spec.ManagedBy = utilptr.To("kueue") },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.managedBy", Detail: ""}},
	}, {
		name:   "managedBy too long",
		mutate: func(job *batchv1.Job) { job.Spec.ManagedBy = utilptr.To("example.com/" + strings.Repeat("x", 60)) },
		want:   []wantErr{{Type: field.ErrorTypeTooLong, Field: "spec.managedBy", Detail: ""}},
	}, {
		name: "unknown pod replacement policy",
		mutate: func(job *batchv1.Job) {
			job.Spec.PodReplacementPolicy = utilptr.To[batchv1.PodReplacementPolicy]("Eventually")
		},
		want: []wantErr{{Type: field.ErrorTypeNotSupported, Field: "spec.podReplacementPolicy", Detail: ""}},
	}, {
		name: "pod failure policy requires Failed replacement and Never restarts",
		mutate: func(job *batchv1.Job) {
			job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:      batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
			}}}
		},
		want: []wantErr{
			{Type: field.ErrorTypeNotSupported, Field: "spec.podReplacementPolicy", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.template.spec.restartPolicy", Detail: `only "Never" is supported when podFailurePolicy is specified`},
		},
	}, {
		name: "pod failure policy rules",
		mutate: func(job *batchv1.Job) {
			job.Spec.PodReplacementPolicy = utilptr.To(batchv1.Failed)
			job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: utilptr.To("sidecar"),
					Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
					Values:        []int32{0, 3, 3, 1},
				},
			}, {
				Action: batchv1.PodFailurePolicyActionFailIndex,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					Operator: "Between",
				},
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "bad type!", Status: "Maybe"}},
			}, {
				Action: "Retry",
			}}}
		},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.podFailurePolicy.rules[0].action", Detail: `valid values: ["Count" "FailIndex" "FailJob" "Ignore"]`},
			{Type: field.ErrorTypeInvalid, Field: "spec.podFailurePolicy.rules[0].onExitCodes.containerName", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.podFailurePolicy.rules[0].onExitCodes.values[0]", Detail: "must not be 0 for the In operator"},
			{Type: field.ErrorTypeDuplicate, Field: "spec.podFailurePolicy.rules[0].onExitCodes.values[2]", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.podFailurePolicy.rules[0].onExitCodes.values", Detail: "must be ordered"},
			{Type: field.ErrorTypeInvalid, Field: "spec.podFailurePolicy.rules[1].action", Detail: "requires the backoffLimitPerIndex to be set"},
			{Type: field.ErrorTypeNotSupported, Field: "spec.podFailurePolicy.rules[1].onExitCodes.operator", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.podFailurePolicy.rules[1].onExitCodes.values", Detail: "at least one value is required"},
			{Type: field.ErrorTypeInvalid, Field: "spec.podFailurePolicy.rules[1].onPodConditions[0].type", Detail: ""},
			{Type: field.ErrorTypeNotSupported, Field: "spec.podFailurePolicy.rules[1].onPodConditions[0].status", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.podFailurePolicy.rules[1]", Detail: "specifying both OnExitCodes and OnPodConditions is not supported"},
			{Type: field.ErrorTypeNotSupported, Field: "spec.podFailurePolicy.rules[2].action", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.podFailurePolicy.rules[2]", Detail: "specifying one of OnExitCodes and OnPodConditions is required"},
		},
	}, {
		name: "success policy needs indexed mode",
		mutate: func(job *batchv1.Job) {
			job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: utilptr.To[int32](1)}}}
		},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.successPolicy", Detail: "requires indexed completion mode"}},
	}, {
		name: "success policy rules",
		mutate: func(job *batchv1.Job) {
			job.Spec.CompletionMode = utilptr.To(batchv1.IndexedCompletion)
			job.Spec.Completions = utilptr.To[int32](5)
			job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
				{},
				{SucceededIndexes: utilptr.To("1-3,2")},
				{SucceededIndexes: utilptr.To("0,4"), SucceededCount: utilptr.To[int32](3)},
				{SucceededCount: utilptr.To[int32](6)},
				{SucceededIndexes: utilptr.To("5")},
			}}
		},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.successPolicy.rules[0]", Detail: "at least one of succeededCount or succeededIndexes must be specified"},
			{Type: field.ErrorTypeInvalid, Field: "spec.successPolicy.rules[1].succeededIndexes", Detail: "error parsing succeededIndexes: non-increasing order, previous: 3, current: 2"},
			{Type: field.ErrorTypeInvalid, Field: "spec.successPolicy.rules[2].succeededCount", Detail: "must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)"},
			{Type: field.ErrorTypeInvalid, Field: "spec.successPolicy.rules[3].succeededCount", Detail: "must be less than or equal to 5 (the number of specified completions)"},
			{Type: field.ErrorTypeInvalid, Field: "spec.successPolicy.rules[4].succeededIndexes", Detail: `error parsing succeededIndexes: too large index: "5"`},
		},
	}, {
		name: "empty success policy",
		mutate: func(job *batchv1.Job) {
			job.Spec.CompletionMode = utilptr.To(batchv1.IndexedCompletion)
			job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{}
		},
		want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.successPolicy.rules", Detail: ""}},
	}, {
		name: "selector pointed elsewhere",
		mutate: func(job *batchv1.Job) {
			job.Spec.Selector.MatchLabels["batch.kubernetes.io/controller-uid"] = "someone-else"
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "`selector` not auto-generated"},
			{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels", Detail: "`selector` does not match template `labels`"},
		},
	}, {
		name:   "generated label altered",
		mutate: func(job *batchv1.Job) { job.Spec.Template.Labels["controller-uid"] = "forged" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels[controller-uid]", Detail: "must be '" + testJobUID + "'"}},
	}, {
		name:   "generated label removed",
		mutate: func(job *batchv1.Job) { delete(job.Spec.Template.Labels, "job-name") },
		want:   []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.template.metadata.labels[job-name]", Detail: ""}},
	}, {
		name:   "missing uid",
		mutate: func(job *batchv1.Job) { job.UID = "" },
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "metadata.uid", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels[controller-uid]", Detail: "must be ''"},
			{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels[batch.kubernetes.io/controller-uid]", Detail: "must be ''"},
			{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "`selector` not auto-generated"},
		},
	}, {
		name: "manual selector",
		mutate: func(job *batchv1.Job) {
			job.Spec.ManualSelector = utilptr.To(true)
			job.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}}
			job.Spec.Template.Labels = map[string]string{"app": "pi"}
		},
	}, {
		name: "manual selector missing",
		mutate: func(job *batchv1.Job) {
			job.Spec.ManualSelector = utilptr.To(true)
			job.Spec.Selector = nil
		},
		want: []wantErr{
			{Type: field.ErrorTypeRequired, Field: "spec.selector", Detail: ""},
			{Type: field.ErrorTypeInvalid, Field: "spec.template.metadata.labels", Detail: ""},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := defaultedTestJob()
			tc.mutate(job)
			checkErrs(t, validateJob(job), tc.want)
		})
	}
}

func TestValidateJobUpdate(t *testing.T) {
	indexed := func(job *batchv1.Job) {
		job.Spec.CompletionMode = utilptr.To(batchv1.IndexedCompletion)
		job.Spec.Completions = utilptr.To[int32](3)
		job.Spec.Parallelism = utilptr.To[int32](3)
	}
	suspended := func(job *batchv1.Job) { job.Spec.Suspend = utilptr.To(true) }
	started := func(job *batchv1.Job) {
		suspended(job)
		job.Status.StartTime = &metav1.Time{}
	}
	tests := []struct {
		name   string
		old    func(*batchv1.Job)
		mutate func(*batchv1.Job)
		want   []wantErr
	}{{
		name: "suspend and scale",
		mutate: func(job *batchv1.Job) {
			job.Spec.Suspend = utilptr.To(true)
			job.Spec.Parallelism = utilptr.To[int32](5)
		},
	}, {
		name:   "completions fixed for non-indexed jobs",
		mutate: func(job *batchv1.Job) { job.Spec.Completions = utilptr.To[int32](2) },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.completions", Detail: "field is immutable"}},
	}, {
		name: "elastic indexed job",
		old:  indexed,
		mutate: func(job *batchv1.Job) {
			job.Spec.Completions = utilptr.To[int32](5)
			job.Spec.Parallelism = utilptr.To[int32](5)
		},
	}, {
		name:   "elastic indexed job out of tandem",
		old:    indexed,
		mutate: func(job *batchv1.Job) { job.Spec.Completions = utilptr.To[int32](5) },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.completions", Detail: "can only be modified in tandem with spec.parallelism"}},
	}, {
		name:   "selector",
		mutate: func(job *batchv1.Job) { job.Spec.Selector.MatchLabels["extra"] = "x" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.selector", Detail: "field is immutable"}},
	}, {
		name:   "template",
		mutate: func(job *batchv1.Job) { job.Spec.Template.Spec.Containers[0].Image = "perl:2" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.template", Detail: "field is immutable"}},
	}, {
		name: "scheduling directives of a suspended, unstarted job",
		old:  suspended,
		mutate: func(job *batchv1.Job) {
			job.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"}
			job.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
			job.Spec.Template.Annotations = map[string]string{"queue": "high"}
			job.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
		},
	}, {
		name:   "other template fields of a suspended job",
		old:    suspended,
		mutate: func(job *batchv1.Job) { job.Spec.Template.Spec.Containers[0].Image = "perl:2" },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.template", Detail: "field is immutable"}},
	}, {
		name:   "scheduling directives once started",
		old:    started,
		mutate: func(job *batchv1.Job) { job.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"} },
		want:   []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.template", Detail: "field is immutable"}},
	}, {
		name: "fixed fields",
		mutate: func(job *batchv1.Job) {
			job.Spec.CompletionMode = utilptr.To(batchv1.IndexedCompletion)
			job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{}
			job.Spec.BackoffLimitPerIndex = utilptr.To[int32](1)
			job.Spec.ManagedBy = utilptr.To("example.com/queue")
			job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{}
		},
		want: []wantErr{
			{Type: field.ErrorTypeInvalid, Field: "spec.completionMode", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "spec.podFailurePolicy", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "spec.backoffLimitPerIndex", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "spec.managedBy", Detail: "field is immutable"},
			{Type: field.ErrorTypeInvalid, Field: "spec.successPolicy", Detail: "field is immutable"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := defaultedTestJob()
			if tc.old != nil {
				tc.old(old)
			}
			job := old.DeepCopy()
			job.Status = batchv1.JobStatus{}
			tc.mutate(job)
			checkErrs(t, validateJobUpdate(job, old), tc.want)
		})
	}
}
