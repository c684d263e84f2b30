package e2e

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// uplink is the interface of the machine's default route.
func uplink(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ip", "-4", "route", "show", "default").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "dev" {
			return f[i+1]
		}
	}
	t.Skip("no default route: nothing could leave the machine anyway")
	return ""
}

// Traffic for the cluster's pod and service ranges that no pod, node or
// proxy rule claims is dropped on the node: an nftables counter on the
// machine's uplink for those ranges stays at zero while pods and the host
// try to reach addresses nobody owns.
func TestClusterRangesNeverLeaveTheMachine(t *testing.T) {
	needCluster(t)
	dev := uplink(t)
	const table = "orca-e2e-leak"
	rules := fmt.Sprintf(`table ip %[1]s {
	chain out {
		type filter hook postrouting priority 0; policy accept;
		oifname %[2]q ip daddr { 10.42.0.0/16, 10.43.0.0/16 } counter
	}
}
`, table, dev)
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("nft", "delete", "table", "ip", table).Run() })

	ns := namespace(t)
	createPod(t, simplePod(ns, "prober", "exec sleep 3600"))
	waitPod(t, ns, "prober", time.Minute, "Running", running)
	// A pod address of a node that does not exist, and a service address
	// nobody allocated, from a pod and from the host.
	for _, addr := range []string{"10.42.99.7", "10.43.250.250"} {
		runKubectl(t, nil, "", "exec", "prober", "-n", ns, "--", "timeout", "2", "nc", addr, "80")
		_ = exec.Command("timeout", "2", "bash", "-c", "echo > /dev/tcp/"+addr+"/80").Run()
	}
	out, err := exec.Command("nft", "list", "table", "ip", table).Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`counter packets (\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no counter in:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n != 0 {
		t.Errorf("%d packets for the cluster's ranges left through %s", n, dev)
	}
}
