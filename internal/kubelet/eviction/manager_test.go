package eviction

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// fakeNode is a node whose observations change as it reclaims.
type fakeNode struct {
	obs      []Observations // one per Observe call; the last repeats
	usage    Usage
	pods     []*v1.Pod
	calls    []string
	evicted  []string
	graces   []int64
	messages []string
}

func (f *fakeNode) Summary(_ context.Context, update bool) (*statsapi.Summary, error) {
	o := f.obs[0]
	if len(f.obs) > 1 {
		f.obs = f.obs[1:]
	}
	f.calls = append(f.calls, map[bool]string{false: "observe", true: "observe new"}[update])
	return summaryOf(o, f.usage), nil
}

// summaryOf is a summary the manager observes as obs and usage (memory
// and nodefs only).
func summaryOf(obs Observations, usage Usage) *statsapi.Summary {
	s := &statsapi.Summary{}
	if o, ok := obs[MemoryAvailable]; ok {
		s.Node.Memory = &statsapi.MemoryStats{AvailableBytes: u64(o.Available), WorkingSetBytes: u64(o.Capacity - o.Available)}
	}
	if o, ok := obs[NodeFsAvailable]; ok {
		s.Node.Fs = &statsapi.FsStats{AvailableBytes: u64(o.Available), CapacityBytes: u64(o.Capacity)}
	}
	for uid, p := range usage {
		ps := statsapi.PodStats{PodRef: statsapi.PodReference{UID: string(uid)}}
		for name, c := range p.Containers {
			ps.Containers = append(ps.Containers, statsapi.ContainerStats{Name: name,
				Memory: &statsapi.MemoryStats{WorkingSetBytes: u64(c.MemoryWorkingSet)},
				Rootfs: &statsapi.FsStats{UsedBytes: u64(c.RootfsBytes)}})
		}
		s.Pods = append(s.Pods, ps)
	}
	return s
}

func u64(n int64) *uint64 {
	v := uint64(n)
	return &v
}

func (f *fakeNode) DeleteAllUnusedContainers(context.Context) error {
	f.calls = append(f.calls, "containers")
	return nil
}

func (f *fakeNode) DeleteUnusedImages(context.Context) error {
	f.calls = append(f.calls, "images")
	return nil
}

func (f *fakeNode) ActivePods() []*v1.Pod { return f.pods }

func (f *fakeNode) Evict(_ context.Context, pod *v1.Pod, grace int64, msg string, cond v1.PodCondition) bool {
	f.calls = append(f.calls, "evict "+pod.Name)
	f.evicted = append(f.evicted, pod.Name)
	f.graces = append(f.graces, grace)
	f.messages = append(f.messages, cond.Reason+": "+msg)
	return true
}

func TestSynchronize(t *testing.T) {
	disk := func(avail int64) Observations {
		return Observations{NodeFsAvailable: {Available: avail, Capacity: 1000 * mi}}
	}
	mem := func(avail int64) Observations {
		return Observations{MemoryAvailable: {Available: avail, Capacity: 8192 * mi}}
	}
	critical := pod("critical", systemCriticalPriority, "", "")
	hog := pod("hog", 0, "", "")
	small := pod("small", 0, "100Mi", "")
	grace := int64(30)
	small.Spec.TerminationGracePeriodSeconds = &grace
	usage := Usage{"hog": {Containers: map[string]ContainerUsage{"hog-c0": {MemoryWorkingSet: 500 * mi, RootfsBytes: 50 * mi}}},
		"small":    {Containers: map[string]ContainerUsage{"small-c0": {MemoryWorkingSet: 10 * mi}}},
		"critical": {Containers: map[string]ContainerUsage{"critical-c0": {MemoryWorkingSet: 900 * mi, RootfsBytes: 900 * mi}}}}
	for _, tc := range []struct {
		name    string
		flags   Flags
		obs     []Observations
		pods    []*v1.Pod
		calls   []string
		graces  []int64
		message string
	}{
		{name: "nothing met, nothing done", flags: Flags{Hard: "memory.available<100Mi"},
			obs: []Observations{mem(200 * mi)}, pods: []*v1.Pod{hog},
			calls: []string{"observe"}},
		{name: "disk: dead containers and images first, which is enough", flags: Flags{Hard: "nodefs.available<10%"},
			obs: []Observations{disk(50 * mi), disk(200 * mi)}, pods: []*v1.Pod{hog},
			calls: []string{"observe", "containers", "images", "observe new"}},
		{name: "disk: not enough reclaimed, one pod goes, never a critical one", flags: Flags{Hard: "nodefs.available<10%"},
			obs: []Observations{disk(50 * mi)}, pods: []*v1.Pod{critical, small, hog},
			calls:   []string{"observe", "containers", "images", "observe new", "observe", "evict hog"},
			graces:  []int64{0},
			message: "TerminationByKubelet: The node was low on resource: ephemeral-storage. Threshold quantity: 100Mi, available: 50Mi. Container hog-c0 was using 50Mi, request is 0, has larger consumption of ephemeral-storage. "},
		{name: "memory: no node-level reclaim, the pod over its request goes", flags: Flags{Hard: "memory.available<100Mi"},
			obs: []Observations{mem(50 * mi)}, pods: []*v1.Pod{small, hog},
			calls: []string{"observe", "observe", "evict hog"}, graces: []int64{0},
			message: "TerminationByKubelet: The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container hog-c0 was using 500Mi, request is 0, has larger consumption of memory. "},
		{name: "soft threshold past its grace: the pod's grace capped by the maximum", flags: Flags{Soft: "memory.available<1Gi", SoftGracePeriod: "memory.available=1ns", MaxPodGracePeriod: 10},
			obs: []Observations{mem(50 * mi)}, pods: []*v1.Pod{small},
			calls: []string{"observe", "observe", "evict small"}, graces: []int64{10},
			message: "TerminationByKubelet: The node was low on resource: memory. Threshold quantity: 1Gi, available: 50Mi. "},
		{name: "only critical pods: none goes", flags: Flags{Hard: "memory.available<100Mi"},
			obs: []Observations{mem(50 * mi)}, pods: []*v1.Pod{critical},
			calls: []string{"observe", "observe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &fakeNode{obs: tc.obs, usage: usage, pods: tc.pods}
			rec := record.NewFakeRecorder(10)
			m := &Manager{Config: mustConfig(t, tc.flags), Stats: node, Reclaimer: node, Pods: node, Recorder: rec, Log: testLogger()}
			if tc.flags.Soft != "" {
				// The first pass starts the grace period.
				m.Synchronize(context.Background())
				node.calls = nil
			}
			m.Synchronize(context.Background())
			if !reflect.DeepEqual(node.calls, tc.calls) {
				t.Errorf("calls %v, want %v", node.calls, tc.calls)
			}
			if !reflect.DeepEqual(node.graces, tc.graces) {
				t.Errorf("graces %v, want %v", node.graces, tc.graces)
			}
			if tc.message != "" && (len(node.messages) != 1 || node.messages[0] != tc.message) {
				t.Errorf("messages %q, want %q", node.messages, tc.message)
			}
			if len(tc.graces) > 0 {
				select {
				case e := <-rec.Events:
					if want := "Warning Evicted " + tc.message[len("TerminationByKubelet: "):]; e != want {
						t.Errorf("event %q, want %q", e, want)
					}
				default:
					t.Errorf("no Evicted event")
				}
			}
		})
	}
}

func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
