package kubelet_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/cri/fakeruntime"
	"github.com/orca-project/orca/internal/kubelet"
)

// These tests run the kubelet as the agent does, against an in-memory
// runtime and a fake API: pods go in through the API, the runtime's
// containers are made to exit by the test, and what is checked is what a
// user sees, the pod's status in the API and what is left in the runtime.

const node = "node-1"

type noVolumes struct{}

func (noVolumes) Prepare(context.Context, *v1.Pod) error { return nil }
func (noVolumes) ContainerMounts(*v1.Pod, *v1.Container, map[string]string) ([]*runtimeapi.Mount, error) {
	return nil, nil
}
func (noVolumes) Teardown(string) error      { return nil }
func (noVolumes) Orphans() ([]string, error) { return nil, nil }

type harness struct {
	t      *testing.T
	rt     *fakeruntime.Runtime
	client *fake.Clientset
	events *record.FakeRecorder
	// timeout bounds every wait.
	timeout time.Duration
}

func start(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, rt: fakeruntime.New(), client: fake.NewClientset(), events: record.NewFakeRecorder(1000), timeout: 10 * time.Second}
	h.rt.AddImage("busybox", 1<<20)
	k := kubelet.New(kubelet.Config{
		NodeName: node, Client: h.client, Runtime: h.rt, Volumes: noVolumes{},
		PodDir: t.TempDir(), LogDir: t.TempDir(), HostIPs: []string{"192.168.1.10"},
		Recorder: h.events, RelistPeriod: 20 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		// A test over before the informers report synced ends Run there.
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("kubelet: %v", err)
		}
	})
	// Pods come after the kubelet is up, as on a real node: once it
	// relists the runtime on its period.
	h.wait("the kubelet's periodic relist", func() bool {
		n := 0
		for _, c := range h.rt.Calls() {
			if req, ok := c.Request.(*runtimeapi.ListContainersRequest); ok && req.Filter == nil {
				n++
			}
		}
		return n >= 2
	})
	return h
}

func newPod(name string, policy v1.RestartPolicy, containers ...string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       v1.PodSpec{NodeName: node, RestartPolicy: policy},
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: "busybox", ImagePullPolicy: v1.PullIfNotPresent})
	}
	return p
}

func (h *harness) create(p *v1.Pod) {
	h.t.Helper()
	if _, err := h.client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// waitPod waits until the pod in the API satisfies ok, which says what
// it waits for when it does not.
func (h *harness) waitPod(p *v1.Pod, ok func(*v1.Pod) string) *v1.Pod {
	h.t.Helper()
	var why string
	for deadline := time.Now().Add(h.timeout); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		got, err := h.client.CoreV1().Pods(p.Namespace).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			why = err.Error()
			continue
		}
		if why = ok(got); why == "" {
			return got
		}
	}
	h.t.Fatalf("pod %s: %s", p.Name, why)
	return nil
}

func (h *harness) wait(what string, ok func() bool) {
	h.t.Helper()
	for deadline := time.Now().Add(h.timeout); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ok() {
			return
		}
	}
	h.t.Fatalf("timed out waiting for %s", what)
}

// containers lists the runtime's containers of a pod.
func (h *harness) containers(p *v1.Pod) []*runtimeapi.Container {
	resp, err := h.rt.ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": string(p.UID)},
	}})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.Containers
}

func (h *harness) sandboxes(p *v1.Pod) []*runtimeapi.PodSandbox {
	resp, err := h.rt.ListPodSandbox(context.Background(), &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": string(p.UID)},
	}})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.Items
}

// running waits for the container's run of that attempt to run and
// returns its runtime ID.
func (h *harness) running(p *v1.Pod, name string, attempt uint32) string {
	h.t.Helper()
	var id string
	h.wait(fmt.Sprintf("container %s attempt %d running", name, attempt), func() bool {
		for _, c := range h.containers(p) {
			if c.Metadata.Name == name && c.Metadata.Attempt == attempt && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				id = c.Id
				return true
			}
		}
		return false
	})
	return id
}

func (h *harness) exit(id string, code int32, reason string) {
	h.t.Helper()
	if err := h.rt.Exit(id, code, reason, ""); err != nil {
		h.t.Fatal(err)
	}
}

