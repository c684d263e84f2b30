// Package memtrim gives back memory a long-running process touched only
// while starting. The orca binary links kubectl, client-go and etcd; Go
// runs every linked package's initialisation, which faults in tens of
// megabytes of code and read-only data that a server never touches again.
// Those pages are clean copies of the executable file, so dropping them is
// safe: a page needed later is read back from the page cache on first use.
package memtrim

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ReleaseExecutablePages drops the resident read-only pages (code and
// constants) of the running executable and returns how many bytes of
// mappings it advised. Writable mappings are never touched: dropping those
// would discard their contents.
func ReleaseExecutablePages() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("find executable: %w", err)
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("read mappings: %w", err)
	}
	defer f.Close()
	var total int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 00400000-01531000 r--p 00000000 fe:00 9986081   /path/to/orca
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		start, end, ok := parseRange(fields[0])
		if !ok {
			continue
		}
		// The raw system call takes the mapping's address as a number;
		// building a Go slice over it would be a pointer Go never allocated.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_DONTNEED); errno != 0 {
			return total, fmt.Errorf("madvise %s: %w", fields[0], errno)
		}
		total += int64(end - start)
	}
	return total, sc.Err()
}

func parseRange(s string) (uintptr, uintptr, bool) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, false
	}
	start, err1 := strconv.ParseUint(a, 16, 64)
	end, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return 0, 0, false
	}
	return uintptr(start), uintptr(end), true
}
