package memtrim

import (
	"os"
	"strings"
	"testing"
)

func rssFileKB(t *testing.T) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "RssFile:") {
			var kb int
			for _, f := range strings.Fields(l)[1:2] {
				for _, c := range f {
					kb = kb*10 + int(c-'0')
				}
			}
			return kb
		}
	}
	t.Skip("no RssFile")
	return 0
}

func TestReleaseExecutablePagesKeepsTheProcessWorking(t *testing.T) {
	before := rssFileKB(t)
	n, err := ReleaseExecutablePages()
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no executable mapping found")
	}
	after := rssFileKB(t)
	if after >= before {
		t.Errorf("file-backed RSS did not drop: %d kB -> %d kB", before, after)
	}
	// Code runs on after its pages were dropped: they fault back in.
	if got := strings.Repeat("ab", 3); got != "ababab" {
		t.Fatal(got)
	}
}

func TestReleasableSkipsModifiedAndWritableMappings(t *testing.T) {
	exe := "/usr/bin/orca"
	cases := []struct {
		m    mapping
		want bool
	}{
		{mapping{perms: "r-xp", path: exe}, true},
		{mapping{perms: "r--p", path: exe}, true},
		{mapping{perms: "r--p", path: exe, anonymousKB: 4}, false}, // relocated (RELRO)
		{mapping{perms: "rw-p", path: exe}, false},
		{mapping{perms: "r--s", path: exe}, false},
		{mapping{perms: "r-xp", path: "/lib/libc.so.6"}, false},
	}
	for _, c := range cases {
		if got := releasable(c.m, exe); got != c.want {
			t.Errorf("%+v: got %v, want %v", c.m, got, c.want)
		}
	}
}
