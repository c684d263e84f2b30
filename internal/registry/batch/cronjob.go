package batch

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Cronjobs is the cronjobs resource.
var Cronjobs = &registry.Resource{
	Group: "batch", Version: "v1", Name: "cronjobs", Singular: "cronjob", Kind: "CronJob",
	Namespaced:       true,
	ShortNames:       []string{"cj"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	New:              func() runtime.Object { return &batchv1.CronJob{} },
	NewList:          func() runtime.Object { return &batchv1.CronJobList{} },
	Default:          registry.Typed(defaultCronJob),
	Validate:         registry.TypedValidate(validateCronJob),
	ValidateUpdate:   registry.TypedValidateUpdate(validateCronJobUpdate),
	Table:            cronjobTable,
	Fields:           cronjobFields,
}

func defaultCronJob(obj *batchv1.CronJob) {}

func validateCronJob(obj *batchv1.CronJob) field.ErrorList { return nil }

func validateCronJobUpdate(obj, old *batchv1.CronJob) field.ErrorList { return nil }
