package killall

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/orca-project/orca/internal/agent/podroutes"
)

// links is `ip -j -d link show` of a node (trimmed to the fields read).
const links = `[
{"ifindex":1,"ifname":"lo","link_type":"loopback"},
{"ifindex":2,"ifname":"eth0","link_type":"ether"},
{"ifindex":3,"ifname":"orca0","link_type":"ether","linkinfo":{"info_kind":"bridge"}},
{"ifindex":4,"ifname":"orca-svc","link_type":"ether","linkinfo":{"info_kind":"dummy"}},
{"ifindex":5,"ifname":"veth1","master":"orca0","link_type":"ether","linkinfo":{"info_kind":"veth","info_slave_kind":"bridge"}},
{"ifindex":6,"ifname":"veth2","master":"orca0","link_type":"ether","linkinfo":{"info_kind":"veth","info_slave_kind":"bridge"}},
{"ifindex":7,"ifname":"eth1","master":"orca0","link_type":"ether","linkinfo":{"info_slave_kind":"bridge"}},
{"ifindex":8,"ifname":"docker0","link_type":"ether","linkinfo":{"info_kind":"bridge"}},
{"ifindex":9,"ifname":"vethd","master":"docker0","link_type":"ether","linkinfo":{"info_kind":"veth","info_slave_kind":"bridge"}},
{"ifindex":10,"ifname":"orca-nodes","link_type":"ether","linkinfo":{"info_kind":"bridge"}},
{"ifindex":11,"ifname":"v-worker-1","master":"orca-nodes","link_type":"ether","linkinfo":{"info_kind":"veth","info_slave_kind":"bridge"}}
]`

