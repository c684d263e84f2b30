package killall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/orca-project/orca/internal/agent/podroutes"
	"github.com/orca-project/orca/internal/netpol"
	"github.com/orca-project/orca/internal/proxy"
)

// NodesBridge is the bridge hack/node.sh puts extra nodes of one machine
// on.
const NodesBridge = "orca-nodes"

// podnetTable is podroutes' masquerading table (family ip); a test keeps
// the two names equal.
const podnetTable = "orca-podnet"

// Tables are the nftables tables (family ip) a node keeps.
var Tables = []string{podnetTable, proxy.Table, netpol.Table}

// Link is a network interface as `ip -d link` shows it.
type Link struct {
	Name   string `json:"ifname"`
	Master string `json:"master"`
	Info   struct {
		Kind string `json:"info_kind"`
	} `json:"linkinfo"`
}

// Kind is the link's type (veth, bridge, dummy), empty for a physical one.
func (l Link) Kind() string { return l.Info.Kind }

// ParseLinks reads `ip -j -d link show`.
func ParseLinks(out []byte) ([]Link, error) {
	var links []Link
	if err := json.Unmarshal(out, &links); err != nil {
		return nil, fmt.Errorf("parse ip -j link output: %w", err)
	}
	return links, nil
}

// LinksToDelete is what goes of a node's links: the veths plugged into the
// given bridges (their peers, a pod's or an extra node's eth0, go with
// them), then the bridges, then the other devices, each only if present
// and the veths only if they are veths, so that a physical interface
// someone put on the bridge stays.
func LinksToDelete(links []Link, bridges, devices []string) []string {
	present := map[string]bool{}
	for _, l := range links {
		present[l.Name] = true
	}
	var out []string
	for _, l := range links {
		if l.Kind() == "veth" && slices.Contains(bridges, l.Master) {
			out = append(out, l.Name)
		}
	}
	for _, n := range append(slices.Clone(bridges), devices...) {
		if present[n] && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// ParseTables reads `nft list tables`: "table FAMILY NAME" lines, returned
// as "FAMILY NAME".
func ParseTables(out string) []string {
	var tables []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "table" {
			tables = append(tables, f[1]+" "+f[2])
		}
	}
	return tables
}

// TablesToDelete is the node's tables among those present.
func TablesToDelete(present []string) []string {
	var out []string
	for _, t := range Tables {
		if slices.Contains(present, "ip "+t) {
			out = append(out, t)
		}
	}
	return out
}

// countRoutes counts the routes in `ip route show` output.
func countRoutes(out string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}

// runner runs a command and returns its standard output; the error names
// the command and carries its standard error.
type runner func(ctx context.Context, name string, args ...string) (string, error)

// network is what a node left in the current network namespace.
type network struct {
	run    runner
	bridge string
}

// remove deletes Orca's routes, links and tables, and counts them into r.
// Every step runs whatever the others did.
func (n network) remove(ctx context.Context, r *Report) error {
	var errs []error
	// Routes first: those through the bridge and orca-svc would go with
	// the links, uncounted.
	if out, err := n.run(ctx, "ip", "-4", "route", "show", "proto", podroutes.Proto); err != nil {
		errs = append(errs, err)
	} else if c := countRoutes(out); c > 0 {
		if _, err := n.run(ctx, "ip", "-4", "route", "flush", "proto", podroutes.Proto); err != nil {
			errs = append(errs, err)
		} else {
			r.Routes += c
		}
	}
	if out, err := n.run(ctx, "ip", "-j", "-d", "link", "show"); err != nil {
		errs = append(errs, err)
	} else if links, err := ParseLinks([]byte(out)); err != nil {
		errs = append(errs, err)
	} else {
		for _, name := range LinksToDelete(links, []string{n.bridge, NodesBridge}, []string{podroutes.ServiceDevice}) {
			if _, err := n.run(ctx, "ip", "link", "delete", name); err != nil {
				// A pod's veth goes by itself once the kernel frees the
				// namespace of its other end, which takes a moment.
				if _, gone := n.run(ctx, "ip", "link", "show", name); gone == nil {
					errs = append(errs, err)
				}
				continue
			}
			r.Links++
		}
	}
	// Without nft no node made tables here: the proxy and podroutes both
	// program nftables through it.
	if out, err := n.run(ctx, "nft", "list", "tables"); err != nil && !errors.Is(err, exec.ErrNotFound) {
		errs = append(errs, err)
	} else if err == nil {
		for _, t := range TablesToDelete(ParseTables(out)) {
			if _, err := n.run(ctx, "nft", "delete", "table", "ip", t); err != nil {
				errs = append(errs, err)
				continue
			}
			r.Tables++
		}
	}
	return errors.Join(errs...)
}
