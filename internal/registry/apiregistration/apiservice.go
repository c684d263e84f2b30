// Package apiregistration defines apiregistration.k8s.io/v1 APIServices:
// the group versions the API server serves itself (Local) or proxies to
// an extension API server behind a Service. Validation is upstream's
// (k8s.io/kube-aggregator's), applied to the internal form a v1 object
// converts to.
package apiregistration

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"
	apiregistrationinternal "k8s.io/kube-aggregator/pkg/apis/apiregistration"
	apiregistrationinstall "k8s.io/kube-aggregator/pkg/apis/apiregistration/install"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/validation"
	apiregistrationapply "k8s.io/kube-aggregator/pkg/client/applyconfiguration"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

func init() {
	// The server's codecs and storage use client-go's scheme, which has
	// no apiregistration types of its own.
	utilruntime.Must(apiregistrationv1.AddToScheme(scheme.Scheme))
}

var internalScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiregistrationinstall.Install(s)
	return s
}()

// APIServices is the apiservices resource.
var APIServices = &registry.Resource{
	Group: "apiregistration.k8s.io", Version: "v1", Name: "apiservices", Singular: "apiservice", Kind: "APIService",
	Categories: []string{"api-extensions"},
	New:        func() runtime.Object { return &apiregistrationv1.APIService{} },
	NewList:    func() runtime.Object { return &apiregistrationv1.APIServiceList{} },
	Status:     true,
	// A status writer may change neither labels, annotations, finalizers
	// nor owner references, as upstream's status strategy resets them.
	StatusResetsMetadata: []string{"labels", "annotations", "finalizers", "ownerReferences"},
	Default:              registry.Typed(apiregistrationv1.SetObjectDefaults_APIService),
	// "v1." names the core group: a path segment, not a DNS name.
	ValidateName:         path.ValidatePathSegmentName,
	PrepareForCreate:     registry.Typed(prepareForCreate),
	PrepareForUpdate:     registry.Typed2(func(obj, old *apiregistrationv1.APIService) { obj.Status = old.Status }),
	Validate:             registry.TypedValidate(validateAPIService),
	ValidateUpdate:       registry.TypedValidateUpdate(validateAPIServiceUpdate),
	ValidateStatusUpdate: registry.TypedValidateUpdate(validateAPIServiceStatusUpdate),
	TypeConverter:        apiregistrationapply.NewTypeConverter(scheme.Scheme),
	Table: &registry.Table{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Service", Type: "string", Description: "The reference to the service that hosts this API endpoint."},
			{Name: "Available", Type: "string", Description: "Whether this service is available."},
			{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		},
		Row: registry.TypedRow(row),
	},
}

// prepareForCreate marks a local APIService available at once, as
// upstream does; the server has cleared the status.
func prepareForCreate(svc *apiregistrationv1.APIService) {
	if svc.Spec.Service == nil {
		SetCondition(svc, LocalAvailable())
	}
}

func row(svc *apiregistrationv1.APIService, now time.Time) []any {
	service := "Local"
	if svc.Spec.Service != nil {
		service = svc.Spec.Service.Namespace + "/" + svc.Spec.Service.Name
	}
	status := string(apiregistrationv1.ConditionUnknown)
	for _, c := range svc.Status.Conditions {
		if c.Type != apiregistrationv1.Available {
			continue
		}
		status = string(c.Status)
		if c.Status != apiregistrationv1.ConditionTrue && c.Reason != "" {
			status = fmt.Sprintf("%s (%s)", c.Status, c.Reason)
		}
	}
	return []any{service, status, printers.TranslateTimestampSince(svc.CreationTimestamp, now)}
}

func toInternal(svc *apiregistrationv1.APIService) (*apiregistrationinternal.APIService, error) {
	out := &apiregistrationinternal.APIService{}
	if err := internalScheme.Convert(svc, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func validateAPIService(svc *apiregistrationv1.APIService) field.ErrorList {
	in, err := toInternal(svc)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return specErrors(validation.ValidateAPIService(context.Background(), in))
}

func validateAPIServiceUpdate(svc, old *apiregistrationv1.APIService) field.ErrorList {
	return onInternal(svc, old, validation.ValidateAPIServiceUpdate)
}

func validateAPIServiceStatusUpdate(svc, old *apiregistrationv1.APIService) field.ErrorList {
	return onInternal(svc, old, validation.ValidateAPIServiceStatusUpdate)
}

func onInternal(svc, old *apiregistrationv1.APIService, validate func(context.Context, *apiregistrationinternal.APIService, *apiregistrationinternal.APIService) field.ErrorList) field.ErrorList {
	in, err := toInternal(svc)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	oldIn, err := toInternal(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return specErrors(validate(context.Background(), in, oldIn))
}

// specErrors drops the object metadata errors of upstream's validation,
// which the server reports itself for every kind, but for the rule that
// ties an APIService's name to its version and group.
func specErrors(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if strings.HasPrefix(e.Field, "metadata") && !(e.Field == "metadata.name" && strings.Contains(e.Detail, "must be `spec.version+")) {
			continue
		}
		out = append(out, e)
	}
	return out
}
