package kubelet

import (
	"path/filepath"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
	"github.com/orca-project/orca/internal/kubelet/stats"
)

// StatsPods lists the pods with a ready sandbox and their running
// containers, for the stats collector.
func (k *Kubelet) StatsPods() []stats.Pod {
	var out []stats.Pod
	for _, p := range k.Pods() {
		sb := readySandbox(k.state.get(p.UID))
		if sb == nil {
			continue
		}
		sp := stats.Pod{
			Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), SandboxID: sb.ID,
			StartTime: sb.CreatedAt,
			LogDir:    k.podLogDir(p),
			VolumeDir: filepath.Join(k.cfg.PodDir, string(p.UID), "volumes"),
		}
		if p.Status.StartTime != nil {
			sp.StartTime = p.Status.StartTime.Time
		}
		for _, c := range k.state.get(p.UID).Containers {
			if c.State != podstatus.Running || c.SandboxID != sb.ID {
				continue
			}
			sp.Containers = append(sp.Containers, stats.Container{Name: c.Name, ID: c.ID, Image: c.Image, StartTime: c.StartedAt})
		}
		out = append(out, sp)
	}
	return out
}
