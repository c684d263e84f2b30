package simnode

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestNodeProfile(t *testing.T) {
	cases := []struct {
		i                   int
		name, zone, typ, ip string
		cpus                int
	}{
		{0, "sim-0", "sim-region-1a", "sim.2xlarge", "100.64.0.1", 8},
		{1, "sim-1", "sim-region-1b", "sim.4xlarge", "100.64.0.2", 16},
		{5, "sim-5", "sim-region-1c", "sim.8xlarge", "100.64.0.6", 32},
		{300, "sim-300", "sim-region-1a", "sim.2xlarge", "100.64.1.45", 8},
	}
	for _, tc := range cases {
		p := NodeProfile("sim-", tc.i, "v1.37.2+orca", RuntimeVersion(), map[string]string{"extra": "x"}, nil)
		l := p.Spec.Labels
		if p.Spec.Name != tc.name || l[v1.LabelHostname] != tc.name || l[v1.LabelTopologyZone] != tc.zone ||
			l[v1.LabelTopologyRegion] != Region || l[v1.LabelInstanceTypeStable] != tc.typ || l[SimulatedLabel] != "true" || l["extra"] != "x" {
			t.Errorf("node %d: name %s labels %v", tc.i, p.Spec.Name, l)
		}
		if p.Spec.Addresses[0].Address != tc.ip || p.Machine.CPUs != tc.cpus || !p.Machine.RuntimeReady {
			t.Errorf("node %d: address %s cpus %d", tc.i, p.Spec.Addresses[0].Address, p.Machine.CPUs)
		}
		if p.Machine.RuntimeVersion[:len("simulated://orca-")] != "simulated://orca-" {
			t.Errorf("runtime %s", p.Machine.RuntimeVersion)
		}
	}
}
