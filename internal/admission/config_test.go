package admission

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfiguration(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "psa.yaml"), []byte("from: file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file string
		want       map[string]string // plugin → configuration; "" for none
		err        string
	}{
		{
			name: "inline, as JSON",
			file: `
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
- name: PodSecurity
  path: ignored.yaml
`,
			want: map[string]string{
				"PodSecurity": `{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration"}`,
				"LimitRanger": "",
			},
		},
		{
			name: "path relative to the file",
			file: `
apiVersion: apiserver.config.k8s.io/v1alpha1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  path: psa.yaml
- name: EventRateLimit
`,
			want: map[string]string{"PodSecurity": "from: file\n", "EventRateLimit": ""},
		},
		{name: "wrong kind", file: "apiVersion: v1\nkind: ConfigMap\n", err: `not an AdmissionConfiguration: apiVersion "v1", kind "ConfigMap"`},
		{name: "unknown field", file: "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugin: []\n", err: `unknown field "plugin"`},
		{name: "unnamed plugin", file: "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{path: x}]\n", err: "plugins[0]: name is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfiguration([]byte(tc.file), dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for plugin, want := range tc.want {
				got, err := c.For(plugin)
				if err != nil || string(got) != want {
					t.Errorf("%s: %q, %v; want %q", plugin, got, err, want)
				}
			}
		})
	}
}

func TestNoConfiguration(t *testing.T) {
	c, err := LoadConfiguration("")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.For("PodSecurity"); got != nil || err != nil {
		t.Errorf("For: %q, %v", got, err)
	}
	if _, err := LoadConfiguration(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "unable to read admission control configuration") {
		t.Errorf("missing file: %v", err)
	}
}
