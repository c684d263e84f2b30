package etcdsnapshot

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Name prefixes k3s gives snapshots: one taken by hand, one taken on the
// server's schedule.
const (
	OnDemand  = "on-demand"
	Scheduled = "etcd-snapshot"
)

// checksumSuffix names the sidecar that holds a snapshot's sha256, in the
// format sha256sum writes, so that `sha256sum -c` checks it too.
const checksumSuffix = ".sha256"

// FileName is k3s's name for a snapshot: NAME-NODE-UNIXSECONDS. The
// timestamp is part of the name, not only the file's mtime, so that the
// order survives copies to other disks.
func FileName(name, nodeName string, t time.Time) string {
	return fmt.Sprintf("%s-%s-%d", name, nodeName, t.Unix())
}

// createdFromName reads the time a snapshot's name ends with; false for a
// name without one (a file put in the directory by hand).
func createdFromName(fileName string) (time.Time, bool) {
	i := strings.LastIndexByte(fileName, '-')
	if i < 0 {
		return time.Time{}, false
	}
	secs, err := strconv.ParseInt(fileName[i+1:], 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}

// checkName refuses what cannot be a file in the snapshot directory
// itself: a name is joined to the directory, so a separator or ".." would
// reach outside it, and a leading dot is how unfinished files are hidden.
func checkName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s is empty", what)
	case strings.ContainsAny(s, "/\\\x00"):
		return fmt.Errorf("%s %q contains a path separator", what, s)
	case strings.HasPrefix(s, "."):
		return fmt.Errorf("%s %q starts with a dot", what, s)
	}
	return nil
}

// sortByAge orders snapshots oldest first; the name breaks ties so that
// listings are stable.
func sortByAge(s []Snapshot) {
	sort.SliceStable(s, func(i, j int) bool {
		if !s[i].Created.Equal(s[j].Created) {
			return s[i].Created.Before(s[j].Created)
		}
		return s[i].Name < s[j].Name
	})
}

// toPrune picks, among the snapshots named PREFIX-..., the oldest beyond
// the newest retention. A retention below 1 keeps everything, as k3s's.
func toPrune(all []Snapshot, prefix string, retention int) []Snapshot {
	if retention < 1 {
		return nil
	}
	var matching []Snapshot
	for _, s := range all {
		if strings.HasPrefix(s.Name, prefix+"-") {
			matching = append(matching, s)
		}
	}
	sortByAge(matching)
	if len(matching) <= retention {
		return nil
	}
	return matching[:len(matching)-retention]
}
