package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateControllerRevision(t *testing.T) {
	tests := []struct {
		name string
		rev  appsv1.ControllerRevision
		want []wantErr
	}{{
		name: "valid",
		rev:  appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(`{"spec":{}}`)}, Revision: 3},
	}, {
		name: "missing data",
		rev:  appsv1.ControllerRevision{Revision: 1},
		want: []wantErr{{Type: field.ErrorTypeRequired, Field: "data", Detail: "data is mandatory"}},
	}, {
		name: "negative revision",
		rev:  appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(`{}`)}, Revision: -1},
		want: []wantErr{{Type: field.ErrorTypeInvalid, Field: "revision", Detail: "must be greater than or equal to 0"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, validateControllerRevision(&tc.rev), tc.want)
		})
	}
}

func TestValidateControllerRevisionUpdate(t *testing.T) {
	old := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(`{"spec":{"a":1}}`)}, Revision: 1}
	tests := []struct {
		name string
		data string
		rev  int64
		want []wantErr
	}{
		{"unchanged", `{"spec":{"a":1}}`, 1, nil},
		{"reformatted", "{ \"spec\": { \"a\": 1 } }", 1, nil},
		{"revision may move", `{"spec":{"a":1}}`, 5, nil},
		{"data changed", `{"spec":{"a":2}}`, 1, []wantErr{{Type: field.ErrorTypeInvalid, Field: "data", Detail: "field is immutable"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(tc.data)}, Revision: tc.rev}
			checkErrs(t, validateControllerRevisionUpdate(obj, old), tc.want)
		})
	}
}
