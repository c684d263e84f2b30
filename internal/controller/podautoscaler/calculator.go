package podautoscaler

import (
	"errors"
	"fmt"
	"math"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Upstream's defaults for the controller's flags.
const (
	// defaultTolerance is --horizontal-pod-autoscaler-tolerance: a usage
	// ratio within 10% of 1 changes nothing.
	defaultTolerance = 0.1
	// cpuInitializationPeriod is
	// --horizontal-pod-autoscaler-cpu-initialization-period: a pod this
	// young only counts for cpu once it is ready and its sample was taken
	// after it became so.
	cpuInitializationPeriod = 5 * time.Minute
	// initialReadinessDelay is
	// --horizontal-pod-autoscaler-initial-readiness-delay: a pod that
	// turned unready this soon after starting is still starting.
	initialReadinessDelay = 30 * time.Second
	// defaultMetricWindow is the window of a custom metric that names
	// none, metrics-server's.
	defaultMetricWindow = time.Minute
)

// podMetric is one pod's sample, in milli-units.
type podMetric struct {
	Timestamp time.Time
	Window    time.Duration
	Value     int64
}

// podMetrics are the samples by pod name.
type podMetrics map[string]podMetric

// tolerances are how far below and above 1 a usage ratio may be before
// the replica count moves.
type tolerances struct{ down, up float64 }

func (t tolerances) within(ratio float64) bool {
	return 1.0-t.down <= ratio && ratio <= 1.0+t.up
}

// podSet is a set of pod names.
type podSet map[string]bool

// podGroups sorts the target's pods for a calculation.
type podGroups struct {
	ready   int
	unready podSet // pending, or (for cpu) still initializing
	missing podSet // running but without a sample
	ignored podSet // deleted or failed
}

// groupPods is upstream's: a pod being deleted or failed is ignored, a
// pending one is unready, one without a sample is missing; for cpu, a pod
// is also unready while its samples may still show its start-up, judged
// by its Ready condition and start time at now.
func groupPods(pods []*v1.Pod, metrics podMetrics, resource v1.ResourceName, now time.Time) podGroups {
	g := podGroups{unready: podSet{}, missing: podSet{}, ignored: podSet{}}
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == v1.PodFailed {
			g.ignored[pod.Name] = true
			continue
		}
		if pod.Status.Phase == v1.PodPending {
			g.unready[pod.Name] = true
			continue
		}
		metric, found := metrics[pod.Name]
		if !found {
			g.missing[pod.Name] = true
			continue
		}
		if resource == v1.ResourceCPU && cpuUnready(pod, metric, now) {
			g.unready[pod.Name] = true
			continue
		}
		g.ready++
	}
	return g
}

func cpuUnready(pod *v1.Pod, metric podMetric, now time.Time) bool {
	var ready *v1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.PodReady {
			ready = &pod.Status.Conditions[i]
		}
	}
	if ready == nil || pod.Status.StartTime == nil {
		return true
	}
	start := pod.Status.StartTime.Time
	if start.Add(cpuInitializationPeriod).After(now) {
		// Young: unready unless ready and sampled over a whole window since.
		return ready.Status == v1.ConditionFalse || metric.Timestamp.Before(ready.LastTransitionTime.Add(metric.Window))
	}
	// Older: unready only if it never became ready since starting.
	return ready.Status == v1.ConditionFalse && start.Add(initialReadinessDelay).After(ready.LastTransitionTime.Time)
}

var errNoPods = errors.New("no pods returned by selector while calculating replica count")

// errNoReadyMetrics is upstream's error when every sample was dropped.
var errNoReadyMetrics = errors.New("did not receive metrics for targeted pods (pods might be unready)")

// usageFunc turns samples into a usage ratio and the current usage
// reported in status.
type usageFunc func(podMetrics) (ratio float64, err error)

