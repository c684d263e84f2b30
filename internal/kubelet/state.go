package kubelet

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/kubelet/podstatus"
)

// Labels the kubelet puts on sandboxes and containers, as upstream's, so
// that a restarted kubelet (or crictl) recognises what belongs to which pod.
const (
	labelPodName       = "io.kubernetes.pod.name"
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"
	// annotations
	annRestartCount    = "io.kubernetes.container.restartCount"
	annTerminationPath = "io.kubernetes.container.terminationMessagePath"
	annTerminationPol  = "io.kubernetes.container.terminationMessagePolicy"
	annInit            = "orca.io/init-container"
	annTerminationFile = "orca.io/termination-message-file"
	annGracePeriod     = "io.kubernetes.pod.terminationGracePeriod"
)

// sandbox is one pod sandbox as the runtime reports it.
type sandbox struct {
	ID        string
	Attempt   uint32
	Ready     bool
	CreatedAt time.Time
	IPs       []string
	Name      string
	Namespace string
	Grace     int64
}

// container is one container instance as the runtime reports it.
type container struct {
	podstatus.Instance
	Name      string
	SandboxID string
	Image     string
	Init      bool
	TermFile  string
	LogPath   string
	// Reported is the resources the runtime says the container holds.
	Reported *runtimeapi.LinuxContainerResources
}

// podRuntime is what the runtime holds for one pod, newest first.
type podRuntime struct {
	Sandboxes  []sandbox
	Containers []container
}

// byName groups container instances by name, newest first.
func (p *podRuntime) byName() map[string][]container {
	out := map[string][]container{}
	if p == nil {
		return out
	}
	for _, c := range p.Containers {
		out[c.Name] = append(out[c.Name], c)
	}
	return out
}

// runtimeState is the kubelet's cached view of the runtime.
type runtimeState struct {
	mu   sync.Mutex
	pods map[types.UID]*podRuntime
	// statuses caches ContainerStatus answers: what the list does not say
	// (exit code, times, reason) is fetched once per state change.
	statuses   map[string]cachedStatus
	sandboxIPs map[string][]string
}

type cachedStatus struct {
	state  runtimeapi.ContainerState
	status *runtimeapi.ContainerStatus
}

func newRuntimeState() *runtimeState {
	return &runtimeState{pods: map[types.UID]*podRuntime{}, statuses: map[string]cachedStatus{}, sandboxIPs: map[string][]string{}}
}

// relist reads every sandbox and container from the runtime.
func (s *runtimeState) relist(ctx context.Context, rt runtimeReader) error {
	return s.read(ctx, rt, "")
}

// refresh re-reads one pod, right after the kubelet changed it, so that
// its next decision does not wait for the periodic relist.
func (s *runtimeState) refresh(ctx context.Context, rt runtimeReader, uid types.UID) error {
	return s.read(ctx, rt, uid)
}

