// Package logrotate is upstream's container log manager: every running
// container's log that has grown past the maximum size is renamed to
// <log>.<timestamp> and the runtime asked to reopen it
// (ReopenContainerLog), so the container goes on writing to a fresh
// file that `kubectl logs` reads; rotated files but the newest are
// gzip-compressed, and the oldest removed so that at most MaxFiles
// files (the current one included) remain.
//
// What to do with one log is a pure function (Plan); Manager carries it
// out for the runtime's containers.
package logrotate

import (
	"sort"
	"strings"
	"time"
)

// Policy is upstream's --container-log-max-size and
// --container-log-max-files.
type Policy struct {
	MaxSize  int64
	MaxFiles int
}

// DefaultPolicy is upstream's: 10Mi, 5 files.
func DefaultPolicy() Policy { return Policy{MaxSize: 10 << 20, MaxFiles: 5} }

// timestampFormat is upstream's suffix of a rotated log.
const timestampFormat = "20060102-150405"

const (
	compressSuffix = ".gz"
	tmpSuffix      = ".tmp"
)

// Actions are what to do with one container's log, in this order.
type Actions struct {
	// Remove are leftovers (temporary files, uncompressed copies of
	// compressed ones) and the oldest rotated files beyond the limit.
	Remove []string
	// Compress are rotated files to gzip.
	Compress []string
	// Rotate, when set, renames the log to it and reopens the log.
	Rotate string
}

// Plan decides for a log of size bytes with these rotated files next to
// it (their paths, <log>.*), as upstream's rotateLog: clean up, keep at
// most MaxFiles-2 older rotated files (the current and the one about to
// be rotated make MaxFiles), compress all of them, then rotate. A log
// under the maximum size is left alone.
func Plan(p Policy, log string, size int64, rotated []string, now time.Time) Actions {
	var a Actions
	if size < p.MaxSize {
		return a
	}
	set := map[string]bool{}
	for _, r := range rotated {
		set[r] = true
	}
	var kept []string
	for _, r := range rotated {
		switch {
		case strings.HasSuffix(r, tmpSuffix):
			a.Remove = append(a.Remove, r)
		case !strings.HasSuffix(r, compressSuffix) && set[r+compressSuffix]:
			a.Remove = append(a.Remove, r)
		default:
			kept = append(kept, r)
		}
	}
	// Timestamps sort as the names do; compressed or not.
	sort.Slice(kept, func(i, j int) bool {
		return strings.TrimSuffix(kept[i], compressSuffix) < strings.TrimSuffix(kept[j], compressSuffix)
	})
	maxRotated := max(p.MaxFiles-2, 0)
	if n := len(kept) - maxRotated; n > 0 {
		a.Remove = append(a.Remove, kept[:n]...)
		kept = kept[n:]
	}
	for _, r := range kept {
		if !strings.HasSuffix(r, compressSuffix) {
			a.Compress = append(a.Compress, r)
		}
	}
	a.Rotate = log + "." + now.Format(timestampFormat)
	return a
}