// replicasFromSamples is the shared core of resource and pods metrics:
// the ratio over ready pods decides, unless unready or missing pods could
// reverse its direction, in which case they are counted conservatively
// (missing pods at fill for a scale down, at zero for a scale up; unready
// pods at zero for a scale up) and a reversed or tolerated result keeps
// the current count.
func replicasFromSamples(current int32, metrics podMetrics, g podGroups, tol tolerances, ratio usageFunc, fill func(pod string) int64) (int32, error) {
	for p := range g.ignored {
		delete(metrics, p)
	}
	for p := range g.unready {
		delete(metrics, p)
	}
	if len(metrics) == 0 {
		return 0, errNoReadyMetrics
	}
	usageRatio, err := ratio(metrics)
	if err != nil {
		return 0, err
	}
	scaleUpWithUnready := len(g.unready) > 0 && usageRatio > 1.0
	if !scaleUpWithUnready && len(g.missing) == 0 {
		if tol.within(usageRatio) {
			return current, nil
		}
		return int32(math.Ceil(usageRatio * float64(g.ready))), nil
	}
	if len(g.missing) > 0 {
		for p := range g.missing {
			switch {
			case usageRatio < 1.0:
				metrics[p] = podMetric{Value: fill(p)}
			case usageRatio > 1.0:
				metrics[p] = podMetric{Value: 0}
			}
		}
	}
	if scaleUpWithUnready {
		for p := range g.unready {
			metrics[p] = podMetric{Value: 0}
		}
	}
	newRatio, err := ratio(metrics)
	if err != nil {
		return 0, err
	}
	if tol.within(newRatio) || (usageRatio < 1.0 && newRatio > 1.0) || (usageRatio > 1.0 && newRatio < 1.0) {
		return current, nil
	}
	replicas := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1.0 && replicas > current) || (newRatio > 1.0 && replicas < current) {
		return current, nil
	}
	return replicas, nil
}

// utilizationResult is what a utilization calculation reports.
type utilizationResult struct {
	replicas    int32
	utilization int32 // percent of requests
	rawAverage  int64 // milli-units per pod
}

// resourceUtilizationReplicas is upstream's GetResourceReplicas: the
// replica count that brings the ready pods' usage, as a percentage of
// their requests (of one container's, when container is set), to target.
func resourceUtilizationReplicas(current, target int32, resource v1.ResourceName, container string, pods []*v1.Pod, metrics podMetrics, tol tolerances, now time.Time) (utilizationResult, error) {
	if len(pods) == 0 {
		return utilizationResult{}, errNoPods
	}
	g := groupPods(pods, metrics, resource, now)
	requests, err := podRequests(pods, container, resource)
	if err != nil {
		return utilizationResult{}, err
	}
	var res utilizationResult
	first := true
	ratio := func(m podMetrics) (float64, error) {
		r, util, raw, err := utilizationRatio(m, requests, target)
		if first {
			res.utilization, res.rawAverage, first = util, raw, false
		}
		return r, err
	}
	fill := func(pod string) int64 { return requests[pod] * int64(max(100, target)) / 100 }
	res.replicas, err = replicasFromSamples(current, metrics, g, tol, ratio, fill)
	return res, err
}

// utilizationRatio is upstream's GetResourceUtilizationRatio.
func utilizationRatio(metrics podMetrics, requests map[string]int64, target int32) (ratio float64, utilization int32, rawAverage int64, err error) {
	var total, requested int64
	n := 0
	for pod, m := range metrics {
		req, ok := requests[pod]
		if !ok {
			continue
		}
		total += m.Value
		requested += req
		n++
	}
	if requested == 0 {
		return 0, 0, 0, errors.New("no metrics returned matched known pods")
	}
	utilization = int32(total * 100 / requested)
	return float64(utilization) / float64(target), utilization, total / int64(n), nil
}

