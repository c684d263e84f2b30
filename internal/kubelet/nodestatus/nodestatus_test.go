package nodestatus

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var now = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

func healthy() Machine {
	return Machine{
		CPUs: 2, MemoryBytes: 8 << 30, MemoryAvailable: 6 << 30, DiskBytes: 100 << 30, DiskAvailable: 50 << 30,
		PIDMax: 4194304, PIDsInUse: 300, RuntimeReady: true, NetworkReady: true,
	}
}

func TestCapacityAndAllocatable(t *testing.T) {
	spec := Spec{MaxPods: 110, Reserved: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("256Mi")}}
	capacity, alloc := Capacity(healthy(), spec)
	check := func(l v1.ResourceList, name v1.ResourceName, want string) {
		t.Helper()
		q := l[name]
		if q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("%s = %s, want %s", name, q.String(), want)
		}
	}
	check(capacity, v1.ResourceCPU, "2")
	check(capacity, v1.ResourceMemory, "8Gi")
	check(capacity, v1.ResourcePods, "110")
	check(alloc, v1.ResourceCPU, "1900m")
	// 8Gi minus 256Mi reserved minus the 100Mi eviction threshold.
	check(alloc, v1.ResourceMemory, "7836Mi")
	// 10% of the disk is kept for eviction.
	check(alloc, v1.ResourceEphemeralStorage, "92160Mi")
	check(alloc, v1.ResourcePods, "110")
}

func TestConditions(t *testing.T) {
	cond := func(cs []v1.NodeCondition, typ v1.NodeConditionType) v1.NodeCondition {
		for _, c := range cs {
			if c.Type == typ {
				return c
			}
		}
		t.Fatalf("no %s condition", typ)
		return v1.NodeCondition{}
	}
	tests := []struct {
		name   string
		mutate func(*Machine)
		typ    v1.NodeConditionType
		status v1.ConditionStatus
		reason string
	}{
		{"healthy is ready", func(*Machine) {}, v1.NodeReady, v1.ConditionTrue, "KubeletReady"},
		{"runtime down", func(m *Machine) { m.RuntimeReady = false }, v1.NodeReady, v1.ConditionFalse, "KubeletNotReady"},
		{"network not ready", func(m *Machine) { m.NetworkReady = false; m.NetworkMessage = "cni not ready" }, v1.NodeReady, v1.ConditionFalse, "KubeletNotReady"},
		{"memory fine", func(*Machine) {}, v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory"},
		{"memory pressure", func(m *Machine) { m.Pressure = map[v1.NodeConditionType]bool{v1.NodeMemoryPressure: true} }, v1.NodeMemoryPressure, v1.ConditionTrue, "KubeletHasInsufficientMemory"},
		{"disk pressure", func(m *Machine) { m.Pressure = map[v1.NodeConditionType]bool{v1.NodeDiskPressure: true} }, v1.NodeDiskPressure, v1.ConditionTrue, "KubeletHasDiskPressure"},
		{"disk pressure is not memory pressure", func(m *Machine) { m.Pressure = map[v1.NodeConditionType]bool{v1.NodeDiskPressure: true} }, v1.NodeMemoryPressure, v1.ConditionFalse, "KubeletHasSufficientMemory"},
		{"pid pressure", func(m *Machine) { m.Pressure = map[v1.NodeConditionType]bool{v1.NodePIDPressure: true} }, v1.NodePIDPressure, v1.ConditionTrue, "KubeletHasInsufficientPID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := healthy()
			tt.mutate(&m)
			c := cond(Conditions(m, nil, now), tt.typ)
			if c.Status != tt.status || c.Reason != tt.reason {
				t.Errorf("%s: %s %s, want %s %s", tt.typ, c.Status, c.Reason, tt.status, tt.reason)
			}
		})
	}
	m := healthy()
	m.NetworkReady, m.NetworkMessage = false, "NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized"
	if c := cond(Conditions(m, nil, now), v1.NodeReady); c.Message != "container runtime network not ready: "+m.NetworkMessage {
		t.Errorf("not-ready message %q", c.Message)
	}
}

func TestHeartbeatAloneIsNotSignificant(t *testing.T) {
	earlier := metav1.NewTime(now.Add(-time.Hour))
	old := Status(healthy(), Spec{Name: "n", MaxPods: 110}, v1.NodeStatus{}, now.Add(-time.Hour))
	for i := range old.Conditions {
		old.Conditions[i].LastTransitionTime = earlier
	}
	cur := Status(healthy(), Spec{Name: "n", MaxPods: 110}, old, now)
	for _, c := range cur.Conditions {
		if !c.LastTransitionTime.Equal(&earlier) {
			t.Errorf("%s transition time moved to %v", c.Type, c.LastTransitionTime)
		}
		if !c.LastHeartbeatTime.Time.Equal(now) {
			t.Errorf("%s heartbeat %v, want now", c.Type, c.LastHeartbeatTime)
		}
	}
	if Significant(cur, old) {
		t.Error("a status that differs only in heartbeats counts as a change")
	}
	m := healthy()
	m.RuntimeReady = false
	if !Significant(Status(m, Spec{Name: "n", MaxPods: 110}, old, now), old) {
		t.Error("a Ready flip is not a change")
	}
}
