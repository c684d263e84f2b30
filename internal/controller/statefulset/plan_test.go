package statefulset

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func testSet(replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "set-uid"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			ServiceName:         "nginx",
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type:          appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0)},
			},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "nginx", Image: "nginx:1"}}},
			},
		},
	}
}

// pod is web-ORDINAL as the cache shows it. state is one of ready,
// unready (running, its readiness probe failing), pending, failed,
// failed-deleted (failed and being deleted), succeeded, terminating,
// fresh (ready only now).
func pod(set *appsv1.StatefulSet, ordinal int, revision, state string) *v1.Pod {
	p := newPod(set, ordinal)
	p.UID = types.UID(fmt.Sprintf("uid-%d", ordinal))
	p.Labels[RevisionLabel] = revision
	readySince := metav1.NewTime(now.Add(-time.Hour))
	switch state {
	case "ready", "terminating", "fresh":
		p.Status.Phase = v1.PodRunning
		if state == "fresh" {
			readySince = metav1.NewTime(now)
		}
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: readySince}}
		if state == "terminating" {
			p.DeletionTimestamp = &readySince
		}
	case "unready":
		p.Status.Phase = v1.PodRunning
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: readySince}}
	case "pending":
		p.Status.Phase = v1.PodPending
	case "failed", "failed-deleted":
		p.Status.Phase = v1.PodFailed
		if state == "failed-deleted" {
			p.DeletionTimestamp = &readySince
		}
	case "succeeded":
		p.Status.Phase = v1.PodSucceeded
	default:
		panic(state)
	}
	return p
}

// describe renders actions as "create web-1@rev, update web-2".
func describe(acts []action) string {
	var s []string
	for _, a := range acts {
		d := a.Kind.String() + " " + a.Pod.Name
		if a.Kind == actCreate {
			d += "@" + podRevision(a.Pod)
		}
		s = append(s, d)
	}
	return strings.Join(s, ", ")
}

