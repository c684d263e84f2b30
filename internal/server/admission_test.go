package server

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoadAdmissionConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name, file, err string
	}{
		{name: "no file"},
		{name: "no PodSecurity entry", file: "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{name: LimitRanger}]\n"},
		{
			name: "valid",
			file: `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: baseline}
    exemptions: {namespaces: [kube-system]}
`,
		},
		{
			name: "invalid level",
			file: `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: strict}
`,
			err: `PodSecurity invalid: defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted`,
		},
		{
			name: "missing configuration file",
			file: "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: [{name: PodSecurity, path: none.yaml}]\n",
			err:  "PodSecurity configuration: open " + filepath.Join(dir, "none.yaml") + ": no such file or directory",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = write("admission.yaml", tc.file)
			}
			c, err := loadAdmissionConfig(path)
			switch {
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Fatalf("error %v, want %s", err, tc.err)
			case tc.err == "" && (err != nil || c == nil):
				t.Fatalf("checker %v, error %v", c, err)
			}
		})
	}
}
