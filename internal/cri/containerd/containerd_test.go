package containerd

import (
	"strings"
	"testing"
)

func TestRenderRegistryConfigPath(t *testing.T) {
	base := Config{Dir: "/data/containerd", SandboxImage: "localhost/orca/pause:1", CNIBinDir: "/usr/lib/cni", CNIConfDir: "/data/cni"}
	if out := base.Render(); strings.Contains(out, "config_path") {
		t.Errorf("config_path rendered without a registry directory:\n%s", out)
	}
	withDir := base
	withDir.RegistryConfigDir = "/etc/orca/registries"
	out := withDir.Render()
	want := "  [plugins.\"io.containerd.grpc.v1.cri\".registry]\n    config_path = \"/etc/orca/registries\"\n"
	if !strings.Contains(out, want) {
		t.Errorf("config lacks\n%s\nin\n%s", want, out)
	}
}
