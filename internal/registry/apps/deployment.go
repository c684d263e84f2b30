package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orca-project/orca/internal/registry"
)

// Deployments is the deployments resource.
var Deployments = &registry.Resource{
	Group: "apps", Version: "v1", Name: "deployments", Singular: "deployment", Kind: "Deployment",
	Namespaced:       true,
	ShortNames:       []string{"deploy"},
	Categories:       []string{"all"},
	Status:           true,
	TracksGeneration: true,
	Scale:            deploymentScale,
	New:              func() runtime.Object { return &appsv1.Deployment{} },
	NewList:          func() runtime.Object { return &appsv1.DeploymentList{} },
	Default:          registry.Typed(defaultDeployment),
	Validate:         registry.TypedValidate(validateDeployment),
	ValidateUpdate:   registry.TypedValidateUpdate(validateDeploymentUpdate),
	Table:            deploymentTable,
	Fields:           deploymentFields,
}

func defaultDeployment(obj *appsv1.Deployment) {}

func validateDeployment(obj *appsv1.Deployment) field.ErrorList { return nil }

func validateDeploymentUpdate(obj, old *appsv1.Deployment) field.ErrorList { return nil }
