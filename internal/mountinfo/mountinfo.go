// Package mountinfo reads the mount points of /proc/self/mountinfo, which
// both the kubelet's volume teardown and killall walk to find what is
// still mounted under a directory.
package mountinfo

import (
	"os"
	"strconv"
	"strings"
)

// Points returns the mount points of a mountinfo text in its order (a
// mount comes after the one it sits on), with the kernel's octal escapes
// (\040 for a space) undone.
func Points(data string) []string {
	var out []string
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		out = append(out, unescape(f[4]))
	}
	return out
}

// Self is Points of this process's mount namespace.
func Self() ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return Points(string(b)), nil
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
