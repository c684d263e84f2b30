package openapi

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates zz_generated.openapi.go and fails
// if it differs from the committed file: after a k8s.io/api or kube-openapi
// upgrade, run hack/update-openapi.sh.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs openapi-gen")
	}
	for _, tool := range []string{"bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "..", "..", "hack", "update-openapi.sh"), dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/update-openapi.sh: %v\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(dir, "zz_generated.openapi.go"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("zz_generated.openapi.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("zz_generated.openapi.go is stale; run hack/update-openapi.sh")
	}
}
