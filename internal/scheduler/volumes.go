package scheduler

import (
	"context"
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orca-project/orca/internal/scheduler/plugins/volumebinding"
)

// volumeListers serve the VolumeBinding plugin from the informers' caches.
type volumeListers struct {
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
}

func newVolumeListers(f informers.SharedInformerFactory) *volumeListers {
	return &volumeListers{
		claims:  f.Core().V1().PersistentVolumeClaims().Lister(),
		volumes: f.Core().V1().PersistentVolumes().Lister(),
		classes: f.Storage().V1().StorageClasses().Lister(),
	}
}

func (l *volumeListers) Claim(ns, name string) (*v1.PersistentVolumeClaim, error) {
	return l.claims.PersistentVolumeClaims(ns).Get(name)
}

func (l *volumeListers) Volume(name string) (*v1.PersistentVolume, error) {
	return l.volumes.Get(name)
}

func (l *volumeListers) Volumes() ([]*v1.PersistentVolume, error) {
	return l.volumes.List(labels.Everything())
}

func (l *volumeListers) Class(name string) (*storagev1.StorageClass, error) {
	return l.classes.Get(name)
}

// addVolumeHandlers gives parked pods another chance when storage
// changes: a claim created or bound, a volume created or released, a
// class created. Deletions only take room away.
func (s *Scheduler) addVolumeHandlers(f informers.SharedInformerFactory) error {
	move := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.queue.MoveAllUnschedulable() },
		UpdateFunc: func(any, any) { s.queue.MoveAllUnschedulable() },
	}
	for name, inf := range map[string]cache.SharedIndexInformer{
		"persistentvolumeclaim": f.Core().V1().PersistentVolumeClaims().Informer(),
		"persistentvolume":      f.Core().V1().PersistentVolumes().Informer(),
	} {
		if _, err := inf.AddEventHandler(move); err != nil {
			return fmt.Errorf("scheduler %s handler: %w", name, err)
		}
	}
	if _, err := f.Storage().V1().StorageClasses().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { s.queue.MoveAllUnschedulable() },
	}); err != nil {
		return fmt.Errorf("scheduler storageclass handler: %w", err)
	}
	return nil
}

// volumeBindTimeout is how long a pod waits for its claims to be bound
// or provisioned before it is placed again, upstream's bindTimeoutSeconds.
const volumeBindTimeout = 10 * time.Minute

// bindVolumes is upstream's VolumeBinding PreBind: it writes what
// placing the pod on node asks of its WaitForFirstConsumer claims
// (volumes promised to claims, claims handed to their provisioner with
// the node) and waits until every such claim is bound.
func (s *Scheduler) bindVolumes(ctx context.Context, pod *v1.Pod, node string) error {
	if !usesClaims(pod) {
		return nil
	}
	n, err := s.nodes.Get(node)
	if err != nil {
		return fmt.Errorf("get node %q: %w", node, err)
	}
	a, err := volumebinding.Assign(pod, n, s.volumes)
	if err != nil || a.Empty() {
		return err
	}
	for _, pv := range a.Volumes {
		if err := s.write(ctx, func(ctx context.Context) error {
			_, err := s.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("bind volume %q to claim %q: %w", pv.Name, pv.Spec.ClaimRef.Name, err)
		}
	}
	// written are the claims as this pass wrote them: until the
	// informer has caught up with a write, its older copy is not read as
	// the provisioner handing the claim back.
	written := map[string]*v1.PersistentVolumeClaim{}
	for _, c := range a.Claims {
		if err := s.write(ctx, func(ctx context.Context) error {
			out, err := s.client.CoreV1().PersistentVolumeClaims(c.Namespace).Update(ctx, c, metav1.UpdateOptions{})
			written[c.Name] = out
			return err
		}); err != nil {
			return fmt.Errorf("select node for claim %q: %w", c.Name, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, volumeBindTimeout)
	defer cancel()
	err = wait.PollUntilContextCancel(wctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, w := range a.Wait {
			c, err := s.volumes.Claim(w.Namespace, w.Name)
			if err != nil {
				return false, fmt.Errorf("get persistentvolumeclaim %q: %w", w.Name, err)
			}
			if c.UID != w.UID {
				return false, fmt.Errorf("persistentvolumeclaim %q was replaced", w.Name)
			}
			ours := written[c.Name]
			if ours != nil && olderThan(c, ours) {
				return false, nil
			}
			done, err := volumebinding.Settled(c, node, ours != nil)
			if !done || err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("binding volumes: %w", err)
	}
	return nil
}

// olderThan reports whether the cached claim predates the written one.
// Resource versions are etcd revisions here, so their order is theirs.
func olderThan(cached, written *v1.PersistentVolumeClaim) bool {
	a, err1 := strconv.ParseUint(cached.ResourceVersion, 10, 64)
	b, err2 := strconv.ParseUint(written.ResourceVersion, 10, 64)
	return err1 == nil && err2 == nil && a < b
}

func (s *Scheduler) write(ctx context.Context, f func(context.Context) error) error {
	wctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	return f(wctx)
}

func usesClaims(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		if name, _ := volumebinding.ClaimName(pod, &pod.Spec.Volumes[i]); name != "" {
			return true
		}
	}
	return false
}
