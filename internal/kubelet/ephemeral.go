package kubelet

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ephemeralToStart lists, by index, the ephemeral containers that have
// never run. As upstream's, an ephemeral container starts once and is
// never restarted, whether it exits, fails to start its process or its
// sandbox is replaced: any run of it, in any sandbox, counts. Unlike
// regular containers they do not wait for initialization.
func ephemeralToStart(pod *v1.Pod, runs map[string][]container) []int {
	var out []int
	for i, ec := range pod.Spec.EphemeralContainers {
		if len(runs[ec.Name]) == 0 {
			out = append(out, i)
		}
	}
	return out
}

// ephemeralTarget finds the container whose process namespace an
// ephemeral container joins: the current run, in this sandbox, of its
// targetContainerName ("" when it names none). The target must have run:
// upstream refuses to create the container otherwise.
func ephemeralTarget(ec *v1.EphemeralContainer, current map[string][]container) (string, error) {
	if ec.TargetContainerName == "" {
		return "", nil
	}
	runs := current[ec.TargetContainerName]
	if len(runs) == 0 {
		return "", fmt.Errorf("unable to find target container %s", ec.TargetContainerName)
	}
	return runs[0].ID, nil
}

// targetPIDNamespace puts a container into its target's process namespace
// when the pod gives each container its own, as upstream does; a pod
// sharing one namespace (shareProcessNamespace, hostPID) already shows the
// target's processes.
func targetPIDNamespace(ns *runtimeapi.NamespaceOption, target string) {
	if target == "" || ns == nil || ns.Pid != runtimeapi.NamespaceMode_CONTAINER {
		return
	}
	ns.Pid = runtimeapi.NamespaceMode_TARGET
	ns.TargetId = target
}

// findEphemeral returns the pod's ephemeral container of that name.
func findEphemeral(pod *v1.Pod, name string) *v1.EphemeralContainer {
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return &pod.Spec.EphemeralContainers[i]
		}
	}
	return nil
}