func TestLinksToDelete(t *testing.T) {
	all, err := ParseLinks([]byte(links))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name             string
		bridges, devices []string
		want             []string
	}{
		{
			name:    "the bridges with their veths first, then the service device; a physical port and docker's stay",
			bridges: []string{"orca0", NodesBridge}, devices: []string{podroutes.ServiceDevice},
			want: []string{"veth1", "veth2", "v-worker-1", "orca0", "orca-nodes", "orca-svc"},
		},
		{
			name:    "a bridge of another name",
			bridges: []string{"orcae2e0", NodesBridge}, devices: []string{podroutes.ServiceDevice},
			want: []string{"v-worker-1", "orca-nodes", "orca-svc"},
		},
		{
			name:    "nothing present",
			bridges: []string{"x0"}, devices: []string{"y0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LinksToDelete(all, tc.bridges, tc.devices); !slices.Equal(got, tc.want) {
				t.Errorf("LinksToDelete = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := ParseLinks([]byte("not json")); err == nil {
		t.Error("ParseLinks accepted garbage")
	}
}

func TestTablesToDelete(t *testing.T) {
	present := ParseTables("table ip nat\ntable ip6 nat\ntable ip orca-proxy\ntable inet orca-podnet\ntable ip orca-podnet\n")
	if want := []string{"ip nat", "ip6 nat", "ip orca-proxy", "inet orca-podnet", "ip orca-podnet"}; !slices.Equal(present, want) {
		t.Fatalf("ParseTables = %q", present)
	}
	if got, want := TablesToDelete(present), []string{"orca-podnet", "orca-proxy"}; !slices.Equal(got, want) {
		t.Errorf("TablesToDelete = %q, want %q", got, want)
	}
	if got := TablesToDelete([]string{"ip nat"}); len(got) != 0 {
		t.Errorf("TablesToDelete = %q", got)
	}
}

// The masquerading table podroutes installs is the one removed.
func TestPodnetTableName(t *testing.T) {
	if rules := podroutes.MasqueradeRules("10.42.0.0/16"); !strings.Contains(rules, "table ip "+podnetTable+" {") {
		t.Errorf("podroutes' table is not %q:\n%s", podnetTable, rules)
	}
}

// fakeHost answers the commands the network step runs from canned output
// and records them.
type fakeHost struct {
	out  map[string]string
	fail map[string]error
	ran  []string
}

func (f *fakeHost) run(_ context.Context, name string, args ...string) (string, error) {
	cmd := name + " " + strings.Join(args, " ")
	f.ran = append(f.ran, cmd)
	if err, ok := f.fail[cmd]; ok {
		return "", err
	}
	return f.out[cmd], nil
}

func TestNetworkRemove(t *testing.T) {
	for _, tc := range []struct {
		name    string
		host    fakeHost
		want    Report
		ran     []string
		wantErr bool
	}{
		{
			name: "routes, links and tables",
			host: fakeHost{out: map[string]string{
				"ip -4 route show proto 199": "unreachable 10.42.0.0/16\n10.42.1.0/24 via 172.30.0.2 dev orca-nodes\n10.43.0.0/16 dev orca-svc scope link\n",
				"ip -j -d link show":         links,
				"nft list tables":            "table ip nat\ntable ip orca-podnet\ntable ip orca-proxy\n",
			}},
			want: Report{Routes: 3, Links: 6, Tables: 2},
			ran: []string{
				"ip -4 route show proto 199", "ip -4 route flush proto 199",
				"ip -j -d link show",
				"ip link delete veth1", "ip link delete veth2", "ip link delete v-worker-1",
				"ip link delete orca0", "ip link delete orca-nodes", "ip link delete orca-svc",
				"nft list tables", "nft delete table ip orca-podnet", "nft delete table ip orca-proxy",
			},
		},
		{
			name: "a veth that went by itself meanwhile is no error",
			host: fakeHost{
				out: map[string]string{"ip -j -d link show": `[{"ifname":"orca0"},{"ifname":"veth1","master":"orca0","linkinfo":{"info_kind":"veth"}}]`},
				fail: map[string]error{
					"ip link delete veth1": fmt.Errorf("Cannot find device"),
					"ip link show veth1":   fmt.Errorf("does not exist"),
				},
			},
			want: Report{Links: 1},
			ran: []string{
				"ip -4 route show proto 199", "ip -j -d link show",
				"ip link delete veth1", "ip link show veth1", "ip link delete orca0",
				"nft list tables",
			},
		},
		{
			name: "a link that cannot be deleted is an error",
			host: fakeHost{
				out:  map[string]string{"ip -j -d link show": `[{"ifname":"orca0"}]`},
				fail: map[string]error{"ip link delete orca0": fmt.Errorf("busy")},
			},
			ran: []string{
				"ip -4 route show proto 199", "ip -j -d link show",
				"ip link delete orca0", "ip link show orca0",
				"nft list tables",
			},
			wantErr: true,
		},
		{
			name: "a clean machine: nothing deleted",
			host: fakeHost{out: map[string]string{"ip -j -d link show": `[{"ifname":"lo"}]`}},
			ran:  []string{"ip -4 route show proto 199", "ip -j -d link show", "nft list tables"},
		},
		{
			name: "no nft on the machine is no error; a failing step leaves the others done",
			host: fakeHost{
				out: map[string]string{
					"ip -4 route show proto 199": "unreachable 10.42.0.0/16\n",
					"ip -j -d link show":         `[{"ifname":"orca-svc"},{"ifname":"orca0"}]`,
				},
				fail: map[string]error{
					"ip -4 route flush proto 199": fmt.Errorf("boom"),
					"nft list tables":             fmt.Errorf("killall: nft: %w", exec.ErrNotFound),
				},
			},
			want: Report{Links: 2},
			ran: []string{
				"ip -4 route show proto 199", "ip -4 route flush proto 199",
				"ip -j -d link show", "ip link delete orca0", "ip link delete orca-svc",
				"nft list tables",
			},
			wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Report
			err := network{run: tc.host.run, bridge: DefaultBridge}.remove(context.Background(), &r)
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
			if r != tc.want {
				t.Errorf("report = %+v, want %+v", r, tc.want)
			}
			if !slices.Equal(tc.host.ran, tc.ran) {
				t.Errorf("ran\n%q\nwant\n%q", tc.host.ran, tc.ran)
			}
		})
	}
}
