package core

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func TestNamespaceTable(t *testing.T) {
	checkTableColumns(t, namespaceTable, []tableCol{{"Status", "string", 0}, {"Age", "string", 0}})
	ns := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(10 * 24 * time.Hour)},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
	}
	if got := tableRow(t, namespaceTable, ns); !reflect.DeepEqual(got, []any{"Terminating", "10d"}) {
		t.Errorf("got %#v", got)
	}
	if got := namespaceFields(ns); !reflect.DeepEqual(got, fields.Set{"status.phase": "Terminating"}) {
		t.Errorf("fields %v", got)
	}
}