func condition(p *v1.Pod, t v1.PodConditionType) v1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func containerStatus(p *v1.Pod, name string) *v1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	for i := range p.Status.InitContainerStatuses {
		if p.Status.InitContainerStatuses[i].Name == name {
			return &p.Status.InitContainerStatuses[i]
		}
	}
	return nil
}

// runningAndReady is the status of a pod all of whose containers run.
func runningAndReady(p *v1.Pod) string {
	if p.Status.Phase != v1.PodRunning || condition(p, v1.PodReady) != v1.ConditionTrue || condition(p, v1.ContainersReady) != v1.ConditionTrue {
		return fmt.Sprintf("phase %q ready %q", p.Status.Phase, condition(p, v1.PodReady))
	}
	for _, c := range p.Spec.Containers {
		st := containerStatus(p, c.Name)
		if st == nil || st.State.Running == nil || !st.Ready {
			return fmt.Sprintf("container %s: %+v", c.Name, st)
		}
	}
	return ""
}

func TestPodRunsAndReportsStatus(t *testing.T) {
	h := start(t)
	p := newPod("web", v1.RestartPolicyAlways, "app", "helper")
	h.create(p)
	got := h.waitPod(p, runningAndReady)
	if got.Status.PodIP != "10.88.0.2" || len(got.Status.HostIPs) == 0 || got.Status.HostIP != "192.168.1.10" {
		t.Errorf("podIP %q hostIP %q", got.Status.PodIP, got.Status.HostIP)
	}
	for _, name := range []string{"app", "helper"} {
		st := containerStatus(got, name)
		if st.RestartCount != 0 || !strings.HasPrefix(st.ImageID, "sha256:") || !strings.HasSuffix(st.ContainerID, "://"+h.running(p, name, 0)) {
			t.Errorf("%s: restarts %d imageID %q containerID %q", name, st.RestartCount, st.ImageID, st.ContainerID)
		}
	}
	if n := len(h.sandboxes(p)); n != 1 {
		t.Errorf("%d sandboxes, want 1", n)
	}
}

func TestRestartPolicy(t *testing.T) {
	cases := []struct {
		policy      v1.RestartPolicy
		code        int32
		reason      string
		wantRestart bool
		wantPhase   v1.PodPhase
		wantReason  string
	}{
		{v1.RestartPolicyAlways, 0, "", true, v1.PodRunning, "Completed"},
		{v1.RestartPolicyAlways, 1, "", true, v1.PodRunning, "Error"},
		{v1.RestartPolicyOnFailure, 1, "", true, v1.PodRunning, "Error"},
		{v1.RestartPolicyOnFailure, 0, "", false, v1.PodSucceeded, "Completed"},
		{v1.RestartPolicyNever, 1, "", false, v1.PodFailed, "Error"},
		{v1.RestartPolicyNever, 0, "", false, v1.PodSucceeded, "Completed"},
		{v1.RestartPolicyNever, 137, "OOMKilled", false, v1.PodFailed, "OOMKilled"},
		{v1.RestartPolicyAlways, 137, "OOMKilled", true, v1.PodRunning, "OOMKilled"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s exit %d %s", tc.policy, tc.code, tc.reason), func(t *testing.T) {
			h := start(t)
			p := newPod("job", tc.policy, "main")
			h.create(p)
			h.exit(h.running(p, "main", 0), tc.code, tc.reason)
			got := h.waitPod(p, func(p *v1.Pod) string {
				st := containerStatus(p, "main")
				switch {
				case p.Status.Phase != tc.wantPhase:
					return fmt.Sprintf("phase %q", p.Status.Phase)
				case tc.wantRestart && (st.RestartCount != 1 || st.State.Running == nil):
					return fmt.Sprintf("not restarted: %+v", st)
				case !tc.wantRestart && st.State.Terminated == nil:
					return fmt.Sprintf("not terminated: %+v", st.State)
				}
				return ""
			})
			st := containerStatus(got, "main")
			term := st.State.Terminated
			if tc.wantRestart {
				term = st.LastTerminationState.Terminated
			}
			if term == nil || term.ExitCode != tc.code || term.Reason != tc.wantReason {
				t.Errorf("termination %+v, want exit %d reason %s", term, tc.code, tc.wantReason)
			}
			if !tc.wantRestart {
				if n := len(h.containers(p)); n != 1 {
					t.Errorf("%d containers in the runtime, want the one that exited", n)
				}
			}
		})
	}
}

