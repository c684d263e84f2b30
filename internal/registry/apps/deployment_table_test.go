package apps

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/registry/printers/printerstest"
)

var (
	tableNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tableCol = printerstest.Col
)

type tableColumn = printerstest.Column

func tableAgo(d time.Duration) metav1.Time { return metav1.NewTime(tableNow.Add(-d)) }

func tablePtr[T any](v T) *T { return &v }

func tableTemplate(images ...string) corev1.PodTemplateSpec {
	var cs []corev1.Container
	for i, img := range images {
		cs = append(cs, corev1.Container{Name: string(rune('a' + i)), Image: img})
	}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: cs}}
}

func TestDeploymentTable(t *testing.T) {
	printerstest.CheckColumns(t, deploymentTable, []tableColumn{
		tableCol("Ready", "string", 0), tableCol("Up-to-date", "string", 0), tableCol("Available", "string", 0), tableCol("Age", "string", 0),
		tableCol("Containers", "string", 1), tableCol("Images", "string", 1), tableCol("Selector", "string", 1),
	})
	for _, tc := range []struct {
		name string
		d    appsv1.Deployment
		want []any
	}{
		{
			name: "rolling out",
			d: appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(7 * time.Minute)},
				Spec: appsv1.DeploymentSpec{
					Replicas: tablePtr(int32(3)),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"fe", "be"}},
					}},
					Template: tableTemplate("nginx:1.27", "envoy"),
				},
				Status: appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 1, AvailableReplicas: 2},
			},
			want: []any{"2/3", int64(1), int64(2), "7m", "a,b", "nginx:1.27,envoy", "app=web,tier in (be,fe)"},
		},
		{
			name: "scaled to zero",
			d:    appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: tablePtr(int32(0)), Selector: &metav1.LabelSelector{}}},
			want: []any{"0/0", int64(0), int64(0), "<unknown>", "", "", ""},
		},
		{
			name: "invalid selector",
			d: appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "x", Operator: "Bogus"},
			}}}},
			want: []any{"0/1", int64(0), int64(0), "<unknown>", "", "", "<invalid>"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { printerstest.CheckRow(t, deploymentTable, &tc.d, tableNow, tc.want) })
	}
	if deploymentFields != nil {
		t.Error("deployments have no extra fields upstream")
	}
}

func TestReplicaSetTable(t *testing.T) {
	printerstest.CheckColumns(t, replicasetTable, []tableColumn{
		tableCol("Desired", "integer", 0), tableCol("Current", "integer", 0), tableCol("Ready", "integer", 0), tableCol("Age", "string", 0),
		tableCol("Containers", "string", 1), tableCol("Images", "string", 1), tableCol("Selector", "string", 1),
	})
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(30 * time.Second)},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: tablePtr(int32(4)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "abc"}},
			Template: tableTemplate("nginx"),
		},
		Status: appsv1.ReplicaSetStatus{Replicas: 4, ReadyReplicas: 3},
	}
	printerstest.CheckRow(t, replicasetTable, rs, tableNow, []any{int64(4), int64(4), int64(3), "30s", "a", "nginx", "app=web,pod-template-hash=abc"})
	printerstest.CheckCells(t, replicasetTable, &appsv1.ReplicaSet{}, tableNow, map[string]any{"Selector": "<none>", "Desired": int64(1)})
	if got := replicasetFields(rs); len(got) != 1 || got["status.replicas"] != "4" {
		t.Errorf("fields %v", got)
	}
}

func TestStatefulSetTable(t *testing.T) {
	printerstest.CheckColumns(t, statefulsetTable, []tableColumn{
		tableCol("Ready", "string", 0), tableCol("Age", "string", 0), tableCol("Containers", "string", 1), tableCol("Images", "string", 1),
	})
	ss := &appsv1.StatefulSet{
		Spec:   appsv1.StatefulSetSpec{Replicas: tablePtr(int32(3)), Template: tableTemplate("postgres:17")},
		Status: appsv1.StatefulSetStatus{ReadyReplicas: 3},
	}
	printerstest.CheckRow(t, statefulsetTable, ss, tableNow, []any{"3/3", "<unknown>", "a", "postgres:17"})
}

func TestDaemonSetTable(t *testing.T) {
	printerstest.CheckColumns(t, daemonsetTable, []tableColumn{
		tableCol("Desired", "integer", 0), tableCol("Current", "integer", 0), tableCol("Ready", "integer", 0), tableCol("Up-to-date", "integer", 0),
		tableCol("Available", "integer", 0), tableCol("Node Selector", "string", 0), tableCol("Age", "string", 0),
		tableCol("Containers", "string", 1), tableCol("Images", "string", 1), tableCol("Selector", "string", 1),
	})
	tpl := tableTemplate("fluentd")
	tpl.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: tableAgo(49 * time.Hour)},
		Spec:       appsv1.DaemonSetSpec{Template: tpl, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "fluentd"}}},
		Status: appsv1.DaemonSetStatus{
			DesiredNumberScheduled: 5, CurrentNumberScheduled: 4, NumberReady: 3, UpdatedNumberScheduled: 2, NumberAvailable: 1,
		},
	}
	printerstest.CheckRow(t, daemonsetTable, ds, tableNow, []any{
		int64(5), int64(4), int64(3), int64(2), int64(1), "kubernetes.io/os=linux", "2d1h", "a", "fluentd", "name=fluentd",
	})
	printerstest.CheckCells(t, daemonsetTable, &appsv1.DaemonSet{}, tableNow, map[string]any{"Node Selector": "<none>"})
}

func TestControllerRevisionTable(t *testing.T) {
	printerstest.CheckColumns(t, controllerrevisionTable, []tableColumn{
		tableCol("Controller", "string", 0), tableCol("Revision", "string", 0), tableCol("Age", "string", 0),
	})
	owned := func(apiVersion, kind string, controller bool) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
				{APIVersion: apiVersion, Kind: kind, Name: "web", Controller: tablePtr(controller)},
			}},
			Revision: 3,
		}
	}
	printerstest.CheckRow(t, controllerrevisionTable, owned("apps/v1", "StatefulSet", true), tableNow, []any{"statefulset.apps/web", int64(3), "<unknown>"})
	printerstest.CheckCells(t, controllerrevisionTable, owned("v1", "Pod", true), tableNow, map[string]any{"Controller": "pod/web"})
	printerstest.CheckCells(t, controllerrevisionTable, owned("apps/v1", "DaemonSet", false), tableNow, map[string]any{"Controller": "<none>"})
	printerstest.CheckCells(t, controllerrevisionTable, &appsv1.ControllerRevision{}, tableNow, map[string]any{"Controller": "<none>", "Revision": int64(0)})
}
