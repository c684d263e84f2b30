// Package imagegc is upstream's image garbage collector: it remembers
// when each image was first seen and last used by a container, and when
// the image file system is fuller than the high threshold it removes
// unused images, the least recently used first, until usage is back to
// the low threshold. Images younger than the minimum age, the sandbox
// image and pinned images are never removed. The eviction manager asks it
// for every unused image under disk pressure.
//
// Which images go is a pure function (Choose); Manager keeps the record
// and talks to the runtime.
package imagegc

import (
	"sort"
	"time"
)

// Image is one image as the collector knows it.
type Image struct {
	ID   string
	Size int64
	// Pinned images (the runtime's pinned flag) are never removed.
	Pinned bool
	// FirstDetected is when the collector first saw it (zero for images
	// there when it started), LastUsed when a container last used it
	// (zero if never).
	FirstDetected, LastUsed time.Time
}

// Policy is upstream's image GC policy.
type Policy struct {
	// HighThresholdPercent of disk usage starts a collection, which
	// frees space down to LowThresholdPercent.
	HighThresholdPercent, LowThresholdPercent int
	// MinAge keeps images detected more recently.
	MinAge time.Duration
}

// DefaultPolicy is upstream's: 85%, 80%, 2 minutes.
func DefaultPolicy() Policy {
	return Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute}
}

// ToFree is how many bytes a periodic collection frees for a disk's
// capacity and available bytes: none below the high threshold, else
// enough to reach the low one.
func (p Policy) ToFree(capacity, available int64) int64 {
	if capacity <= 0 {
		return 0
	}
	usage := 100 - available*100/capacity
	if usage < int64(p.HighThresholdPercent) {
		return 0
	}
	return capacity*int64(100-p.LowThresholdPercent)/100 - available
}

// Choose picks the images to remove to free want bytes: those in no
// container's use, not pinned, not the sandbox's, detected at least
// MinAge before now; least recently used first (then first detected),
// until want is reached. It returns them and the bytes they free.
func Choose(images []Image, inUse map[string]bool, sandbox string, minAge time.Duration, now time.Time, want int64) ([]Image, int64) {
	var candidates []Image
	for _, img := range images {
		if inUse[img.ID] || img.Pinned || img.ID == sandbox {
			continue
		}
		if now.Sub(img.FirstDetected) < minAge {
			continue
		}
		candidates = append(candidates, img)
	}
	sort.SliceStable(candidates, func(i, j int) bool {
		a, b := candidates[i], candidates[j]
		if !a.LastUsed.Equal(b.LastUsed) {
			return a.LastUsed.Before(b.LastUsed)
		}
		return a.FirstDetected.Before(b.FirstDetected)
	})
	var out []Image
	var freed int64
	for _, img := range candidates {
		if freed >= want {
			break
		}
		out = append(out, img)
		freed += img.Size
	}
	return out, freed
}
