package scheduler

import (
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orca-project/orca/internal/scheduler/explain"
)

func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// responsible reports whether the pod waits for this scheduler: one of
// its profiles serves the pod's schedulerName. A pod with scheduling
// gates waits for someone else first; removing the last gate is a spec
// update, which queues it.
func (s *Scheduler) responsible(p *v1.Pod) bool {
	return p.Spec.NodeName == "" && s.profileFor(p) != nil && !terminal(p) && p.DeletionTimestamp == nil &&
		len(p.Spec.SchedulingGates) == 0
}

func asPod(obj any) *v1.Pod {
	switch o := obj.(type) {
	case *v1.Pod:
		return o
	case cache.DeletedFinalStateUnknown:
		p, _ := o.Obj.(*v1.Pod)
		return p
	}
	return nil
}

func asNode(obj any) *v1.Node {
	switch o := obj.(type) {
	case *v1.Node:
		return o
	case cache.DeletedFinalStateUnknown:
		n, _ := o.Obj.(*v1.Node)
		return n
	}
	return nil
}

// addHandlers keeps the cache and the queue current. Bound pods feed the
// cache; pending pods feed the queue; anything that frees room or adds
// nodes gives parked pods another chance.
func (s *Scheduler) addHandlers(pods, nodes, namespaces cache.SharedIndexInformer) error {
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			p := asPod(obj)
			switch {
			case p == nil:
			case p.Spec.NodeName != "" && !terminal(p):
				s.cache.AddPod(p)
			case s.responsible(p):
				s.queue.Add(p)
				s.trackNomination(p)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, p := asPod(oldObj), asPod(newObj)
			if p == nil || old == nil {
				return
			}
			switch {
			case p.Spec.NodeName != "":
				if old.Spec.NodeName == "" {
					s.queue.Delete(p.UID)
					s.cache.RemoveNomination(p.UID)
				}
				if terminal(p) {
					// A finished pod releases its resources.
					s.cache.RemovePod(p.UID)
					s.queue.MoveAllUnschedulable()
				} else {
					s.cache.UpdatePod(p)
				}
			case s.responsible(p):
				// Status updates written by the scheduler itself come back
				// here; only a change to the spec or labels is news.
				if !reflect.DeepEqual(old.Spec, p.Spec) || !reflect.DeepEqual(old.Labels, p.Labels) ||
					old.Annotations[explain.RequestAnnotation] != p.Annotations[explain.RequestAnnotation] {
					s.queue.Add(p)
				}
				s.trackNomination(p)
			default:
				s.queue.Delete(p.UID)
				s.cache.RemoveNomination(p.UID)
			}
		},
		DeleteFunc: func(obj any) {
			p := asPod(obj)
			if p == nil {
				return
			}
			s.queue.Delete(p.UID)
			s.cache.RemovePod(p.UID)
			s.cache.RemoveNomination(p.UID)
			if p.Spec.NodeName != "" {
				s.queue.MoveAllUnschedulable()
			}
		},
	})
	if err != nil {
		return fmt.Errorf("scheduler pod handler: %w", err)
	}
	_, err = nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n := asNode(obj); n != nil {
				s.cache.AddNode(n)
				s.queue.MoveAllUnschedulable()
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, n := asNode(oldObj), asNode(newObj)
			if n == nil || old == nil {
				return
			}
			s.cache.UpdateNode(n)
			// Heartbeats change only conditions and timestamps; retrying
			// every parked pod on each of them would be a busy loop.
			if schedulingRelevant(old, n) {
				s.queue.MoveAllUnschedulable()
			}
		},
		DeleteFunc: func(obj any) {
			if n := asNode(obj); n != nil {
				s.cache.RemoveNode(n.Name)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("scheduler node handler: %w", err)
	}
	_, err = namespaces.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if ns, ok := obj.(*v1.Namespace); ok {
				s.cache.SetNamespace(ns.Name, nonNil(ns.Labels))
			}
		},
		UpdateFunc: func(_, obj any) {
			if ns, ok := obj.(*v1.Namespace); ok {
				s.cache.SetNamespace(ns.Name, nonNil(ns.Labels))
			}
		},
		DeleteFunc: func(obj any) {
			if ns, ok := obj.(*v1.Namespace); ok {
				s.cache.SetNamespace(ns.Name, nil)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("scheduler namespace handler: %w", err)
	}
	return nil
}

// trackNomination reserves the room of a pending pod that carries
// status.nominatedNodeName (written by this scheduler, perhaps in an
// earlier life). An update without one keeps what the scheduler
// nominated in memory: the status patch may not have arrived yet.
// Nominations end when the pod binds, goes away or is assumed.
func (s *Scheduler) trackNomination(p *v1.Pod) {
	nn := p.Status.NominatedNodeName
	if nn == "" || s.cache.NominatedNode(p.UID) == nn || s.cache.IsAssumed(p.UID) {
		return
	}
	s.cache.Nominate(p, nn)
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func schedulingRelevant(old, n *v1.Node) bool {
	return old.Spec.Unschedulable != n.Spec.Unschedulable ||
		!reflect.DeepEqual(old.Labels, n.Labels) ||
		!reflect.DeepEqual(old.Spec.Taints, n.Spec.Taints) ||
		!reflect.DeepEqual(old.Status.Allocatable, n.Status.Allocatable)
}
