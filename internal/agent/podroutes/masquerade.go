package podroutes

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// masqueradeTable is the nftables table that hides pod addresses behind the
// node's when pods talk to anything outside the cluster CIDR. Traffic
// between pods (on any node) keeps its source address, which the bridge
// plugin's own masquerading would not do.
const masqueradeTable = "orca-podnet"

// MasqueradeRules is the table's full definition for clusterCIDR.
func MasqueradeRules(clusterCIDR string) string {
	return fmt.Sprintf(`table ip %[1]s
delete table ip %[1]s
table ip %[1]s {
	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		ip saddr %[2]s ip daddr != %[2]s masquerade
	}
}
`, masqueradeTable, clusterCIDR)
}

// EnsureMasquerade installs (or replaces, atomically) the table.
func EnsureMasquerade(ctx context.Context, clusterCIDR string) error {
	cmd := exec.CommandContext(ctx, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(MasqueradeRules(clusterCIDR))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("nft: install %s: %v: %s", masqueradeTable, err, strings.TrimSpace(errb.String()))
	}
	return nil
}
