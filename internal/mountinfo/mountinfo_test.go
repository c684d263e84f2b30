package mountinfo

import (
	"slices"
	"testing"
)

func TestPoints(t *testing.T) {
	data := "22 1 8:1 / / rw - ext4 /dev/vda rw\n" +
		"40 22 0:5 / /var/lib/orca/agent/pods/a\\040b rw - tmpfs tmpfs rw\n" +
		"short line\n"
	want := []string{"/", "/var/lib/orca/agent/pods/a b"}
	if got := Points(data); !slices.Equal(got, want) {
		t.Errorf("Points = %q, want %q", got, want)
	}
	if got := unescape(`a\0`); got != `a\0` {
		t.Errorf("a truncated escape was changed: %q", got)
	}
}