func TestPlan(t *testing.T) {
	parallel := func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement }
	for _, tc := range []struct {
		name     string
		replicas int32
		mutate   func(*appsv1.StatefulSet)
		pods     func(*appsv1.StatefulSet) []*v1.Pod
		claims   []*v1.PersistentVolumeClaim
		want     string
	}{
		{name: "ordered: first pod only", replicas: 3, want: "create web-0@b"},
		{name: "ordered: waits for a pending predecessor", replicas: 3,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod { return []*v1.Pod{pod(s, 0, "b", "pending")} }},
		{name: "ordered: next once the predecessor is ready", replicas: 3,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod { return []*v1.Pod{pod(s, 0, "b", "ready")} }, want: "create web-1@b"},
		{name: "ordered: fills a hole before anything else", replicas: 3,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "ready"), pod(s, 2, "b", "ready")}
			}, want: "create web-1@b"},
		{name: "ordered: waits for minReadySeconds", replicas: 3,
			mutate: func(s *appsv1.StatefulSet) { s.Spec.MinReadySeconds = 10 },
			pods:   func(s *appsv1.StatefulSet) []*v1.Pod { return []*v1.Pod{pod(s, 0, "b", "fresh")} }},
		{name: "parallel: all at once", replicas: 3, mutate: parallel, want: "create web-0@b, create web-1@b, create web-2@b"},
		{name: "parallel: does not wait for pending pods", replicas: 2, mutate: parallel,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod { return []*v1.Pod{pod(s, 0, "b", "pending")} }, want: "create web-1@b"},
		{name: "ordered scale down: highest first, one at a time", replicas: 1,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "ready"), pod(s, 1, "b", "ready"), pod(s, 2, "b", "ready")}
			}, want: "scale down web-2"},
		{name: "ordered scale down: waits for the terminating pod", replicas: 1,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "ready"), pod(s, 1, "b", "ready"), pod(s, 2, "b", "terminating")}
			}},
		{name: "ordered scale down: waits for an unready replica", replicas: 1,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "pending"), pod(s, 1, "b", "ready")}
			}},
		{name: "ordered scale down: an unhealthy condemned pod goes first", replicas: 1,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "ready"), pod(s, 1, "b", "ready"), pod(s, 2, "b", "pending")}
			}, want: "scale down web-2"},
		// upstream's "Scaling should happen in predictable order and halt
		// if any stateful pod is unhealthy": readiness broken by a probe.
		{name: "ordered scale up: halts while a pod is unready", replicas: 3,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod { return []*v1.Pod{pod(s, 0, "b", "unready")} }},
		{name: "ordered scale down: halts while every pod is unready", replicas: 0,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "unready"), pod(s, 1, "b", "unready"), pod(s, 2, "b", "unready")}
			}},
		{name: "ordered scale down: an unready pod above a lower unready one waits", replicas: 1,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "ready"), pod(s, 1, "b", "unready"), pod(s, 2, "b", "unready")}
			}},
		{name: "ordered scale down: halts while a remaining replica is unready", replicas: 1,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "unready"), pod(s, 1, "b", "ready")}
			}},
		{name: "ordered scale down: healthy again, highest first", replicas: 0,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "ready"), pod(s, 1, "b", "ready"), pod(s, 2, "b", "ready")}
			}, want: "scale down web-2"},
		{name: "parallel scale down: does not halt for unready pods", replicas: 0, mutate: parallel,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "unready"), pod(s, 1, "b", "unready")}
			}, want: "scale down web-1, scale down web-0"},
		{name: "parallel scale down", replicas: 1, mutate: parallel,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "ready"), pod(s, 1, "b", "ready"), pod(s, 2, "b", "pending")}
			}, want: "scale down web-2, scale down web-1"},
		{name: "failed pod is recreated", replicas: 2,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "failed"), pod(s, 1, "b", "ready")}
			}, want: "recreate web-0"},
		{name: "failed pod being deleted: waits for it to go", replicas: 2,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "failed-deleted"), pod(s, 1, "b", "ready")}
			}},
		{name: "parallel: a failed pod being deleted is waited for, the rest goes on", replicas: 2, mutate: parallel,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod { return []*v1.Pod{pod(s, 0, "b", "failed-deleted")} },
			want: "create web-1@b"},
		{name: "a failed pod is recreated before its successors are made", replicas: 3,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "ready"), pod(s, 1, "b", "failed")}
			},
			want: "recreate web-1"},
		{name: "succeeded pod is recreated", replicas: 1,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod { return []*v1.Pod{pod(s, 0, "b", "succeeded")} }, want: "recreate web-0"},
		{name: "rolling update: highest ordinal first", replicas: 3,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "a", "ready"), pod(s, 1, "a", "ready"), pod(s, 2, "a", "ready")}
			}, want: "update web-2"},
		{name: "rolling update: next once the updated pod is ready", replicas: 3,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "a", "ready"), pod(s, 1, "a", "ready"), pod(s, 2, "b", "ready")}
			}, want: "update web-1"},
		{name: "rolling update: waits for the updated pod", replicas: 3, mutate: parallel,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "a", "ready"), pod(s, 1, "a", "ready"), pod(s, 2, "b", "pending")}
			}},
		{name: "rolling update: a deleted pod comes back at the update revision", replicas: 3,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "a", "ready"), pod(s, 1, "a", "ready")}
			}, want: "create web-2@b"},
		{name: "rolling update: partition holds lower ordinals", replicas: 3,
			mutate: func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](2) },
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "a", "ready"), pod(s, 1, "a", "ready"), pod(s, 2, "b", "ready")}
			}},
		{name: "rolling update: below the partition a pod comes back current", replicas: 3,
			mutate: func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](2) },
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 1, "a", "ready"), pod(s, 2, "b", "ready")}
			}, want: "create web-0@a"},
		{name: "scale down before update", replicas: 2,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "a", "ready"), pod(s, 1, "a", "ready"), pod(s, 2, "a", "ready")}
			}, want: "scale down web-2"},
		{name: "OnDelete: no update", replicas: 2,
			mutate: func(s *appsv1.StatefulSet) {
				s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
			},
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "a", "ready"), pod(s, 1, "a", "ready")}
			}},
		{name: "OnDelete: a deleted pod comes back at the update revision", replicas: 2,
			mutate: func(s *appsv1.StatefulSet) {
				s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
			},
			pods: func(s *appsv1.StatefulSet) []*v1.Pod { return []*v1.Pod{pod(s, 0, "a", "ready")} }, want: "create web-1@b"},
		{name: "set being deleted: nothing", replicas: 2,
			mutate: func(s *appsv1.StatefulSet) { s.DeletionTimestamp = &metav1.Time{Time: now} }},
		{name: "wrong identity label is repaired", replicas: 1,
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				p := pod(s, 0, "b", "ready")
				delete(p.Labels, PodIndexLabel)
				return []*v1.Pod{p}
			}, want: "repair web-0"},
		{name: "stale claim: waits for the garbage collector", replicas: 2,
			mutate: func(s *appsv1.StatefulSet) {
				s.Spec.VolumeClaimTemplates = []v1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "www"}}}
				s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
			},
			pods: func(s *appsv1.StatefulSet) []*v1.Pod { return []*v1.Pod{pod(s, 0, "b", "ready")} },
			claims: []*v1.PersistentVolumeClaim{
				{ObjectMeta: metav1.ObjectMeta{Name: "www-web-0"}},
				{ObjectMeta: metav1.ObjectMeta{Name: "www-web-1", OwnerReferences: []metav1.OwnerReference{{Kind: "Pod", Name: "web-1", UID: "gone"}}}},
			}},
		{name: "scale down with whenScaled Delete hands the claim to the pod first", replicas: 1,
			mutate: func(s *appsv1.StatefulSet) {
				s.Spec.VolumeClaimTemplates = []v1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "www"}}}
				s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
			},
			pods: func(s *appsv1.StatefulSet) []*v1.Pod {
				return []*v1.Pod{pod(s, 0, "b", "ready"), pod(s, 1, "b", "ready")}
			},
			claims: []*v1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "www-web-0"}}, {ObjectMeta: metav1.ObjectMeta{Name: "www-web-1"}}},
			want:   "repair web-1, scale down web-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := testSet(tc.replicas)
			if tc.mutate != nil {
				tc.mutate(set)
			}
			var pods []*v1.Pod
			if tc.pods != nil {
				pods = tc.pods(set)
			}
			claims := map[string]*v1.PersistentVolumeClaim{}
			for _, c := range tc.claims {
				claims[c.Name] = c
			}
			acts, _ := plan(world{Set: set, CurrentSet: set, UpdateSet: set, CurrentRev: "a", UpdateRev: "b", Pods: pods, Claims: claims, Now: now})
			if got := describe(acts); got != tc.want {
				t.Fatalf("actions %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPlanStatus(t *testing.T) {
	set := testSet(3)
	set.Spec.MinReadySeconds = 10
	pods := []*v1.Pod{pod(set, 0, "a", "ready"), pod(set, 1, "b", "fresh"), pod(set, 2, "b", "terminating"), pod(set, 3, "a", "pending")}
	_, st := plan(world{Set: set, CurrentSet: set, UpdateSet: set, CurrentRev: "a", UpdateRev: "b", Pods: pods, Now: now})
	want := appsv1.StatefulSetStatus{Replicas: 4, ReadyReplicas: 3, AvailableReplicas: 2, CurrentReplicas: 2, UpdatedReplicas: 1, CurrentRevision: "a", UpdateRevision: "b"}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("status %+v, want %+v", st, want)
	}
}

func TestCompleteRollingUpdate(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   appsv1.StatefulSetStatus
		want string
	}{
		{"all updated and ready", appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 3, CurrentRevision: "a", UpdateRevision: "b"}, "b"},
		{"one not ready", appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 3, CurrentRevision: "a", UpdateRevision: "b"}, "a"},
		{"one not updated", appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 2, CurrentRevision: "a", UpdateRevision: "b"}, "a"},
	} {
		st := tc.st
		completeRollingUpdate(testSet(3), &st)
		if st.CurrentRevision != tc.want {
			t.Errorf("%s: current revision %q, want %q", tc.name, st.CurrentRevision, tc.want)
		}
	}
}