// A container that exits at once, before the kubelet has looked at the
// runtime again after starting it (here: while its postStart hook runs),
// is restarted at once too, not at the next resync.
func TestImmediateExitIsRestarted(t *testing.T) {
	h := start(t)
	p := newPod("quick", v1.RestartPolicyAlways, "main")
	p.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	h.rt.SetExecHandler(func(_ context.Context, id string, _ []string) ([]byte, []byte, int32, error) {
		for _, c := range h.containers(p) {
			if c.Id == id && c.Metadata.Attempt == 0 {
				_ = h.rt.Exit(id, 1, "", "")
			}
		}
		return nil, nil, 0, nil
	})
	h.create(p)
	h.timeout = 3 * time.Second
	h.running(p, "main", 1)
}

func TestCrashLoopBackOff(t *testing.T) {
	h := start(t)
	p := newPod("crash", v1.RestartPolicyAlways, "main")
	h.create(p)
	h.exit(h.running(p, "main", 0), 1, "")
	// The first restart is immediate; the second waits out the back-off.
	h.exit(h.running(p, "main", 1), 1, "")
	got := h.waitPod(p, func(p *v1.Pod) string {
		st := containerStatus(p, "main")
		if st.State.Waiting == nil || st.State.Waiting.Reason != "CrashLoopBackOff" {
			return fmt.Sprintf("state %+v", st.State)
		}
		return ""
	})
	st := containerStatus(got, "main")
	want := fmt.Sprintf("back-off 10s restarting failed container=main pod=crash_default(%s)", p.UID)
	if st.State.Waiting.Message != want || st.RestartCount != 1 {
		t.Errorf("waiting %q restarts %d, want %q and 1", st.State.Waiting.Message, st.RestartCount, want)
	}
	if got.Status.Phase != v1.PodRunning || condition(got, v1.PodReady) != v1.ConditionFalse {
		t.Errorf("phase %s ready %s, want Running and not ready", got.Status.Phase, condition(got, v1.PodReady))
	}
	time.Sleep(100 * time.Millisecond)
	for _, c := range h.containers(p) {
		if c.Metadata.Attempt > 1 {
			t.Errorf("attempt %d started during the back-off", c.Metadata.Attempt)
		}
	}
}

func TestInitContainersRunInOrder(t *testing.T) {
	h := start(t)
	p := newPod("init", v1.RestartPolicyAlways, "main")
	p.Spec.InitContainers = []v1.Container{{Name: "first", Image: "busybox"}, {Name: "second", Image: "busybox"}}
	h.create(p)
	first := h.running(p, "first", 0)
	h.waitPod(p, func(p *v1.Pod) string {
		if condition(p, v1.PodInitialized) != v1.ConditionFalse || p.Status.Phase != v1.PodPending {
			return fmt.Sprintf("initialized %q phase %q", condition(p, v1.PodInitialized), p.Status.Phase)
		}
		return ""
	})
	for _, c := range h.containers(p) {
		if c.Metadata.Name != "first" {
			t.Fatalf("%s created while the first init container runs", c.Metadata.Name)
		}
	}
	// A failed init container runs again before the next one starts.
	h.exit(first, 1, "")
	h.exit(h.running(p, "first", 1), 0, "")
	h.exit(h.running(p, "second", 0), 0, "")
	h.running(p, "main", 0)
	got := h.waitPod(p, runningAndReady)
	if st := containerStatus(got, "first"); st.RestartCount != 1 || st.State.Terminated == nil || st.State.Terminated.Reason != "Completed" {
		t.Errorf("first init container: %+v", st)
	}
	var order []string
	for _, c := range h.rt.Calls() {
		if c.Method == "CreateContainer" {
			req := c.Request.(*runtimeapi.CreateContainerRequest)
			order = append(order, fmt.Sprintf("%s/%d", req.Config.Metadata.Name, req.Config.Metadata.Attempt))
		}
	}
	if strings.Join(order, " ") != "first/0 first/1 second/0 main/0" {
		t.Errorf("containers created in order %v", order)
	}
}

