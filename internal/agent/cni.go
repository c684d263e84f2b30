package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

func goarch() string { return runtime.GOARCH }

// writeCNIConfig gives containerd the pod network: a bridge with
// host-local addresses from the node's pod range, and portmap for
// hostPort. The bridge plugin's own masquerading is off: it would also
// hide a pod's address from pods on other nodes; podroutes masquerades
// only traffic leaving the cluster CIDR.
func writeCNIConfig(d Dirs, binDir, bridge, podCIDR string) error {
	if _, err := os.Stat(filepath.Join(binDir, "bridge")); err != nil {
		return fmt.Errorf("agent: CNI plugins not found in %s (install Debian's containernetworking-plugins): %w", binDir, err)
	}
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "orca",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": bridge, "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{
					"type": "host-local", "dataDir": d.CNIState,
					"ranges": [][]map[string]string{{{"subnet": podCIDR}}},
					"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(d.CNIConf, "10-orca.conflist")
	if cur, err := os.ReadFile(path); err == nil && string(cur) == string(b) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("agent: write CNI config: %w", err)
	}
	return os.Rename(tmp, path)
}
