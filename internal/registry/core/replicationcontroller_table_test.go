package core

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestReplicationControllerTable(t *testing.T) {
	checkTableColumns(t, replicationcontrollerTable, []tableCol{
		{"Desired", "integer", 0}, {"Current", "integer", 0}, {"Ready", "integer", 0}, {"Age", "string", 0},
		{"Containers", "string", 1}, {"Images", "string", 1}, {"Selector", "string", 1},
	})
	three := int32(3)
	rc := &corev1.ReplicationController{
		Spec: corev1.ReplicationControllerSpec{
			Replicas: &three,
			Selector: map[string]string{"app": "web"},
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{}, Spec: corev1.PodSpec{Containers: specContainers("web", "log")}},
		},
		Status: corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1},
	}
	want := []any{int64(3), int64(2), int64(1), "<unknown>", "web,log", "web:1,log:1", "app=web"}
	if got := tableRow(t, replicationcontrollerTable, rc); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v", got)
	}
	want = []any{int64(1), int64(0), int64(0), "<unknown>", "", "", "<none>"}
	if got := tableRow(t, replicationcontrollerTable, &corev1.ReplicationController{}); !reflect.DeepEqual(got, want) {
		t.Errorf("empty: got %#v", got)
	}
	if got := replicationcontrollerFields(rc); !reflect.DeepEqual(got, fields.Set{"status.replicas": "2"}) {
		t.Errorf("fields %v", got)
	}
}
