package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

// resizeContainer is a busybox container with the given cpu and memory
// requests and limits ("" leaves one out) and, for memory, a resize
// policy.
func resizeContainer(name, cpuReq, cpuLim, memReq, memLim string, memPolicy v1.ResourceResizeRestartPolicy) v1.Container {
	c := v1.Container{Name: name, Image: busybox, ImagePullPolicy: v1.PullNever, Command: []string{"sh", "-c", "exec sleep 3600"},
		Resources: resizeResources(cpuReq, cpuLim, memReq, memLim)}
	if memPolicy != "" {
		c.ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: memPolicy}}
	}
	return c
}

func resizeResources(cpuReq, cpuLim, memReq, memLim string) v1.ResourceRequirements {
	list := func(cpu, mem string) v1.ResourceList {
		l := v1.ResourceList{}
		if cpu != "" {
			l[v1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[v1.ResourceMemory] = resource.MustParse(mem)
		}
		if len(l) == 0 {
			return nil
		}
		return l
	}
	return v1.ResourceRequirements{Requests: list(cpuReq, memReq), Limits: list(cpuLim, memLim)}
}

// resized waits until the kubelet has actuated the pod's latest
// generation: observed, no resize condition left, ready again.
func resized(t *testing.T, ns, name string) *v1.Pod {
	t.Helper()
	return waitPod(t, ns, name, 2*time.Minute, "the resize actuated", func(p *v1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodResizePending || c.Type == v1.PodResizeInProgress {
				return false
			}
		}
		return p.Status.ObservedGeneration >= p.Generation && ready(p)
	})
}

// cgroupValue reads a container's own cgroup setting as upstream's
// conformance test does, in whichever hierarchy the node has.
func cgroupValue(t *testing.T, ns, pod, container, v1File, v2File string) string {
	t.Helper()
	script := fmt.Sprintf("if [ -e /sys/fs/cgroup/cgroup.controllers ]; then head -n 1 /sys/fs/cgroup/%s; else head -n 1 /sys/fs/cgroup/%s; fi", v2File, v1File)
	return strings.TrimSpace(kubectlOK(t, "", "exec", pod, "-n", ns, "-c", container, "--", "sh", "-c", script))
}

// checkCgroups compares a container's cpu quota and memory limit with
// what its limits give, as upstream's conformance test reads them.
func checkCgroups(t *testing.T, ns, pod, container string, cpuQuota, memLimit int64) {
	t.Helper()
	v2 := strings.TrimSpace(kubectlOK(t, "", "exec", pod, "-n", ns, "-c", container, "--", "sh", "-c", "[ -e /sys/fs/cgroup/cgroup.controllers ] && echo v2 || echo v1")) == "v2"
	wantCPU := strconv.FormatInt(cpuQuota, 10)
	if v2 {
		if cpuQuota <= 0 {
			wantCPU = "max"
		}
		wantCPU += " 100000"
	}
	if got := cgroupValue(t, ns, pod, container, "cpu/cpu.cfs_quota_us", "cpu.max"); got != wantCPU {
		t.Errorf("%s: cpu quota %q, want %q", container, got, wantCPU)
	}
	if memLimit > 0 {
		if got := cgroupValue(t, ns, pod, container, "memory/memory.limit_in_bytes", "memory.max"); got != strconv.FormatInt(memLimit, 10) {
			t.Errorf("%s: memory limit %q, want %d", container, got, memLimit)
		}
	}
}

// checkStatusResources compares a container's reported allocation and
// resources with what the spec asks.
func checkStatusResources(t *testing.T, p *v1.Pod, name string, want v1.ResourceRequirements) {
	t.Helper()
	cs := containerStatus(p, name)
	if cs == nil || cs.Resources == nil {
		t.Errorf("%s: no resources in the status: %+v", name, cs)
		return
	}
	if !equality.Semantic.DeepEqual(cs.AllocatedResources, want.Requests) || !equality.Semantic.DeepEqual(*cs.Resources, want) {
		t.Errorf("%s: allocated %v, resources %v, want %v", name, cs.AllocatedResources, cs.Resources, want)
	}
}

