package core

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

var tableNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func tableAgo(d time.Duration) metav1.Time { return metav1.NewTime(tableNow.Add(-d)) }

func tableAgoPtr(d time.Duration) *metav1.Time { t := tableAgo(d); return &t }

// tableCol is a column as upstream declares it: name, type and priority.
type tableCol struct {
	name, typ string
	priority  int32
}

func checkTableColumns(t *testing.T, table *registry.Table, want []tableCol) {
	t.Helper()
	cols := make([]printerstest.Column, len(want))
	for i, c := range want {
		cols[i] = printerstest.Column{Name: c.name, Type: c.typ, Priority: c.priority}
	}
	printerstest.CheckColumns(t, table, cols)
}

func tableRow(t *testing.T, table *registry.Table, obj runtime.Object) []any {
	t.Helper()
	return printerstest.Row(t, table, obj, tableNow)
}

func checkTableCells(t *testing.T, table *registry.Table, obj runtime.Object, want map[string]any) {
	t.Helper()
	printerstest.CheckCells(t, table, obj, tableNow, want)
}

func TestPodColumns(t *testing.T) {
	checkTableColumns(t, podTable, []tableCol{
		{"Ready", "string", 0}, {"Status", "string", 0}, {"Restarts", "string", 0}, {"Age", "string", 0},
		{"IP", "string", 1}, {"Node", "string", 1}, {"Nominated Node", "string", 1}, {"Readiness Gates", "string", 1},
	})
}

func runningStatus(name string, ready bool) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func waitingStatus(name, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

func terminatedStatus(name, reason string, exit, signal int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: exit, Signal: signal}}}
}

func withRestarts(s corev1.ContainerStatus, count int32, finished time.Duration) corev1.ContainerStatus {
	s.RestartCount = count
	s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{FinishedAt: tableAgo(finished)}
	return s
}

func podCondition(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s}
}

func specContainers(names ...string) []corev1.Container {
	out := make([]corev1.Container, len(names))
	for i, n := range names {
		out[i] = corev1.Container{Name: n, Image: n + ":1"}
	}
	return out
}

