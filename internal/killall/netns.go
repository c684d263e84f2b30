package killall

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// NetnsDir is where containerd's CNI code pins pod network namespaces.
const NetnsDir = "/run/netns"

// Netns is a pinned network namespace: its name in NetnsDir and the inode
// of the namespace.
type Netns struct {
	Name string
	Ino  uint64
}

// UnusedNetns is the pod network namespaces (cni-*, as containerd names
// them) that were ours (some process of the data directory was in them
// before the kill) and that no process is in now: a pod whose processes
// were killed leaves its namespace pinned, with the pod's end of its veth
// inside. Another node's pods on the same machine have namespaces of
// theirs, some with no process for a moment (a sandbox being made): they
// are never ours.
func UnusedNetns(pinned []Netns, inUse, ours map[uint64]bool) []string {
	var out []string
	for _, ns := range pinned {
		if strings.HasPrefix(ns.Name, "cni-") && ours[ns.Ino] && !inUse[ns.Ino] {
			out = append(out, ns.Name)
		}
	}
	return out
}

// netnsOf is the network namespaces the processes pids are in.
func netnsOf(pids []int) map[uint64]bool {
	out := map[uint64]bool{}
	for _, pid := range pids {
		var st syscall.Stat_t
		if syscall.Stat(fmt.Sprintf("/proc/%d/ns/net", pid), &st) == nil {
			out[st.Ino] = true
		}
	}
	return out
}

// readNetns lists the namespaces pinned in NetnsDir and the namespaces
// processes are in.
func readNetns() ([]Netns, map[uint64]bool, error) {
	entries, err := os.ReadDir(NetnsDir)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("killall: read %s: %w", NetnsDir, err)
	}
	var pinned []Netns
	for _, e := range entries {
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(NetnsDir, e.Name()), &st) != nil {
			continue
		}
		pinned = append(pinned, Netns{Name: e.Name(), Ino: st.Ino})
	}
	inUse := map[uint64]bool{}
	procs, _ := filepath.Glob("/proc/[0-9]*/ns/net")
	for _, p := range procs {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			inUse[st.Ino] = true
		}
	}
	return pinned, inUse, nil
}

// removeNetns unpins a namespace, as `ip netns delete` does: the kernel
// frees it (and the veth end inside) once nothing else holds it.
func removeNetns(name string) error {
	p := filepath.Join(NetnsDir, name)
	if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL {
		return fmt.Errorf("killall: unmount %s: %w", p, err)
	}
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("killall: remove %s: %w", p, err)
	}
	return nil
}
