package kubelet

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
	"github.com/orca-project/orca/internal/kubelet/prober"
)

// maxTerminationMessage is upstream's cap on a termination message.
const maxTerminationMessage = 4096

// computeStatus gathers the runtime view and probe results into the pod's
// status.
func (k *Kubelet) computeStatus(pod *v1.Pod, terminating bool, failure *podstatus.Failure) v1.PodStatus {
	rtp := k.state.get(pod.UID)
	in := podstatus.Input{
		Pod:         pod,
		HostIPs:     k.cfg.HostIPs,
		Instances:   map[string][]podstatus.Instance{},
		Waiting:     map[string]podstatus.Waiting{},
		Ready:       map[string]bool{},
		Started:     map[string]bool{},
		Terminating: terminating,
		Failure:     failure,
		Resize:      k.res.conditions(pod.UID),
		Now:         time.Now(),
	}
	in.Allocated, _ = k.res.allocated(pod.UID)
	actuated := k.res.actuated(pod.UID)
	sb := readySandbox(rtp)
	if sb != nil {
		in.SandboxReady = true
		in.PodIPs = sb.IPs
	} else if rtp != nil && len(rtp.Sandboxes) > 0 {
		// Keep reporting the IP a stopped pod had, as upstream does.
		for _, ip := range pod.Status.PodIPs {
			in.PodIPs = append(in.PodIPs, ip.IP)
		}
	}
	current := ""
	if rtp != nil && len(rtp.Sandboxes) > 0 {
		current = rtp.Sandboxes[0].ID
	}
	for name, runs := range rtp.byName() {
		for _, r := range runs {
			inst := r.Instance
			if inst.State == podstatus.Exited {
				inst.Message = k.terminationMessage(pod, name, r)
			}
			// Runs from an older sandbox still count for restarts, but a
			// running one there is not this pod's current run.
			if r.SandboxID != current && inst.State == podstatus.Running {
				inst.State = podstatus.Exited
			}
			if inst.State == podstatus.Running {
				if a, ok := actuated[name]; ok {
					inst.Resources = reportedResources(r.Reported, &a)
				} else {
					inst.Resources = reportedResources(r.Reported, nil)
				}
			}
			in.Instances[name] = append(in.Instances[name], inst)
		}
		if len(runs) > 0 && runs[0].State == podstatus.Running {
			id := runs[0].ID
			// A container with a probe is neither ready nor started until
			// that probe has passed, even before its worker exists.
			spec := findContainer(pod, name)
			if spec != nil && spec.ReadinessProbe != nil {
				ok, known, has, _ := k.probes.Result(pod.UID, name, prober.Readiness, id)
				in.Ready[name] = has && known && ok
			}
			if spec != nil && spec.StartupProbe != nil {
				ok, known, has, _ := k.probes.Result(pod.UID, name, prober.Startup, id)
				in.Started[name] = has && known && ok
			}
		}
	}
	for name, w := range k.waitingOf(pod.UID) {
		in.Waiting[name] = podstatus.Waiting{Reason: w.reason, Message: w.message}
	}
	return podstatus.Compute(in)
}

// terminationMessage reads what the container wrote to its termination
// message path, or the tail of its log when the policy says so.
func (k *Kubelet) terminationMessage(pod *v1.Pod, name string, r container) string {
	if r.Message != "" {
		return r.Message
	}
	if r.TermFile != "" {
		if b, err := os.ReadFile(r.TermFile); err == nil && len(b) > 0 {
			if len(b) > maxTerminationMessage {
				b = b[:maxTerminationMessage]
			}
			return string(b)
		}
	}
	c := findContainer(pod, name)
	if c != nil && c.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError && r.ExitCode != 0 && r.LogPath != "" {
		return tailLog(r.LogPath, 80, 2048)
	}
	return ""
}

// tailLog returns the last lines of a CRI log file, without the CRI
// prefix.
func tailLog(path string, lines, maxBytes int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	var out strings.Builder
	for _, l := range all {
		// "<time> <stream> <tag> <message>"
		parts := strings.SplitN(l, " ", 4)
		if len(parts) == 4 {
			out.WriteString(parts[3])
			if parts[2] == "F" {
				out.WriteByte('\n')
			}
		}
	}
	s := out.String()
	if len(s) > maxBytes {
		s = s[len(s)-maxBytes:]
	}
	return s
}

// updateStatus sends the pod's status to the API server when it changed.
func (k *Kubelet) updateStatus(ctx context.Context, pod *v1.Pod, terminating bool) {
	k.sendStatus(ctx, pod, terminating, nil)
}

// sendStatus is updateStatus for a pod that may have failed as a whole.
func (k *Kubelet) sendStatus(ctx context.Context, pod *v1.Pod, terminating bool, failure *podstatus.Failure) {
	latest := k.pod(pod.UID)
	if latest == nil {
		latest = pod
	}
	st := k.computeStatus(latest, terminating, failure)
	if equality.Semantic.DeepEqual(st, latest.Status) {
		return
	}
	if !terminating && pod.DeletionTimestamp == nil && latest.Status.Phase != st.Phase {
		k.log.Info("pod phase", "pod", podKey(pod), "phase", st.Phase)
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": pod.UID},
		"status":   st,
	})
	if err != nil {
		return
	}
	updated, err := k.cfg.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		if ctx.Err() == nil {
			k.log.Warn("update pod status", "pod", podKey(pod), "err", err)
		}
		return
	}
	k.mu.Lock()
	// Only a pod still known: a deleted one must stay forgotten.
	if cur, ok := k.pods[pod.UID]; ok && notOlder(cur, updated) {
		k.pods[pod.UID] = updated
	}
	k.mu.Unlock()
}
