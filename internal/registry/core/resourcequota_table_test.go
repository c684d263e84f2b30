package core

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestResourceQuotaTable(t *testing.T) {
	checkTableColumns(t, resourcequotaTable, []tableCol{{"Request", "string", 0}, {"Limit", "string", 0}, {"Age", "string", 0}})
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(14 * 24 * time.Hour)},
		Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{
				"requests.cpu": resource.MustParse("4"), "requests.memory": resource.MustParse("4Gi"),
				"limits.cpu": resource.MustParse("8"), "pods": resource.MustParse("10"), "limits.memory": resource.MustParse("8Gi"),
			},
			Used: corev1.ResourceList{"requests.cpu": resource.MustParse("100m"), "limits.cpu": resource.MustParse("1")},
		},
	}
	want := []any{"pods: 0/10, requests.cpu: 100m/4, requests.memory: 0/4Gi", "limits.cpu: 1/8, limits.memory: 0/8Gi", "14d"}
	if got := tableRow(t, resourcequotaTable, q); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	if got := tableRow(t, resourcequotaTable, &corev1.ResourceQuota{}); !reflect.DeepEqual(got, []any{"", "", "<unknown>"}) {
		t.Errorf("empty: got %#v", got)
	}
}

func TestLimitRangeTable(t *testing.T) {
	if len(limitrangeTable.Columns) != 1 || limitrangeTable.Columns[0].Name != "Created At" || limitrangeTable.Columns[0].Type != "date" {
		t.Fatalf("columns %+v", limitrangeTable.Columns)
	}
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC))}}
	if got := tableRow(t, limitrangeTable, lr); !reflect.DeepEqual(got, []any{"2025-06-07T08:09:10Z"}) {
		t.Errorf("got %#v", got)
	}
}
