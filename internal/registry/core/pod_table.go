package core

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers"
)

// podTable prints pods as upstream's `kubectl get` does.
var podTable = &registry.Table{
	Columns: []metav1.TableColumnDefinition{
		{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
		{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
		{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
		printers.AgeColumn(),
		{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
		{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
		{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
	},
	Row: registry.TypedRow(podRow),
}

// podFields lists the fields a field selector over pods may name.
var podFields = registry.TypedFields(func(pod *corev1.Pod) fields.Set {
	return fields.Set{
		"spec.nodeName":            pod.Spec.NodeName,
		"spec.restartPolicy":       string(pod.Spec.RestartPolicy),
		"spec.schedulerName":       pod.Spec.SchedulerName,
		"spec.serviceAccountName":  pod.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(pod.Spec.HostNetwork),
		"status.phase":             string(pod.Status.Phase),
		"status.podIP":             podIP(pod),
		"status.nominatedNodeName": pod.Status.NominatedNodeName,
	}
})

// nodeUnreachablePodReason is the status reason the node lifecycle
// controller sets on pods of a node it has lost (k8s.io/kubernetes
// pkg/util/node.NodeUnreachablePodReason).
const nodeUnreachablePodReason = "NodeLost"

// podRow follows upstream's printPod step for step: the STATUS column is a
// heuristic users and scripts have learned to read, so every branch and its
// order matter.
func podRow(pod *corev1.Pod, now time.Time) []any {
	restarts := 0
	sidecarRestarts := 0
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	var lastRestartDate, lastSidecarRestartDate metav1.Time

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	initContainers := make(map[string]*corev1.Container, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		initContainers[c.Name] = c
		// Sidecars keep running next to the app containers, so they count
		// towards READY's denominator.
		if isRestartableInitContainer(c) {
			totalContainers++
		}
	}

	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		container := pod.Status.InitContainerStatuses[i]
		restarts += int(container.RestartCount)
		if t := container.LastTerminationState.Terminated; t != nil && lastRestartDate.Before(&t.FinishedAt) {
			lastRestartDate = t.FinishedAt
		}
		sidecar := isRestartableInitContainer(initContainers[container.Name])
		if sidecar {
			sidecarRestarts += int(container.RestartCount)
			if t := container.LastTerminationState.Terminated; t != nil && lastSidecarRestartDate.Before(&t.FinishedAt) {
				lastSidecarRestartDate = t.FinishedAt
			}
		}
		switch {
		case container.State.Terminated != nil && container.State.Terminated.ExitCode == 0:
			continue
		case sidecar && container.Started != nil && *container.Started:
			if container.Ready {
				readyContainers++
			}
			continue
		case container.State.Terminated != nil:
			if container.State.Terminated.Reason == "" {
				if container.State.Terminated.Signal != 0 {
					reason = fmt.Sprintf("Init:Signal:%d", container.State.Terminated.Signal)
				} else {
					reason = fmt.Sprintf("Init:ExitCode:%d", container.State.Terminated.ExitCode)
				}
			} else {
				reason = "Init:" + container.State.Terminated.Reason
			}
			initializing = true
		case container.State.Waiting != nil && container.State.Waiting.Reason != "" && container.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + container.State.Waiting.Reason
			initializing = true
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
			initializing = true
		}
		// The first init container that has not finished decides the status.
		break
	}

	if !initializing || isPodInitialized(pod) {
		// Once the pod is initialised only sidecar restarts remain relevant
		// among init containers; finished init containers are history.
		restarts = sidecarRestarts
		lastRestartDate = lastSidecarRestartDate
		hasRunning := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			container := pod.Status.ContainerStatuses[i]
			restarts += int(container.RestartCount)
			if t := container.LastTerminationState.Terminated; t != nil && lastRestartDate.Before(&t.FinishedAt) {
				lastRestartDate = t.FinishedAt
			}
			switch {
			case container.State.Waiting != nil && container.State.Waiting.Reason != "":
				reason = container.State.Waiting.Reason
			case container.State.Terminated != nil && container.State.Terminated.Reason != "":
				reason = container.State.Terminated.Reason
			case container.State.Terminated != nil:
				if container.State.Terminated.Signal != 0 {
					reason = fmt.Sprintf("Signal:%d", container.State.Terminated.Signal)
				} else {
					reason = fmt.Sprintf("ExitCode:%d", container.State.Terminated.ExitCode)
				}
			case container.Ready && container.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}
		// A container that completed while others still run does not make
		// the pod "Completed".
		if reason == "Completed" && hasRunning {
			if hasPodReadyCondition(pod.Status.Conditions) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		reason = "Terminating"
	}

	restartsStr := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestartDate.IsZero() {
		restartsStr = fmt.Sprintf("%d (%s ago)", restarts, printers.TranslateTimestampSince(lastRestartDate, now))
	}

	ip := podIP(pod)
	if ip == "" {
		ip = "<none>"
	}
	nodeName := pod.Spec.NodeName
	if nodeName == "" {
		nodeName = "<none>"
	}
	nominatedNodeName := pod.Status.NominatedNodeName
	if nominatedNodeName == "" {
		nominatedNodeName = "<none>"
	}
	readinessGates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		trueConditions := 0
		for _, gate := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == gate.ConditionType {
					if c.Status == corev1.ConditionTrue {
						trueConditions++
					}
					break
				}
			}
		}
		readinessGates = fmt.Sprintf("%d/%d", trueConditions, len(pod.Spec.ReadinessGates))
	}

	return []any{
		fmt.Sprintf("%d/%d", readyContainers, totalContainers),
		reason,
		restartsStr,
		printers.TranslateTimestampSince(pod.CreationTimestamp, now),
		ip,
		nodeName,
		nominatedNodeName,
		readinessGates,
	}
}

// podIP is the pod's primary IP as upstream's internal type sees it: v1's
// singular podIP wins over podIPs[0] when a client set both differently.
func podIP(pod *corev1.Pod) string {
	if pod.Status.PodIP != "" {
		return pod.Status.PodIP
	}
	if len(pod.Status.PodIPs) > 0 {
		return pod.Status.PodIPs[0].IP
	}
	return ""
}

func isRestartableInitContainer(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func hasPodReadyCondition(conditions []corev1.PodCondition) bool {
	for _, c := range conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// isPodInitialized reports the first Initialized condition only, as
// upstream's isPodInitializedConditionTrue does.
func isPodInitialized(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodInitialized {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
