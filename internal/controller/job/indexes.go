package job

import (
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	batchv1 "k8s.io/api/batch/v1"
)

// noIndex marks a pod whose completion index is missing or malformed.
const noIndex = -1

// podIndex reads the completion index a pod of an Indexed Job carries in
// its annotation.
func podIndex(p *v1.Pod) int {
	s, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return noIndex
	}
	i, err := strconv.Atoi(s)
	if err != nil || i < 0 {
		return noIndex
	}
	return i
}

// indexSet is a set of completion indexes.
type indexSet map[int]bool

// parseIndexes reads the "1,3-5,7" form of status.completedIndexes,
// ignoring what is out of [0, completions) or malformed, as upstream does
// for a status it cannot trust.
func parseIndexes(s string, completions int) indexSet {
	out := indexSet{}
	if s == "" {
		return out
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, found := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		last := first
		if found {
			if last, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := first; i <= last && i < completions; i++ {
			if i >= 0 {
				out[i] = true
			}
		}
	}
	return out
}

// String renders the set as upstream does: increasing, and runs of three
// or more consecutive indexes as "first-last".
func (s indexSet) String() string {
	ix := make([]int, 0, len(s))
	for i := range s {
		ix = append(ix, i)
	}
	sort.Ints(ix)
	var b strings.Builder
	for i := 0; i < len(ix); {
		j := i
		for j+1 < len(ix) && ix[j+1] == ix[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		switch j - i {
		case 0:
			b.WriteString(strconv.Itoa(ix[i]))
		case 1:
			b.WriteString(strconv.Itoa(ix[i]) + "," + strconv.Itoa(ix[j]))
		default:
			b.WriteString(strconv.Itoa(ix[i]) + "-" + strconv.Itoa(ix[j]))
		}
		i = j + 1
	}
	return b.String()
}

// pendingIndexes returns up to n of the lowest indexes below completions
// that are neither completed nor held by an active pod.
func pendingIndexes(n, completions int, done, active indexSet) []int {
	var out []int
	for i := 0; i < completions && len(out) < n; i++ {
		if !done[i] && !active[i] {
			out = append(out, i)
		}
	}
	return out
}