func TestDeletedPodIsStoppedAndRemoved(t *testing.T) {
	h := start(t)
	p := newPod("gone", v1.RestartPolicyAlways, "main")
	grace := int64(7)
	p.Spec.TerminationGracePeriodSeconds = &grace
	h.create(p)
	h.waitPod(p, runningAndReady)
	id := h.running(p, "main", 0)

	// The API server marks the pod deleted; the kubelet stops it within
	// the grace period and removes it from the API once it has.
	cur, err := h.client.CoreV1().Pods(p.Namespace).Get(context.Background(), p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	cur.DeletionTimestamp, cur.DeletionGracePeriodSeconds = &now, &grace
	if _, err := h.client.CoreV1().Pods(p.Namespace).Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.wait("pod removed from the API", func() bool {
		_, err := h.client.CoreV1().Pods(p.Namespace).Get(context.Background(), p.Name, metav1.GetOptions{})
		return err != nil
	})
	h.wait("containers and sandboxes removed from the runtime", func() bool {
		return len(h.containers(p)) == 0 && len(h.sandboxes(p)) == 0
	})
	var stops []int64
	for _, c := range h.rt.Calls() {
		if req, ok := c.Request.(*runtimeapi.StopContainerRequest); ok && c.Method == "StopContainer" && req.ContainerId == id {
			stops = append(stops, req.Timeout)
		}
	}
	if len(stops) == 0 || stops[0] != grace {
		t.Errorf("container stopped with timeouts %v, want %d first", stops, grace)
	}
}

func TestDeadSandboxIsReplaced(t *testing.T) {
	h := start(t)
	p := newPod("sb", v1.RestartPolicyAlways, "main")
	h.create(p)
	h.waitPod(p, runningAndReady)
	old := h.sandboxes(p)[0]
	if err := h.rt.KillSandbox(old.Id); err != nil {
		t.Fatal(err)
	}
	h.running(p, "main", 1)
	var current *runtimeapi.PodSandbox
	h.wait("a new sandbox", func() bool {
		for _, sb := range h.sandboxes(p) {
			if sb.Id != old.Id && sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
				current = sb
				return true
			}
		}
		return false
	})
	if current.Metadata.Attempt != 1 {
		t.Errorf("new sandbox attempt %d, want 1", current.Metadata.Attempt)
	}
	for _, c := range h.containers(p) {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING && c.PodSandboxId != current.Id {
			t.Errorf("container %s/%d still runs in the dead sandbox", c.Metadata.Name, c.Metadata.Attempt)
		}
	}
	got := h.waitPod(p, func(p *v1.Pod) string {
		if why := runningAndReady(p); why != "" {
			return why
		}
		if st := containerStatus(p, "main"); st.RestartCount != 1 {
			return fmt.Sprintf("restarts %d", st.RestartCount)
		}
		return ""
	})
	if got.Status.PodIP != "10.88.0.3" {
		t.Errorf("pod IP %q, want the new sandbox's 10.88.0.3", got.Status.PodIP)
	}
}

func TestImagePullFailure(t *testing.T) {
	h := start(t)
	p := newPod("pull", v1.RestartPolicyAlways, "main")
	p.Spec.Containers[0].Image = "registry.local/missing:v1"
	h.create(p)
	got := h.waitPod(p, func(p *v1.Pod) string {
		st := containerStatus(p, "main")
		if st == nil || st.State.Waiting == nil || (st.State.Waiting.Reason != "ErrImagePull" && st.State.Waiting.Reason != "ImagePullBackOff") {
			return fmt.Sprintf("status %+v", st)
		}
		return ""
	})
	if msg := containerStatus(got, "main").State.Waiting.Message; !strings.Contains(msg, `registry.local/missing:v1`) {
		t.Errorf("waiting message %q", msg)
	}
	if got.Status.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", got.Status.Phase)
	}
}
