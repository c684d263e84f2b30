package kubelet

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// initPlan is what a pod's init containers need next.
type initPlan struct {
	// start lists the init containers to start or restart now, by index.
	start []int
	// done means the regular containers may run: every regular init
	// container has completed and every sidecar has started, or a regular
	// container ran already.
	done bool
	// failed means a regular init container failed under restartPolicy
	// Never: the pod has failed.
	failed bool
}

// createdGrace is how long a container created but never started is
// taken to be starting (a kubelet stopped between the two steps starts
// it) before a new one replaces it.
const createdGrace = time.Minute

// planInit decides the init containers' next step from their runs in the
// current sandbox (newest first), as upstream's computeInitContainerActions:
// in order, a regular init container must complete before the next one
// starts, a sidecar (restartPolicy Always) must have started (passed its
// startup probe, if it has one: started tells). Sidecars are restarted
// whenever they stop, whatever the pod's restart policy; once a regular
// container has run, only the sidecars are looked after.
func planInit(pod *v1.Pod, runs map[string][]container, started func(c *v1.Container, id string) bool, now time.Time) initPlan {
	initialized := false
	for _, c := range pod.Spec.Containers {
		if len(runs[c.Name]) > 0 {
			initialized = true
		}
	}
	var p initPlan
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		r := runs[c.Name]
		starting := len(r) > 0 && r[0].State == podstatus.Created && now.Sub(r[0].CreatedAt) < createdGrace
		if podstatus.IsSidecar(c) {
			switch {
			case starting:
				if !initialized {
					return p
				}
			case len(r) == 0 || r[0].State != podstatus.Running:
				p.start = append(p.start, i)
				if !initialized {
					return p
				}
			case !started(c, r[0].ID) && !initialized:
				return p
			}
			continue
		}
		if initialized {
			continue
		}
		switch {
		case len(r) > 0 && r[0].State == podstatus.Exited && r[0].ExitCode == 0:
			continue
		case len(r) > 0 && (r[0].State == podstatus.Running || starting):
			return p
		case len(r) > 0 && r[0].State == podstatus.Exited && pod.Spec.RestartPolicy == v1.RestartPolicyNever:
			p.failed = true
			return p
		}
		p.start = append(p.start, i)
		return p
	}
	p.done = true
	return p
}

// regularContainersDone reports whether every regular container has run
// and exited for good under the pod's restart policy: the pod's work is
// over and its sidecars may stop.
func regularContainersDone(pod *v1.Pod, runs map[string][]container) bool {
	for _, c := range pod.Spec.Containers {
		r := runs[c.Name]
		if len(r) == 0 || r[0].State != podstatus.Exited || shouldRestart(pod.Spec.RestartPolicy, r[0].ExitCode) {
			return false
		}
	}
	return true
}
