package scheduler

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
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
