package killall

import (
	"slices"
	"strings"

	"github.com/orca-project/orca/internal/mountinfo"
)

// ParseMountinfo returns the mount points of a mountinfo text in its
// order.
func ParseMountinfo(data string) []string { return mountinfo.Points(data) }

// Unmounts is the order to unmount what lies under dir in: deepest first,
// and of mounts stacked on one point the latest first. dir itself stays
// mounted: it may be the disk the data lives on.
func Unmounts(points []string, dir string) []string {
	type m struct {
		point string
		depth int
		order int
	}
	var under []m
	for i, p := range points {
		if strings.HasPrefix(p, dir+"/") {
			under = append(under, m{p, strings.Count(p, "/"), i})
		}
	}
	slices.SortStableFunc(under, func(a, b m) int {
		if a.depth != b.depth {
			return b.depth - a.depth
		}
		return b.order - a.order
	})
	out := make([]string, len(under))
	for i, x := range under {
		out[i] = x.point
	}
	return out
}
