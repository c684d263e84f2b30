package nodestatus

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ObserveHost reads the machine's resources and identity from /proc, /sys
// and the file system holding dir. Runtime fields are left to the caller.
func ObserveHost(dir string) Machine {
	m := Machine{CPUs: runtime.NumCPU()}
	m.MemoryBytes, m.MemoryAvailable = meminfo()
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) == nil {
		m.DiskBytes = int64(st.Blocks) * st.Bsize
		m.DiskAvailable = int64(st.Bavail) * st.Bsize
	}
	m.PIDMax, _ = strconv.ParseInt(ReadFirstLine("/proc/sys/kernel/pid_max"), 10, 64)
	if entries, err := os.ReadDir("/proc"); err == nil {
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err == nil {
				m.PIDsInUse++
			}
		}
	}
	m.MachineID = ReadFirstLine("/etc/machine-id")
	m.SystemUUID = strings.ToLower(ReadFirstLine("/sys/class/dmi/id/product_uuid"))
	m.BootID = ReadFirstLine("/proc/sys/kernel/random/boot_id")
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.KernelVersion = unix.ByteSliceToString(u.Release[:])
	}
	m.OSImage = osImage()
	return m
}

func meminfo() (total, available int64) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "MemTotal:":
			total = n * 1024
		case "MemAvailable:":
			available = n * 1024
		}
	}
	return total, available
}

func osImage() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "Linux"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "Linux"
}
