package resource

import (
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

var tableNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(tableNow.Add(-d)) }

func TestAgeTable(t *testing.T) {
	printerstest.CheckColumns(t, ageTable, []printerstest.Column{printerstest.Col("Age", "string", 0)})
	dc := deviceClass(nil)
	dc.CreationTimestamp = ago(3 * time.Minute)
	printerstest.CheckRow(t, ageTable, dc, tableNow, []any{"3m"})
	rct := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: ago(2 * time.Hour)}}
	printerstest.CheckRow(t, ageTable, rct, tableNow, []any{"120m"})
}

func TestResourceClaimTable(t *testing.T) {
	col := printerstest.Col
	printerstest.CheckColumns(t, resourceclaimTable, []printerstest.Column{col("State", "string", 0), col("Age", "string", 0)})
	deleted := ago(0)
	for _, tc := range []struct {
		name   string
		mutate func(*resourcev1.ResourceClaim)
		want   string
	}{
		{"pending", nil, "pending"},
		{"allocated", func(c *resourcev1.ResourceClaim) { c.Status.Allocation = &resourcev1.AllocationResult{} }, "allocated"},
		{"reserved", func(c *resourcev1.ResourceClaim) {
			c.Status.Allocation = &resourcev1.AllocationResult{}
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}}
		}, "allocated,reserved"},
		{"deleted while pending", func(c *resourcev1.ResourceClaim) { c.DeletionTimestamp = &deleted }, "deleted"},
		{"deleted while allocated", func(c *resourcev1.ResourceClaim) {
			c.DeletionTimestamp = &deleted
			c.Status.Allocation = &resourcev1.AllocationResult{}
		}, "deleted,allocated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := claim(nil)
			c.CreationTimestamp = ago(10 * time.Second)
			if tc.mutate != nil {
				tc.mutate(c)
			}
			printerstest.CheckRow(t, resourceclaimTable, c, tableNow, []any{tc.want, "10s"})
		})
	}
}

func TestResourceSliceTable(t *testing.T) {
	col := printerstest.Col
	printerstest.CheckColumns(t, resourcesliceTable, []printerstest.Column{
		col("Node", "string", 0), col("Driver", "string", 0), col("Pool", "string", 0), col("Age", "string", 0),
	})
	s := slice(nil)
	s.CreationTimestamp = ago(time.Minute)
	printerstest.CheckRow(t, resourcesliceTable, s, tableNow, []any{"no-such-node", "dra.example.com", "cluster", "60s"})
	s.Spec.NodeName = nil
	printerstest.CheckRow(t, resourcesliceTable, s, tableNow, []any{"", "dra.example.com", "cluster", "60s"})
}

func TestDeviceTaintRuleTable(t *testing.T) {
	col := printerstest.Col
	printerstest.CheckColumns(t, devicetaintruleTable, []printerstest.Column{
		col("Key", "string", 0), col("Value", "string", 0), col("Effect", "string", 0), col("TimeAdded", "string", 0), col("Age", "string", 0),
	})
	r := rule(nil)
	r.CreationTimestamp = ago(5 * time.Minute)
	added := ago(time.Minute)
	r.Spec.Taint.Value, r.Spec.Taint.TimeAdded = "yes", &added
	printerstest.CheckRow(t, devicetaintruleTable, r, tableNow, []any{"testing", "yes", "None", "60s", "5m"})
	r.Spec.Taint.TimeAdded = nil
	printerstest.CheckRow(t, devicetaintruleTable, r, tableNow, []any{"testing", "yes", "None", "", "5m"})
}