func TestPodRow(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	sidecarSpec := corev1.Container{Name: "proxy", RestartPolicy: &always}
	started := true

	for _, tc := range []struct {
		name                    string
		pod                     corev1.Pod
		ready, status, restarts string
	}{
		{
			name: "running",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{runningStatus("app", true)}},
			},
			ready: "1/1", status: "Running", restarts: "0",
		},
		{
			name:  "pending without statuses",
			pod:   corev1.Pod{Spec: corev1.PodSpec{Containers: specContainers("a", "b")}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
			ready: "0/2", status: "Pending", restarts: "0",
		},
		{
			name: "one of two ready",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{Containers: specContainers("a", "b")},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{runningStatus("a", true), runningStatus("b", false)}},
			},
			ready: "1/2", status: "Running", restarts: "0",
		},
		{
			name: "container creating",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{waitingStatus("app", "ContainerCreating")}},
			},
			ready: "0/1", status: "ContainerCreating", restarts: "0",
		},
		{
			name: "crash loop with last restart",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
					withRestarts(waitingStatus("app", "CrashLoopBackOff"), 3, 2*time.Minute),
				}},
			},
			ready: "0/1", status: "CrashLoopBackOff", restarts: "3 (2m ago)",
		},
		{
			name: "restarts without known termination",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
					func() corev1.ContainerStatus { s := runningStatus("app", true); s.RestartCount = 5; return s }(),
				}},
			},
			ready: "1/1", status: "Running", restarts: "5",
		},
		{
			name: "restarts summed, latest termination wins",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{Containers: specContainers("a", "b")},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
					withRestarts(runningStatus("a", true), 1, 3*time.Hour), withRestarts(runningStatus("b", true), 2, 45*time.Second),
				}},
			},
			ready: "2/2", status: "Running", restarts: "3 (45s ago)",
		},
		{
			name: "first init container running",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{InitContainers: specContainers("init"), Containers: specContainers("app")},
				Status: corev1.PodStatus{
					Phase:                 corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{runningStatus("init", false)},
					ContainerStatuses:     []corev1.ContainerStatus{waitingStatus("app", "PodInitializing")},
				},
			},
			ready: "0/1", status: "Init:0/1", restarts: "0",
		},
		{
			name: "second init container waiting on PodInitializing",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{InitContainers: specContainers("i1", "i2"), Containers: specContainers("app")},
				Status: corev1.PodStatus{
					Phase:                 corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{terminatedStatus("i1", "Completed", 0, 0), waitingStatus("i2", "PodInitializing")},
				},
			},
			ready: "0/1", status: "Init:1/2", restarts: "0",
		},
		{
			name: "init crash loop counts init restarts",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{InitContainers: specContainers("init"), Containers: specContainers("app")},
				Status: corev1.PodStatus{
					Phase:                 corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{withRestarts(waitingStatus("init", "CrashLoopBackOff"), 4, 10*time.Minute)},
					ContainerStatuses:     []corev1.ContainerStatus{waitingStatus("app", "PodInitializing")},
				},
			},
			ready: "0/1", status: "Init:CrashLoopBackOff", restarts: "4 (10m ago)",
		},
		{
			name: "init container failed with reason",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{InitContainers: specContainers("init"), Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodFailed, InitContainerStatuses: []corev1.ContainerStatus{terminatedStatus("init", "Error", 1, 0)}},
			},
			ready: "0/1", status: "Init:Error", restarts: "0",
		},
		{
			name: "init container failed with exit code only",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{InitContainers: specContainers("init"), Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{terminatedStatus("init", "", 2, 0)}},
			},
			ready: "0/1", status: "Init:ExitCode:2", restarts: "0",
		},
		{
			name: "init container killed by signal",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{InitContainers: specContainers("init"), Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{terminatedStatus("init", "", 137, 9)}},
			},
			ready: "0/1", status: "Init:Signal:9", restarts: "0",
		},
		{
			name: "init done, app still initializing",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{InitContainers: specContainers("init"), Containers: specContainers("app")},
				Status: corev1.PodStatus{
					Phase:                 corev1.PodPending,
					Conditions:            []corev1.PodCondition{podCondition(corev1.PodInitialized, corev1.ConditionTrue)},
					InitContainerStatuses: []corev1.ContainerStatus{withRestarts(terminatedStatus("init", "Completed", 0, 0), 2, time.Hour)},
					ContainerStatuses:     []corev1.ContainerStatus{waitingStatus("app", "PodInitializing")},
				},
			},
			// Finished init containers' restarts are no longer counted.
			ready: "0/1", status: "PodInitializing", restarts: "0",
		},
		{
			name: "completed",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{Containers: specContainers("job")},
				Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{terminatedStatus("job", "Completed", 0, 0)}},
			},
			ready: "0/1", status: "Completed", restarts: "0",
		},
		{
			name: "one completed, one running, pod ready",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{Containers: specContainers("a", "b")},
				Status: corev1.PodStatus{
					Phase:             corev1.PodRunning,
					Conditions:        []corev1.PodCondition{podCondition(corev1.PodReady, corev1.ConditionTrue)},
					ContainerStatuses: []corev1.ContainerStatus{terminatedStatus("a", "Completed", 0, 0), runningStatus("b", true)},
				},
			},
			ready: "1/2", status: "Running", restarts: "0",
		},
		{
			name: "one completed, one running, pod not ready",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{Containers: specContainers("a", "b")},
				Status: corev1.PodStatus{
					Phase:             corev1.PodRunning,
					ContainerStatuses: []corev1.ContainerStatus{terminatedStatus("a", "Completed", 0, 0), runningStatus("b", true)},
				},
			},
			ready: "1/2", status: "NotReady", restarts: "0",
		},
		{
			name: "terminated without reason",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{terminatedStatus("app", "", 3, 0)}},
			},
			ready: "0/1", status: "ExitCode:3", restarts: "0",
		},
		{
			name: "terminated by signal",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{terminatedStatus("app", "", 143, 15)}},
			},
			ready: "0/1", status: "Signal:15", restarts: "0",
		},
		{
			name: "first container's state wins",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{Containers: specContainers("a", "b")},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
					waitingStatus("a", "ImagePullBackOff"), waitingStatus("b", "ErrImagePull"),
				}},
			},
			ready: "0/2", status: "ImagePullBackOff", restarts: "0",
		},
		{
			name: "evicted",
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"},
			},
			ready: "0/1", status: "Evicted", restarts: "0",
		},
		{
			name: "scheduling gated",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{Containers: specContainers("app")},
				Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
					{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated},
				}},
			},
			ready: "0/1", status: "SchedulingGated", restarts: "0",
		},
		{
			name: "terminating",
			pod: corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: tableAgoPtr(time.Second)},
				Spec:       corev1.PodSpec{Containers: specContainers("app")},
				Status:     corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{runningStatus("app", true)}},
			},
			ready: "1/1", status: "Terminating", restarts: "0",
		},
		{
			name: "deleted after completion stays completed",
			pod: corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: tableAgoPtr(time.Second)},
				Spec:       corev1.PodSpec{Containers: specContainers("job")},
				Status:     corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{terminatedStatus("job", "Completed", 0, 0)}},
			},
			ready: "0/1", status: "Completed", restarts: "0",
		},
		{
			name: "node lost",
			pod: corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: tableAgoPtr(time.Second)},
				Spec:       corev1.PodSpec{Containers: specContainers("app")},
				Status:     corev1.PodStatus{Phase: corev1.PodRunning, Reason: "NodeLost", ContainerStatuses: []corev1.ContainerStatus{runningStatus("app", true)}},
			},
			ready: "1/1", status: "Unknown", restarts: "0",
		},
		{
			name: "sidecar counts as a container and its restarts stay",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init"}, sidecarSpec}, Containers: specContainers("app")},
				Status: corev1.PodStatus{
					Phase:      corev1.PodRunning,
					Conditions: []corev1.PodCondition{podCondition(corev1.PodInitialized, corev1.ConditionTrue), podCondition(corev1.PodReady, corev1.ConditionTrue)},
					InitContainerStatuses: []corev1.ContainerStatus{
						withRestarts(terminatedStatus("init", "Completed", 0, 0), 7, time.Minute),
						func() corev1.ContainerStatus {
							s := withRestarts(runningStatus("proxy", true), 1, 20*time.Minute)
							s.Started = &started
							return s
						}(),
					},
					ContainerStatuses: []corev1.ContainerStatus{runningStatus("app", true)},
				},
			},
			ready: "2/2", status: "Running", restarts: "1 (20m ago)",
		},
		{
			name: "sidecar not started yet blocks initialization",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{InitContainers: []corev1.Container{sidecarSpec}, Containers: specContainers("app")},
				Status: corev1.PodStatus{
					Phase:                 corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{runningStatus("proxy", false)},
				},
			},
			ready: "0/2", status: "Init:0/1", restarts: "0",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkTableCells(t, podTable, &tc.pod, map[string]any{"Ready": tc.ready, "Status": tc.status, "Restarts": tc.restarts})
		})
	}
}

