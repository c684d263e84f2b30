package e2e

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }

// killPID sends SIGKILL to the process whose pid is written in s.
func killPID(s string) error {
	pid, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return err
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}