// averageValueReplicas is upstream's calcPlainMetricReplicas, for a
// resource's raw average value and for pods metrics: the replica count
// that brings the average per pod to target (milli-units). resource is
// empty for a pods metric, so the cpu readiness rules apply only to cpu.
func averageValueReplicas(current int32, target int64, resource v1.ResourceName, pods []*v1.Pod, metrics podMetrics, tol tolerances, now time.Time) (replicas int32, usage int64, err error) {
	if len(pods) == 0 {
		return 0, 0, errNoPods
	}
	g := groupPods(pods, metrics, resource, now)
	first := true
	ratio := func(m podMetrics) (float64, error) {
		var total int64
		for _, s := range m {
			total += s.Value
		}
		avg := total / int64(len(m))
		if first {
			usage, first = avg, false
		}
		return float64(avg) / float64(target), nil
	}
	replicas, err = replicasFromSamples(current, metrics, g, tol, ratio, func(string) int64 { return target })
	return replicas, usage, err
}

// readyPods counts the running, ready pods, which an object or external
// metric's ratio scales.
func readyPods(pods []*v1.Pod) int64 {
	var n int64
	for _, p := range pods {
		if p.Status.Phase == v1.PodRunning && controllerutil.IsPodReady(p) {
			n++
		}
	}
	return n
}

// ratioReplicas is upstream's getUsageRatioReplicaCount, for object and
// external metrics with a total Value target: the ready pods scaled by the
// ratio, or from zero replicas the ratio itself.
func ratioReplicas(current int32, ratio float64, pods []*v1.Pod, tol tolerances) (int32, error) {
	if current == 0 {
		return int32(math.Ceil(ratio)), nil
	}
	if tol.within(ratio) {
		return current, nil
	}
	if len(pods) == 0 {
		return 0, fmt.Errorf("unable to calculate ready pods: %w", errNoPods)
	}
	f := ratio * float64(readyPods(pods))
	if f > math.MaxInt32 {
		return math.MaxInt32, nil
	}
	return int32(math.Ceil(f)), nil
}

// perPodReplicas is upstream's GetObjectPerPodMetricReplicas and
// GetExternalPerPodMetricReplicas: an AverageValue target divides the
// total among the target's current replicas.
func perPodReplicas(statusReplicas int32, total, targetPerPod int64, tol tolerances) (replicas int32, average int64) {
	replicas = statusReplicas
	ratio := float64(total) / (float64(targetPerPod) * float64(statusReplicas))
	if !tol.within(ratio) {
		r := math.Ceil(float64(total) / float64(targetPerPod))
		if r > math.MaxInt32 {
			r = math.MaxInt32
		}
		replicas = int32(r)
	}
	if float64(total) >= float64(math.MaxInt64) {
		return replicas, math.MaxInt64
	}
	return replicas, int64(math.Ceil(float64(total) / float64(statusReplicas)))
}

// sumSaturating adds external metric values, stopping at MaxInt64.
func sumSaturating(values []int64) int64 {
	var sum int64
	for _, v := range values {
		if v > 0 && sum > math.MaxInt64-v {
			return math.MaxInt64
		}
		sum += v
	}
	return sum
}

// podRequests are the pods' requests of resource in milli-units: one
// container's when container is set, else the sum over the containers
// and restartable init containers (sidecars).
func podRequests(pods []*v1.Pod, container string, resource v1.ResourceName) (map[string]int64, error) {
	out := make(map[string]int64, len(pods))
	for _, pod := range pods {
		if container == "" && pod.Spec.Resources != nil {
			if q, ok := pod.Spec.Resources.Requests[resource]; ok {
				out[pod.Name] = q.MilliValue()
				continue
			}
		}
		containers := append([]v1.Container{}, pod.Spec.Containers...)
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
				containers = append(containers, c)
			}
		}
		var request int64
		found := false
		for _, c := range containers {
			if container != "" && c.Name != container {
				continue
			}
			q, ok := c.Resources.Requests[resource]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, c.Name, pod.Name)
			}
			request += q.MilliValue()
			found = true
			if container != "" {
				break
			}
		}
		if container != "" && !found {
			return nil, fmt.Errorf("container %s not found in Pod %s", container, pod.Name)
		}
		out[pod.Name] = request
	}
	return out, nil
}
