package server

import (
	"slices"
	"testing"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/builtin"
	"github.com/orca-project/orca/internal/registry/metrics"
)

func TestServedResourcesWithoutMetrics(t *testing.T) {
	all := builtin.Resources()
	for _, tc := range []struct {
		name    string
		disable bool
		served  bool
	}{
		{"served by default", false, true},
		{"--disable-metrics", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := servedResources(all, Options{DisableMetrics: tc.disable})
			for _, r := range []*registry.Resource{metrics.NodeMetrics, metrics.PodMetrics} {
				if has := slices.Contains(got, r); has != tc.served {
					t.Errorf("%s.%s served = %v, want %v", r.Name, r.Group, has, tc.served)
				}
			}
			if want := len(all) - map[bool]int{true: 2, false: 0}[tc.disable]; len(got) != want {
				t.Errorf("%d resources served, want %d", len(got), want)
			}
		})
	}
}
