package simnode

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"runtime"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/kubelet/nodestatus"
	"github.com/orca-project/orca/internal/nodekind"
)

// SimulatedLabel marks every simulated Node ("true"); the parts of the
// cluster that dial nodes skip those (package nodekind).
const SimulatedLabel = nodekind.SimulatedLabel

// Region is the region label of every simulated node; zones are a, b, c
// in it, taken in turn.
const Region = "sim-region-1"

// instanceType is a cloud machine size a simulated node takes.
type instanceType struct {
	name   string
	cpus   int
	memory int64
}

// instanceTypes are common general-purpose sizes, taken in turn so that
// the scheduler sees a mixed fleet.
var instanceTypes = []instanceType{
	{"sim.2xlarge", 8, 32 << 30},
	{"sim.4xlarge", 16, 64 << 30},
	{"sim.8xlarge", 32, 128 << 30},
}

// Profile is what one simulated node is: its spec for registration and
// the machine its status describes.
type Profile struct {
	Spec    nodestatus.Spec
	Machine nodestatus.Machine
}

// NodeName is the name of the i-th node of a simulator.
func NodeName(prefix string, i int) string { return fmt.Sprintf("%s%d", prefix, i) }

// NodeProfile is the i-th node of a simulator: its instance type and zone
// follow from i, its InternalIP is the i-th address of 100.64.0.0/10 (the
// shared address space, which no pod or service range uses), and its
// machine identifiers are derived from its name, so that a restarted
// simulator describes the same machine.
func NodeProfile(prefix string, i int, kubeletVersion, runtimeVersion string, extra map[string]string, taints []v1.Taint) Profile {
	name := NodeName(prefix, i)
	it := instanceTypes[i%len(instanceTypes)]
	zone := Region + string(rune('a'+i%3))
	labels := map[string]string{
		v1.LabelHostname:           name,
		v1.LabelOSStable:           runtime.GOOS,
		v1.LabelArchStable:         runtime.GOARCH,
		v1.LabelTopologyZone:       zone,
		v1.LabelTopologyRegion:     Region,
		v1.LabelInstanceTypeStable: it.name,
		SimulatedLabel:             "true",
	}
	for k, v := range extra {
		labels[k] = v
	}
	ip := nodeIP(i)
	sum := sha256.Sum256([]byte(name))
	id := hex.EncodeToString(sum[:16])
	return Profile{
		Spec: nodestatus.Spec{
			Name: name, Labels: labels, Taints: taints,
			Addresses:   []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: ip}, {Type: v1.NodeHostName, Address: name}},
			KubeletPort: 10250, MaxPods: 110,
		},
		Machine: nodestatus.Machine{
			CPUs: it.cpus, MemoryBytes: it.memory, MemoryAvailable: it.memory,
			DiskBytes: 100 << 30, DiskAvailable: 100 << 30, PIDMax: 4194304,
			MachineID: id, SystemUUID: id, BootID: id,
			KernelVersion: "simulated", OSImage: "Orca simulated node",
			RuntimeVersion: runtimeVersion, KubeletVersion: kubeletVersion,
			RuntimeReady: true, NetworkReady: true,
		},
	}
}

// nodeIP is the i-th host address of 100.64.0.0/10.
func nodeIP(i int) string {
	base := netip.MustParseAddr("100.64.0.0").As4()
	n := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	n += uint32(i%(1<<22-2)) + 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String()
}
