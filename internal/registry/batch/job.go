package batch

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Jobs is the jobs resource.
var Jobs = &registry.Resource{
	Group: "batch", Version: "v1", Name: "jobs", Singular: "job", Kind: "Job",
	Namespaced:       true,
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	New:              func() runtime.Object { return &batchv1.Job{} },
	NewList:          func() runtime.Object { return &batchv1.JobList{} },
	Default:          registry.Typed(defaultJob),
	Validate:         registry.TypedValidate(validateJob),
	ValidateUpdate:   registry.TypedValidateUpdate(validateJobUpdate),
	Table:            jobTable,
	Fields:           jobFields,
}

func defaultJob(obj *batchv1.Job) {}

func validateJob(obj *batchv1.Job) field.ErrorList { return nil }

func validateJobUpdate(obj, old *batchv1.Job) field.ErrorList { return nil }