func (s *runtimeState) read(ctx context.Context, rt runtimeReader, only types.UID) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	sbReq := &runtimeapi.ListPodSandboxRequest{}
	cReq := &runtimeapi.ListContainersRequest{}
	if only != "" {
		sel := map[string]string{labelPodUID: string(only)}
		sbReq.Filter = &runtimeapi.PodSandboxFilter{LabelSelector: sel}
		cReq.Filter = &runtimeapi.ContainerFilter{LabelSelector: sel}
	}
	sbs, err := rt.ListPodSandbox(ctx, sbReq)
	if err != nil {
		return fmt.Errorf("list pod sandboxes: %w", err)
	}
	cs, err := rt.ListContainers(ctx, cReq)
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	pods := map[types.UID]*podRuntime{}
	sbPod := map[string]types.UID{}
	seenSB := map[string]bool{}
	for _, sb := range sbs.Items {
		uid := types.UID(sb.Labels[labelPodUID])
		if uid == "" && sb.Metadata != nil {
			uid = types.UID(sb.Metadata.Uid)
		}
		if uid == "" {
			continue
		}
		sbPod[sb.Id] = uid
		seenSB[sb.Id] = true
		p := pods[uid]
		if p == nil {
			p = &podRuntime{}
			pods[uid] = p
		}
		x := sandbox{ID: sb.Id, Ready: sb.State == runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: time.Unix(0, sb.CreatedAt)}
		if sb.Metadata != nil {
			x.Attempt, x.Name, x.Namespace = sb.Metadata.Attempt, sb.Metadata.Name, sb.Metadata.Namespace
		}
		x.Grace, _ = strconv.ParseInt(sb.Annotations[annGracePeriod], 10, 64)
		if x.Ready {
			s.mu.Lock()
			ips, ok := s.sandboxIPs[sb.Id]
			s.mu.Unlock()
			if !ok {
				st, err := rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.Id})
				if err == nil && st.Status != nil && st.Status.Network != nil {
					if st.Status.Network.Ip != "" {
						ips = append(ips, st.Status.Network.Ip)
					}
					for _, a := range st.Status.Network.AdditionalIps {
						ips = append(ips, a.Ip)
					}
					s.mu.Lock()
					s.sandboxIPs[sb.Id] = ips
					s.mu.Unlock()
				}
			}
			x.IPs = ips
		}
		p.Sandboxes = append(p.Sandboxes, x)
	}
	seen := map[string]bool{}
	for _, c := range cs.Containers {
		uid, ok := sbPod[c.PodSandboxId]
		if !ok {
			uid = types.UID(c.Labels[labelPodUID])
		}
		if uid == "" || c.Metadata == nil {
			continue
		}
		seen[c.Id] = true
		s.mu.Lock()
		cached, ok := s.statuses[c.Id]
		s.mu.Unlock()
		if !ok || cached.state != c.State {
			st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.Id})
			if err != nil || st.Status == nil {
				continue
			}
			cached = cachedStatus{state: c.State, status: st.Status}
			s.mu.Lock()
			s.statuses[c.Id] = cached
			s.mu.Unlock()
		}
		st := cached.status
		p := pods[uid]
		if p == nil {
			p = &podRuntime{}
			pods[uid] = p
		}
		x := container{
			Name: c.Metadata.Name, SandboxID: c.PodSandboxId,
			Init: c.Annotations[annInit] == "true", TermFile: c.Annotations[annTerminationFile],
			LogPath: st.LogPath, Reported: st.GetResources().GetLinux(),
		}
		if c.Image != nil {
			x.Image = c.Image.Image
		}
		x.ID, x.Attempt = c.Id, c.Metadata.Attempt
		x.CreatedAt = time.Unix(0, st.CreatedAt)
		if st.StartedAt > 0 {
			x.StartedAt = time.Unix(0, st.StartedAt)
		}
		if st.FinishedAt > 0 {
			x.FinishedAt = time.Unix(0, st.FinishedAt)
		}
		x.ExitCode, x.Reason, x.Message, x.ImageRef = st.ExitCode, st.Reason, st.Message, st.ImageRef
		switch c.State {
		case runtimeapi.ContainerState_CONTAINER_CREATED:
			x.State = podstatus.Created
		case runtimeapi.ContainerState_CONTAINER_RUNNING:
			x.State = podstatus.Running
		case runtimeapi.ContainerState_CONTAINER_EXITED:
			x.State = podstatus.Exited
		default:
			x.State = podstatus.Unknown
		}
		p.Containers = append(p.Containers, x)
	}
	for _, p := range pods {
		sort.Slice(p.Sandboxes, func(i, j int) bool { return p.Sandboxes[i].CreatedAt.After(p.Sandboxes[j].CreatedAt) })
		sort.Slice(p.Containers, func(i, j int) bool {
			a, b := p.Containers[i], p.Containers[j]
			if a.Attempt != b.Attempt {
				return a.Attempt > b.Attempt
			}
			return a.CreatedAt.After(b.CreatedAt)
		})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if only != "" {
		if p, ok := pods[only]; ok {
			s.pods[only] = p
		} else {
			delete(s.pods, only)
		}
		return nil
	}
	s.pods = pods
	for id := range s.statuses {
		if !seen[id] {
			delete(s.statuses, id)
		}
	}
	for id := range s.sandboxIPs {
		if !seenSB[id] {
			delete(s.sandboxIPs, id)
		}
	}
	return nil
}

// forgetStatus drops what the runtime said of a container, so that the
// next read asks again: its resources change without a change of state.
func (s *runtimeState) forgetStatus(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.statuses, id)
}

// get returns a pod's runtime view (nil when the runtime holds nothing).
func (s *runtimeState) get(uid types.UID) *podRuntime {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pods[uid]
}

func (s *runtimeState) podUIDs() []types.UID {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]types.UID, 0, len(s.pods))
	for uid := range s.pods {
		out = append(out, uid)
	}
	return out
}

// fingerprints summarises each pod's runtime state so that relist can
// tell which pods changed.
func (s *runtimeState) fingerprints() map[types.UID]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[types.UID]string, len(s.pods))
	for uid, p := range s.pods {
		fp := ""
		for _, sb := range p.Sandboxes {
			fp += sb.ID + strconv.FormatBool(sb.Ready) + ";"
		}
		for _, c := range p.Containers {
			fp += c.ID + strconv.Itoa(int(c.State)) + ";"
		}
		out[uid] = fp
	}
	return out
}