// TestPodResizeInPlace: a pod resized through pods/resize, as the
// conformance specs do it, without being recreated. Containers with the
// default policy are updated in place (their cgroups show it), one whose
// memory policy is RestartContainer restarts once, equivalent values at
// the cgroups' floors (1m/5m) read back as asked, and the status carries
// allocatedResources, resources and the generation observed. A resize the
// node has no room for yet waits as Deferred and goes through once room
// is made.
func TestPodResizeInPlace(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	grace := int64(0)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "resize", Namespace: ns},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyOnFailure, TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{
				resizeContainer("c1", "20m", "30m", "35Mi", "45Mi", ""),
				resizeContainer("c2", "20m", "30m", "35Mi", "45Mi", v1.RestartContainer),
				resizeContainer("c3", "2m", "10m", "", "", ""),
			},
		},
	}
	createPod(t, pod)
	p := waitPod(t, ns, "resize", time.Minute, "Running and Ready", func(p *v1.Pod) bool { return running(p) && ready(p) })
	if p.Generation != 1 || p.Status.QOSClass != v1.PodQOSBurstable {
		t.Fatalf("generation %d, QoS %s", p.Generation, p.Status.QOSClass)
	}
	checkStatusResources(t, p, "c1", resizeResources("20m", "30m", "35Mi", "45Mi"))
	checkCgroups(t, ns, "resize", "c1", 3000, 45<<20)

	// kubectl patch --subresource resize, as a user resizes.
	kubectlOK(t, "", "patch", "pod", "resize", "-n", ns, "--subresource", "resize", "--type", "strategic", "-p",
		`{"spec":{"containers":[
			{"name":"c1","resources":{"requests":{"cpu":"25m","memory":"30Mi"},"limits":{"cpu":"35m","memory":"40Mi"}}},
			{"name":"c2","resources":{"requests":{"memory":"40Mi"},"limits":{"memory":"50Mi"}}},
			{"name":"c3","resources":{"requests":{"cpu":"1m"},"limits":{"cpu":"5m"}}}]}}`)
	p = resized(t, ns, "resize")
	if p.Generation != 2 || p.Status.ObservedGeneration != 2 {
		t.Errorf("generation %d, observed %d", p.Generation, p.Status.ObservedGeneration)
	}
	checkStatusResources(t, p, "c1", resizeResources("25m", "35m", "30Mi", "40Mi"))
	checkStatusResources(t, p, "c2", resizeResources("20m", "30m", "40Mi", "50Mi"))
	checkStatusResources(t, p, "c3", resizeResources("1m", "5m", "", ""))
	for name, restarts := range map[string]int32{"c1": 0, "c2": 1, "c3": 0} {
		if got := containerStatus(p, name).RestartCount; got != restarts {
			t.Errorf("%s restarted %d times, want %d", name, got, restarts)
		}
	}
	checkCgroups(t, ns, "resize", "c1", 3500, 40<<20)
	checkCgroups(t, ns, "resize", "c2", 3000, 50<<20)
	checkCgroups(t, ns, "resize", "c3", 1000, 0)
	if got := cgroupValue(t, ns, "resize", "c1", "cpu/cpu.shares", "cpu.weight"); got == "0" || got == "" {
		t.Errorf("c1 cpu weight %q", got)
	}
	eventually(t, 10*time.Second, func() error {
		evs := events(t, ns, "resize")
		for _, want := range []string{"ResizeStarted: Pod resize started", "ResizeCompleted: Pod resize completed", "Killing: Container c2 resize requires restart"} {
			if !hasEvent(evs, want) {
				return fmt.Errorf("no %q in %v", want, evs)
			}
		}
		return nil
	})

	// Back through the replace endpoint, as the third conformance spec.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.CoreV1().Pods(ns).Get(ctx, "resize", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.Containers[0].Resources = resizeResources("20m", "30m", "35Mi", "45Mi")
		_, err = client.CoreV1().Pods(ns).UpdateResize(ctx, "resize", cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p = resized(t, ns, "resize")
	checkStatusResources(t, p, "c1", resizeResources("20m", "30m", "35Mi", "45Mi"))
	checkCgroups(t, ns, "resize", "c1", 3000, 45<<20)
	if p.Generation != 3 || containerStatus(p, "c1").RestartCount != 0 {
		t.Errorf("generation %d, c1 restarts %d", p.Generation, containerStatus(p, "c1").RestartCount)
	}

	// No room yet: a filler pod holds what the resize needs.
	node, err := client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	allocatable := node.Status.Allocatable.Cpu().MilliValue()
	filler := simplePod(ns, "filler", "exec sleep 3600")
	filler.Spec.Containers[0].Resources = resizeResources("1", "", "", "")
	filler.Spec.TerminationGracePeriodSeconds = &grace
	createPod(t, filler)
	waitPod(t, ns, "filler", time.Minute, "Running", running)
	// The pod then asks 800m less than the node has: deferred beside the
	// filler, taken once the filler goes, whatever little else runs.
	big := fmt.Sprintf("%dm", allocatable-800-21)
	patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"c1","resources":{"requests":{"cpu":%q},"limits":{"cpu":%q}}}]}}`, big, big)
	if _, err := client.CoreV1().Pods(ns).Patch(ctx, "resize", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize"); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, ns, "resize", time.Minute, "the resize deferred", func(p *v1.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodResizePending && c.Reason == v1.PodReasonDeferred && strings.HasPrefix(c.Message, "Node didn't have enough resource: cpu") {
				return true
			}
		}
		return false
	})
	if got := containerStatus(p, "c1").AllocatedResources.Cpu().MilliValue(); got != 20 {
		t.Errorf("a deferred resize was allocated: %dm", got)
	}
	if err := client.CoreV1().Pods(ns).Delete(ctx, "filler", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	p = resized(t, ns, "resize")
	checkStatusResources(t, p, "c1", resizeResources(big, big, "35Mi", "45Mi"))
	quota := resource.MustParse(big)
	checkCgroups(t, ns, "resize", "c1", quota.MilliValue()*100, 45<<20)
}
