package localpath

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/orca-project/orca/internal/controller/controllerutil"
)

// Node keeps the directories of the local-path volumes of one node: it
// makes the directory of every volume the node keeps, and removes that
// of a deleted one before letting the PersistentVolume go. It watches
// only the volumes labelled with its node's name, which is all the Node
// authorizer lets a node list.
type Node struct {
	client  kubernetes.Interface
	name    string
	root    string
	volumes corelisters.PersistentVolumeLister
	factory informers.SharedInformerFactory
	queue   workqueue.TypedRateLimitingInterface[string]
	log     *slog.Logger
}

// NewNode builds the loop for node, whose volumes live under root.
func NewNode(client kubernetes.Interface, node, root string, log *slog.Logger) (*Node, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = NodeLabel + "=" + node }))
	inf := factory.Core().V1().PersistentVolumes()
	n := &Node{
		client: client, name: node, root: root,
		volumes: inf.Lister(),
		factory: factory,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "local-path-volumes"}),
		log: log.With("component", "local-path"),
	}
	add := func(obj any) {
		if pv, ok := obj.(*v1.PersistentVolume); ok {
			n.queue.Add(pv.Name)
		}
	}
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: add, UpdateFunc: func(_, cur any) { add(cur) },
	}); err != nil {
		return nil, fmt.Errorf("local-path: volume handler: %w", err)
	}
	return n, nil
}

// Run keeps the directories until ctx ends.
func (n *Node) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer n.queue.ShutDown()
	if err := os.MkdirAll(n.root, 0o711); err != nil {
		return fmt.Errorf("local-path: storage directory: %w", err)
	}
	n.factory.Start(ctx.Done())
	defer n.factory.Shutdown()
	n.factory.WaitForCacheSync(ctx.Done())
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		controllerutil.ProcessQueue(ctx, n.queue, n.sync, n.log, "volume")
	}, time.Second)
	<-ctx.Done()
	return nil
}

func (n *Node) sync(ctx context.Context, name string) error {
	pv, err := n.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !Ours(pv) || pv.Spec.Local == nil {
		return nil
	}
	if pv.DeletionTimestamp == nil {
		return EnsureDir(n.root, pv.Spec.Local.Path)
	}
	if !slices.Contains(pv.Finalizers, Finalizer) {
		return nil
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == v1.PersistentVolumeReclaimDelete {
		if err := RemoveDir(n.root, pv.Spec.Local.Path); err != nil {
			return err
		}
		n.log.Info("removed the directory of a deleted volume", "volume", name, "path", pv.Spec.Local.Path)
	}
	u := pv.DeepCopy()
	u.Finalizers = slices.DeleteFunc(u.Finalizers, func(f string) bool { return f == Finalizer })
	_, err = n.client.CoreV1().PersistentVolumes().Update(ctx, u, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// EnsureDir makes a volume's directory below root when it is missing,
// with DirMode whatever the umask.
func EnsureDir(root, path string) error {
	if _, err := Within(root, path); err != nil {
		return err
	}
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("volume path %s exists and is not a directory", path)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := os.MkdirAll(root, 0o711); err != nil {
		return fmt.Errorf("make storage directory: %w", err)
	}
	if err := os.Mkdir(path, DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("make volume directory: %w", err)
	}
	return os.Chmod(path, DirMode)
}

// RemoveDir removes a volume's directory and everything in it; a
// symbolic link a pod may have left inside is removed, not followed.
func RemoveDir(root, path string) error {
	if _, err := Within(root, path); err != nil {
		return err
	}
	if info, err := os.Lstat(path); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return os.Remove(path)
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("remove volume directory: %w", err)
	}
	return nil
}

// Root is a data directory's storage directory.
func Root(dataDir string) string { return filepath.Join(dataDir, "storage") }
