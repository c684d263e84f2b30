package job

import (
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
)

// Upstream's messages for Jobs with backoffLimitPerIndex.
const (
	msgMaxFailedIndexes = "Job has exceeded the specified maximal number of failed indexes"
	msgFailedIndexes    = "Job has failed indexes"
)

func hasPerIndexBackoff(j *batchv1.Job) bool {
	return isIndexed(j) && j.Spec.BackoffLimitPerIndex != nil
}

func annotationCount(p *v1.Pod, key string) int32 {
	n, err := strconv.Atoi(p.Annotations[key])
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

// indexFailed is upstream's isIndexFailed for a pod just counted: its
// index fails on a FailIndex rule, or when the failures before it already
// reach backoffLimitPerIndex.
func indexFailed(j *batchv1.Job, p *v1.Pod, v policyVerdict) bool {
	if v.failIndex {
		return true
	}
	return v.count && annotationCount(p, batchv1.JobIndexFailureCountAnnotation) >= *j.Spec.BackoffLimitPerIndex
}

// indexHistory is what the last failed pod of an index says about the
// next one: its failure counts and when it finished.
type indexHistory struct {
	failures, ignored int32
	lastFailure       time.Time
}

// indexHistories reads, per index, the last failed pod (by finish time):
// the next pod carries its counts plus one for the failure that pod was
// (counted, or ignored by the failure policy).
func indexHistories(j *batchv1.Job, pods []*v1.Pod) map[int]indexHistory {
	last := map[int]*v1.Pod{}
	for _, p := range pods {
		if p.Status.Phase != v1.PodFailed {
			continue
		}
		ix := podIndex(p)
		if ix == noIndex {
			continue
		}
		if cur, ok := last[ix]; !ok || finishTime(p).After(finishTime(cur)) {
			last[ix] = p
		}
	}
	out := map[int]indexHistory{}
	for ix, p := range last {
		h := indexHistory{
			failures:    annotationCount(p, batchv1.JobIndexFailureCountAnnotation),
			ignored:     annotationCount(p, batchv1.JobIndexIgnoredFailureCountAnnotation),
			lastFailure: finishTime(p),
		}
		if matchPodFailurePolicy(j.Spec.PodFailurePolicy, p).count {
			h.failures++
		} else {
			h.ignored++
		}
		out[ix] = h
	}
	return out
}

// indexBackoff is how long index ix must still wait after its last
// counted failure.
func indexBackoff(h indexHistory, now time.Time) time.Duration {
	if h.failures == 0 {
		return 0
	}
	left := backoffDelay(int(h.failures)) - now.Sub(h.lastFailure)
	return max(left, 0)
}