func TestPodWideCells(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(3 * 24 * time.Hour)},
		Spec: corev1.PodSpec{
			NodeName:       "node-1",
			Containers:     specContainers("app"),
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "a"}, {ConditionType: "b"}, {ConditionType: "c"}},
		},
		Status: corev1.PodStatus{
			PodIPs:            []corev1.PodIP{{IP: "10.0.0.7"}, {IP: "fd00::7"}},
			NominatedNodeName: "node-2",
			Conditions:        []corev1.PodCondition{podCondition("a", corev1.ConditionTrue), podCondition("b", corev1.ConditionFalse)},
		},
	}
	checkTableCells(t, podTable, pod, map[string]any{
		"Age": "3d", "IP": "10.0.0.7", "Node": "node-1", "Nominated Node": "node-2", "Readiness Gates": "1/3",
	})

	pod = &corev1.Pod{Status: corev1.PodStatus{PodIP: "10.0.0.8", PodIPs: []corev1.PodIP{{IP: "10.0.0.9"}}}}
	checkTableCells(t, podTable, pod, map[string]any{
		"Age": "<unknown>", "IP": "10.0.0.8", "Node": "<none>", "Nominated Node": "<none>", "Readiness Gates": "<none>",
	})
	checkTableCells(t, podTable, &corev1.Pod{}, map[string]any{"IP": "<none>", "Ready": "0/0", "Status": ""})
}

func TestPodFields(t *testing.T) {
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{
			NodeName: "n1", RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler",
			ServiceAccountName: "sa", HostNetwork: true,
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.1.1.1"}}, NominatedNodeName: "n2"},
	}
	want := fields.Set{
		"spec.nodeName": "n1", "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
		"spec.serviceAccountName": "sa", "spec.hostNetwork": "true", "status.phase": "Running",
		"status.podIP": "10.1.1.1", "status.nominatedNodeName": "n2",
	}
	if got := podFields(pod); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := podFields(&corev1.Pod{})["spec.hostNetwork"]; got != "false" {
		t.Errorf("hostNetwork = %q", got)
	}
}
