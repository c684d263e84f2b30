package install

import (
	"strings"
	"testing"
)

func TestUnit(t *testing.T) {
	for _, tc := range []struct {
		name, role, exe string
		flags           []string
		execStart       string
	}{
		{
			name: "server without flags", role: "server", exe: "/usr/local/bin/orca",
			execStart: "ExecStart=/usr/local/bin/orca server\n",
		},
		{
			name: "agent with flags, one per line", role: "agent", exe: "/usr/local/bin/orca",
			flags: []string{"--server", "https://10.0.0.1:6443", "--token-file", "/etc/orca/token"},
			execStart: "ExecStart=/usr/local/bin/orca agent \\\n" +
				"    --server \\\n    https://10.0.0.1:6443 \\\n" +
				"    --token-file \\\n    /etc/orca/token\n",
		},
		{
			name: "arguments systemd would split or expand are quoted", role: "server", exe: "/opt/my bin/orca",
			flags: []string{"--eviction-hard", "nodefs.available<1Gi,memory.available<5%", "--node-label", "team=a b"},
			execStart: "ExecStart=\"/opt/my bin/orca\" server \\\n" +
				"    --eviction-hard \\\n    nodefs.available<1Gi,memory.available<5%% \\\n" +
				"    --node-label \\\n    \"team=a b\"\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := Unit(tc.role, tc.exe, tc.flags)
			if !strings.HasSuffix(u, tc.execStart) {
				t.Errorf("unit ends\n%s\nwant\n%s", u[strings.Index(u, "ExecStart="):], tc.execStart)
			}
			// What k3s's unit has, and containers need to survive a
			// restart of the unit.
			for _, line := range []string{
				"[Unit]\n", "[Install]\nWantedBy=multi-user.target\n", "[Service]\n",
				"\nKillMode=process\n", "\nDelegate=yes\n", "\nRestart=always\n", "\nRestartSec=5s\n",
				"\nLimitNOFILE=1048576\n", "\nLimitNPROC=infinity\n", "\nLimitCORE=infinity\n", "\nTasksMax=infinity\n",
				"\nTimeoutStartSec=0\n", "\nAfter=network-online.target\n", "\nWants=network-online.target\n",
				"\nEnvironmentFile=-/etc/default/%N\n", "\nType=exec\n",
			} {
				if !strings.Contains(u, line) {
					t.Errorf("unit lacks %q", strings.TrimSpace(line))
				}
			}
		})
	}
}

func TestExecArg(t *testing.T) {
	for in, want := range map[string]string{
		"--node-ip":           "--node-ip",
		"10.0.0.1":            "10.0.0.1",
		"":                    `""`,
		"a b":                 `"a b"`,
		`say "hi"`:            `"say \"hi\""`,
		`C:\x`:                `"C:\\x"`,
		"it's":                `"it's"`,
		"50%":                 "50%%",
		"$HOME/x":             "$$HOME/x",
		";":                   `";"`,
		"key=value:NoExecute": "key=value:NoExecute",
	} {
		if got := ExecArg(in); got != want {
			t.Errorf("ExecArg(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestDataDir(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, DefaultDataDir},
		{[]string{"--node-ip", "10.0.0.1"}, DefaultDataDir},
		{[]string{"--data-dir", "/srv/orca"}, "/srv/orca"},
		{[]string{"--data-dir=/srv/orca", "--node-ip", "x"}, "/srv/orca"},
		{[]string{"--data-dir", "/a", "--data-dir", "/b"}, "/b"},
		{[]string{"--data-dir"}, DefaultDataDir},
	} {
		if got := DataDir(tc.flags); got != tc.want {
			t.Errorf("DataDir(%q) = %q, want %q", tc.flags, got, tc.want)
		}
	}
}

func TestUnitName(t *testing.T) {
	if UnitName("server") != "orca.service" || UnitName("agent") != "orca-agent.service" {
		t.Errorf("unit names %s %s", UnitName("server"), UnitName("agent"))
	}
}
