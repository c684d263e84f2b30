package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/orca-project/orca/internal/cri"
)

// criState reports the state of a container, and whether any sandbox of
// the pod uid is left, straight from the node's containerd.
func criState(t *testing.T, containerID, podUID string) (runtimeapi.ContainerState, bool) {
	t.Helper()
	st, has, err := tryCRIState(containerID, podUID)
	if err != nil {
		t.Fatal(err)
	}
	return st, has
}

func tryCRIState(containerID, podUID string) (runtimeapi.ContainerState, bool, error) {
	rt, err := cri.Dial(filepath.Join(nodeDir, "agent", "containerd", "containerd.sock"))
	if err != nil {
		return 0, false, err
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	state := runtimeapi.ContainerState_CONTAINER_UNKNOWN
	if containerID != "" {
		st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: containerID})
		if err == nil {
			state = st.Status.State
		}
	}
	sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"io.kubernetes.pod.uid": podUID}}})
	if err != nil {
		return state, false, err
	}
	return state, len(sbs.Items) > 0, nil
}

func TestAgentKill9LeavesContainersRunning(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createPod(t, simplePod(ns, "survivor", "exec sleep 3600"))
	createPod(t, simplePod(ns, "doomed", "exec sleep 3600"))
	surv := waitPod(t, ns, "survivor", time.Minute, "Running", running)
	doomed := waitPod(t, ns, "doomed", time.Minute, "Running", running)
	id := containerStatus(surv, "main").ContainerID[len("containerd://"):]

	stopAgent(true)
	t.Cleanup(func() {
		if agentProc == nil {
			_ = startAgent()
			_ = waitNodeReady(time.Minute)
		}
	})
	// With the agent gone the container keeps running, and a pod deleted
	// meanwhile stays in the runtime until the agent returns.
	time.Sleep(2 * time.Second)
	if st, _ := criState(t, id, string(surv.UID)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("container %s is %s after the agent was killed", id, st)
	}
	zero := int64(0)
	if err := client.CoreV1().Pods(ns).Delete(context.Background(), "doomed", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if _, has := criState(t, "", string(doomed.UID)); !has {
		t.Fatal("the deleted pod's sandbox vanished without an agent")
	}

	if err := startAgent(); err != nil {
		t.Fatal(err)
	}
	if err := waitNodeReady(time.Minute); err != nil {
		t.Fatal(err)
	}
	// The survivor is adopted: same container, no restart.
	eventually(t, 30*time.Second, func() error {
		p := getPod(t, ns, "survivor")
		cs := containerStatus(p, "main")
		if cs == nil || cs.ContainerID != "containerd://"+id || cs.RestartCount != 0 || !ready(p) {
			return fmt.Errorf("survivor after restart: %s", describeStatus(p))
		}
		return nil
	})
	if st, _ := criState(t, id, string(surv.UID)); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("container %s is %s after the agent came back", id, st)
	}
	// The pod deleted while the agent was away is cleaned up, and its
	// address goes back to the node's pool.
	eventually(t, 30*time.Second, func() error {
		if _, has := criState(t, "", string(doomed.UID)); has {
			return fmt.Errorf("sandbox of the deleted pod is still there")
		}
		if _, err := os.Stat(filepath.Join(nodeDir, "agent", "cni", "state", "orca", doomed.Status.PodIP)); err == nil {
			return fmt.Errorf("address %s of the deleted pod is still reserved", doomed.Status.PodIP)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(nodeDir, "agent", "cni", "state", "orca", surv.Status.PodIP)); err != nil {
		t.Errorf("the running pod's address %s is not reserved: %v", surv.Status.PodIP, err)
	}
}

func TestContainerdRestartKeepsPods(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	createPod(t, simplePod(ns, "steady", "exec sleep 3600"))
	p := waitPod(t, ns, "steady", time.Minute, "Running", running)
	id := containerStatus(p, "main").ContainerID
	pidFile := filepath.Join(nodeDir, "agent", "containerd", "containerd.pid")
	pid, err := readFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := killPID(pid); err != nil {
		t.Fatal(err)
	}
	// The agent notices and starts containerd again; the pod's container
	// carries on.
	eventually(t, time.Minute, func() error {
		np, err := readFile(pidFile)
		if err != nil || np == pid {
			return fmt.Errorf("containerd not restarted yet")
		}
		st, _, err := tryCRIState(id[len("containerd://"):], string(p.UID))
		if err != nil {
			return err
		}
		if st != runtimeapi.ContainerState_CONTAINER_RUNNING {
			return fmt.Errorf("container is %s", st)
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	got := getPod(t, ns, "steady")
	if cs := containerStatus(got, "main"); cs.ContainerID != id || cs.RestartCount != 0 || got.Status.Phase != v1.PodRunning {
		t.Errorf("after containerd restart: %s", describeStatus(got))
	}
}
