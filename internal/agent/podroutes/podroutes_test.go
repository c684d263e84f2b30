package podroutes

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/nodekind"
)

func node(name, cidr, ip string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{PodCIDR: cidr}}
	if ip != "" {
		n.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeHostName, Address: name}, {Type: v1.NodeInternalIP, Address: ip}}
	}
	return n
}

func TestDesired(t *testing.T) {
	nodes := []*v1.Node{
		node("a", "10.42.0.0/24", "172.30.0.2"),
		node("b", "10.42.1.0/24", "172.30.0.3"),
		node("c", "", "172.30.0.4"),          // no range yet
		node("d", "10.42.3.0/24", ""),        // no address yet
		node("e", "10.42.4.0/24", "fd00::5"), // IPv6 only: not routable here
		node("sim-0", "10.42.5.0/24", "100.64.0.1"),
	}
	// A simulated node's address leads nowhere: no route to its pods.
	nodes[len(nodes)-1].Labels = map[string]string{nodekind.SimulatedLabel: "true"}
	got := Desired("a", "orca0", nodes, "10.42.0.0/16", "10.43.0.0/16")
	want := []Route{
		{Dst: "10.42.0.0/16", Type: "unreachable"},
		{Dst: "10.42.0.0/24", Dev: "orca0"}, // the node's own pods
		{Dst: "10.42.1.0/24", Via: "172.30.0.3"},
		{Dst: "10.43.0.0/16", Dev: ServiceDevice},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Desired = %+v, want %+v", got, want)
	}
}

func TestParseAndDiff(t *testing.T) {
	out := "unreachable 10.42.0.0/16 proto 199 \n10.42.1.0/24 via 172.30.0.3 dev eth0 proto 199 \n10.42.7.0/24 via 172.30.0.9 dev eth0 proto 199 \n10.43.0.0/16 dev orca-svc proto 199 scope link \n"
	have := parse(out)
	want := []Route{
		{Dst: "10.42.0.0/16", Type: "unreachable"},
		{Dst: "10.42.1.0/24", Via: "172.30.0.4"}, // node b moved
		{Dst: "10.42.2.0/24", Via: "172.30.0.5"}, // new node
		{Dst: "10.43.0.0/16", Dev: ServiceDevice},
	}
	set, del := Diff(want, have)
	if !reflect.DeepEqual(set, want[1:3]) {
		t.Errorf("set %+v", set)
	}
	if !reflect.DeepEqual(del, []string{"10.42.7.0/24"}) {
		t.Errorf("del %v", del)
	}
	if got := (Route{Dst: "10.42.0.0/16", Type: "unreachable"}).args(); !reflect.DeepEqual(got, []string{"unreachable", "10.42.0.0/16", "proto", "199"}) {
		t.Errorf("args %v", got)
	}
}

// A range another cluster routed elsewhere is taken back for the node's own
// bridge; a route through a device that is not there yet is left out, so
// that a stale route to the range goes and the kernel's comes with the
// device.
func TestOwnRangeReplacesAStaleRoute(t *testing.T) {
	have := parse("10.42.0.0/24 via 172.30.0.2 dev orca-nodes proto 199 \n")
	want := Desired("vm", "lo", []*v1.Node{node("vm", "10.42.0.0/24", "172.30.0.1")}, "", "")
	set, del := Diff(present(want), have)
	if !reflect.DeepEqual(set, []Route{{Dst: "10.42.0.0/24", Dev: "lo"}}) || len(del) != 0 {
		t.Errorf("with the bridge present: set %+v del %v, want the range moved to it", set, del)
	}
	want = Desired("vm", "no-such-bridge", []*v1.Node{node("vm", "10.42.0.0/24", "172.30.0.1")}, "", "")
	set, del = Diff(present(want), have)
	if len(set) != 0 || !reflect.DeepEqual(del, []string{"10.42.0.0/24"}) {
		t.Errorf("before the bridge exists: set %+v del %v, want the stale route deleted", set, del)
	}
}
