package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

func TestLogFileIsPrivateAndAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "audit.log")
	for i := 0; i < 2; i++ {
		f, err := LogFile{Path: path}.Open()
		if err != nil {
			t.Fatal(err)
		}
		if err := NewJSONLines(f).WriteEvent(&auditv1.Event{AuditID: "a"}); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\n"); n != 2 {
		t.Errorf("%d lines after reopening:\n%s", n, data)
	}
}

func TestLogFileRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	f, err := LogFile{Path: path, MaxSizeMB: 1, MaxBackups: 2}.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := NewJSONLines(f)
	ev := &auditv1.Event{AuditID: "x", RequestURI: "/" + strings.Repeat("a", 1000)}
	for i := 0; i < 3000; i++ { // about 3 MB
		if err := w.WriteEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "audit-*.log"))
	if len(files) == 0 {
		t.Fatal("no rotated file")
	}
	st, _ := os.Stat(path)
	if st.Size() > 1<<20 {
		t.Errorf("current file is %d bytes, over the 1 MB limit", st.Size())
	}
}

func TestLogFileRefusesNegativeLimits(t *testing.T) {
	if _, err := (LogFile{Path: filepath.Join(t.TempDir(), "a.log"), MaxAgeDays: -1}).Open(); err == nil {
		t.Error("negative max age accepted")
	}
}
