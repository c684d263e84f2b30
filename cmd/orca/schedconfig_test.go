package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchedulerConfigFlags: a bad configuration file stops `orca server
// --scheduler-config` and `orca scheduler --config` with the error,
// before anything starts.
func TestSchedulerConfigFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	unknownField := write("unknown-field.yaml", header+"profiles:\n- schedulerName: a\n  plugin: {}\n")
	unknownPlugin := write("unknown-plugin.yaml", header+"profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enabled: [{name: Frobnicate}]\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"server, unknown field", []string{"server", "--data-dir", dir, "--scheduler-config", unknownField}, `unknown field "profiles[0].plugin"`},
		{"server, unknown plugin", []string{"server", "--data-dir", dir, "--scheduler-config", unknownPlugin}, `creating profile for scheduler name a: plugin "Frobnicate" does not exist`},
		{"server, no such file", []string{"server", "--data-dir", dir, "--scheduler-config", filepath.Join(dir, "missing.yaml")}, "read scheduler configuration"},
		{"scheduler, unknown field", []string{"scheduler", "--kubeconfig", filepath.Join(dir, "kubeconfig"), "--config", unknownField}, `unknown field "profiles[0].plugin"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newServerCommand()
			if tc.args[0] == "scheduler" {
				cmd = newSchedulerCommand()
			}
			cmd.SetArgs(tc.args[1:])
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if _, statErr := os.Stat(filepath.Join(dir, "tls")); statErr == nil {
				t.Error("the server started writing its data directory")
			}
		})
	}
}
