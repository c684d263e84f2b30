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

// mapping is one entry of /proc/self/smaps.
type mapping struct {
	start, end uintptr
	perms      string
	path       string
	// anonymous counts pages that no longer match the file: a read-only
	// mapping can still hold some, such as the dynamic linker's relocated
	// pointers (RELRO). Dropping those would lose them.
	anonymousKB int
}

// ReleaseExecutablePages drops the resident pages of the running
// executable's read-only mappings that are pure copies of the file, and
// returns how many bytes of mappings it advised.
func ReleaseExecutablePages() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("find executable: %w", err)
	}
	maps, err := readSmaps()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range maps {
		if !releasable(m, exe) {
			continue
		}
		// The raw system call takes the mapping's address as a number;
		// building a Go slice over it would be a pointer Go never allocated.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); errno != 0 {
			return total, fmt.Errorf("madvise %x-%x: %w", m.start, m.end, errno)
		}
		total += int64(m.end - m.start)
	}
	return total, nil
}

// releasable reports whether dropping m's pages loses nothing.
func releasable(m mapping, exe string) bool {
	return m.path == exe && !strings.Contains(m.perms, "w") && strings.HasSuffix(m.perms, "p") && m.anonymousKB == 0
}

func readSmaps() ([]mapping, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, fmt.Errorf("read mappings: %w", err)
	}
	defer f.Close()
	var out []mapping
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if start, end, ok := parseRange(fields[0]); ok && len(fields) >= 5 {
			m := mapping{start: start, end: end, perms: fields[1]}
			if len(fields) >= 6 {
				m.path = fields[5]
			}
			out = append(out, m)
			continue
		}
		if fields[0] == "Anonymous:" && len(fields) >= 2 && len(out) > 0 {
			kb, _ := strconv.Atoi(fields[1])
			out[len(out)-1].anonymousKB = kb
		}
	}
	return out, sc.Err()
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
