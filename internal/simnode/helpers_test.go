package simnode

import (
	"encoding/json"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// roundTrip is the status as the API server gives it back: JSON, times
// to the second.
func roundTrip(t *testing.T, st *v1.PodStatus) *v1.PodStatus {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out v1.PodStatus
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}
