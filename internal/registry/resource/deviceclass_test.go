package resource

import (
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// deviceClass is the class of upstream's conformance test: one selector
// that matches no device.
func deviceClass(mutate func(*resourcev1.DeviceClassSpec)) *resourcev1.DeviceClass {
	dc := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "test-dra"},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: "false"},
		}}},
	}
	if mutate != nil {
		mutate(&dc.Spec)
	}
	return dc
}

func opaque(driver, params string) resourcev1.DeviceConfiguration {
	return resourcev1.DeviceConfiguration{Opaque: &resourcev1.OpaqueDeviceConfiguration{Driver: driver, Parameters: runtime.RawExtension{Raw: []byte(params)}}}
}

func TestValidateDeviceClass(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*resourcev1.DeviceClassSpec)
		want   []wantErr
	}{
		{name: "conformance class"},
		{name: "no selectors", mutate: func(s *resourcev1.DeviceClassSpec) { s.Selectors = nil }},
		{name: "selector without CEL", mutate: func(s *resourcev1.DeviceClassSpec) { s.Selectors[0].CEL = nil },
			want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.selectors[0].cel"}}},
		{name: "expression too long", mutate: func(s *resourcev1.DeviceClassSpec) {
			s.Selectors[0].CEL.Expression = strings.Repeat("x", resourcev1.CELSelectorExpressionMaxLength+1)
		}, want: []wantErr{{Type: field.ErrorTypeTooLong, Field: "spec.selectors[0].cel.expression", Detail: "may not be more than 10240 bytes"}}},
		{name: "too many selectors", mutate: func(s *resourcev1.DeviceClassSpec) {
			for len(s.Selectors) <= resourcev1.DeviceSelectorsMaxSize {
				s.Selectors = append(s.Selectors, resourcev1.DeviceSelector{})
			}
		}, want: []wantErr{{Type: field.ErrorTypeTooMany, Field: "spec.selectors"}}},
		{name: "driver configuration", mutate: func(s *resourcev1.DeviceClassSpec) {
			s.Config = []resourcev1.DeviceClassConfiguration{{DeviceConfiguration: opaque("dra.example.com", `{"mode":"fast"}`)}}
		}},
		{name: "configuration without opaque parameters", mutate: func(s *resourcev1.DeviceClassSpec) {
			s.Config = []resourcev1.DeviceClassConfiguration{{}}
		}, want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.config[0].opaque"}}},
		{name: "parameters not an object", mutate: func(s *resourcev1.DeviceClassSpec) {
			s.Config = []resourcev1.DeviceClassConfiguration{{DeviceConfiguration: opaque("dra.example.com", `[1]`)}}
		}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.config[0].opaque.parameters", Detail: "must be a valid JSON object"}}},
		{name: "parameters not JSON", mutate: func(s *resourcev1.DeviceClassSpec) {
			s.Config = []resourcev1.DeviceClassConfiguration{{DeviceConfiguration: opaque("dra.example.com", `{`)}}
		}, want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.config[0].opaque.parameters", Detail: "error parsing data as JSON: unexpected end of JSON input"}}},
		{name: "configuration without driver", mutate: func(s *resourcev1.DeviceClassSpec) {
			s.Config = []resourcev1.DeviceClassConfiguration{{DeviceConfiguration: opaque("", `{}`)}}
		}, want: []wantErr{{Type: field.ErrorTypeRequired, Field: "spec.config[0].opaque.driver"}}},
		{name: "extended resource name", mutate: func(s *resourcev1.DeviceClassSpec) { s.ExtendedResourceName = ptr.To("example.com/gpu") }},
		{name: "not an extended resource name", mutate: func(s *resourcev1.DeviceClassSpec) { s.ExtendedResourceName = ptr.To("cpu") },
			want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "spec.extendedResourceName"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, create(Deviceclasses, deviceClass(tc.mutate)), tc.want)
		})
	}
}

// The conformance test's update: another expression, still valid.
func TestUpdateDeviceClass(t *testing.T) {
	old := deviceClass(nil)
	next := old.DeepCopy()
	next.Spec.Selectors[0].CEL.Expression = "1 == 0"
	checkErrs(t, update(Deviceclasses, next, old), nil)
}
