package csi

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
)

func TestWithDriver(t *testing.T) {
	drivers := []storagev1.CSINodeDriver{{Name: "b.csi", NodeID: "old"}, {Name: "z.csi", NodeID: "z"}}
	got := withDriver(drivers, "b.csi", "new", map[string]string{"zone": "a", "rack": "1"}, 8)
	if len(got) != 2 || got[0].Name != "b.csi" || got[0].NodeID != "new" || got[1].Name != "z.csi" {
		t.Fatalf("drivers %+v", got)
	}
	if keys := got[0].TopologyKeys; len(keys) != 2 || keys[0] != "rack" || keys[1] != "zone" {
		t.Errorf("topology keys %v, want sorted", keys)
	}
	if got[0].Allocatable == nil || *got[0].Allocatable.Count != 8 {
		t.Errorf("allocatable %+v", got[0].Allocatable)
	}
	if drivers[0].NodeID != "old" {
		t.Error("the input was changed")
	}
	got = withDriver(nil, "a.csi", "n", nil, 0)
	if len(got) != 1 || got[0].Allocatable != nil || got[0].TopologyKeys != nil {
		t.Errorf("a driver without limits or topology: %+v", got)
	}
}
