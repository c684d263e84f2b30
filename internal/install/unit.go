package install

import (
	"fmt"
	"strings"
)

// Roles are what a machine can be installed as.
var Roles = []string{"server", "agent"}

// UnitName is the systemd unit of a role, as k3s names its own: the
// server is orca.service, an agent orca-agent.service.
func UnitName(role string) string {
	if role == "server" {
		return "orca.service"
	}
	return "orca-" + role + ".service"
}

// Unit is the systemd unit that runs `exe role flags...`. It follows
// k3s's unit: the service is restarted whatever ends it, its limits are
// lifted (accounting is per container, in the cgroups), and stopping it
// ends orca alone, so that containerd and the pods keep running through a
// restart or an upgrade of the binary, as they do through a crash.
func Unit(role, exe string, flags []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `[Unit]
Description=Orca %s: a Kubernetes-compatible orchestrator in one binary
Documentation=https://github.com/orca-project/orca
Wants=network-online.target
After=network-online.target

[Install]
WantedBy=multi-user.target

[Service]
Type=exec
EnvironmentFile=-/etc/default/%%N
EnvironmentFile=-/etc/sysconfig/%%N
# Stopping the unit ends orca only: containerd, the shims and the pods
# keep running until orca starts again (orca killall stops them all).
KillMode=process
# containerd and runc make the pods' cgroups below the unit's own.
Delegate=yes
User=root
# Limits would cost accounting in the kernel for nothing: containers are
# limited by their cgroups.
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
TimeoutStartSec=0
Restart=always
RestartSec=5s
# The service proxy needs bridged traffic to pass nftables, and containerd
# overlayfs; a kernel with them built in needs neither.
ExecStartPre=-/sbin/modprobe br_netfilter
ExecStartPre=-/sbin/modprobe overlay
ExecStart=%s %s`, role, ExecArg(exe), ExecArg(role))
	for _, f := range flags {
		fmt.Fprintf(&b, " \\\n    %s", ExecArg(f))
	}
	b.WriteString("\n")
	return b.String()
}

// ExecArg is one argument of an Exec line as systemd reads it back:
// specifiers (%) and variables ($) doubled, and quoted where spaces,
// quotes, backslashes or a lone ";" (which separates commands) would split
// or change it.
func ExecArg(s string) string {
	s = strings.NewReplacer("%", "%%", "$", "$$").Replace(s)
	if s != "" && s != ";" && !strings.ContainsAny(s, " \t\n\"'\\") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// DataDir is the data directory flags give a server or agent: --data-dir,
// else the default of a service running as root.
func DataDir(flags []string) string {
	dir := DefaultDataDir
	for i, f := range flags {
		switch {
		case f == "--":
			return dir
		case f == "--data-dir" && i+1 < len(flags):
			dir = flags[i+1]
		case strings.HasPrefix(f, "--data-dir="):
			dir = strings.TrimPrefix(f, "--data-dir=")
		}
	}
	return dir
}

// DefaultDataDir is a root service's data directory without --data-dir.
const DefaultDataDir = "/var/lib/orca"
