// Package csi is the node side of CSI drivers, as upstream's kubelet has
// it: drivers register through a socket in the plugin registration
// directory (what node-driver-registrar does), the kubelet asks each for
// its node ID and topology (NodeGetInfo) and records them in the node's
// CSINode object, its csi.volume.kubernetes.io/nodeid annotation and its
// topology labels; the volume manager then reaches a driver's node
// service by name (internal/kubelet/volume's CSI volumes).
//
// The directory is watched by listing it every second rather than
// through inotify: a socket appears once per driver start, and a second's
// delay is what node-driver-registrar's own retries allow for.
package csi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// NodeIDAnnotation on a Node maps each registered driver to its node ID.
const NodeIDAnnotation = "csi.volume.kubernetes.io/nodeid"

// callTimeout bounds one call to a driver.
const callTimeout = 30 * time.Second

// Registry knows the CSI drivers registered on this node.
type Registry struct {
	// Dir is the plugin registration directory drivers put their
	// registration sockets in.
	Dir    string
	Node   string
	Client kubernetes.Interface
	Log    *slog.Logger

	mu      sync.Mutex
	drivers map[string]*driver // by driver name
	sockets map[string]string  // registration socket → driver name
	failed  map[string]time.Time
}

type driver struct {
	endpoint string
	conn     *grpc.ClientConn
	nodeID   string
}

// Run watches the registration directory until ctx ends.
func (r *Registry) Run(ctx context.Context) error {
	if err := os.MkdirAll(r.Dir, 0o750); err != nil {
		return fmt.Errorf("csi: plugin registration directory: %w", err)
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		r.scan(ctx)
		select {
		case <-ctx.Done():
			r.mu.Lock()
			for _, d := range r.drivers {
				_ = d.conn.Close()
			}
			r.mu.Unlock()
			return nil
		case <-t.C:
		}
	}
}

// scan registers new sockets and forgets the drivers whose sockets went.
func (r *Registry) scan(ctx context.Context) {
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		r.Log.Warn("csi: list plugin registration directory", "err", err)
		return
	}
	present := map[string]bool{}
	for _, e := range entries {
		if e.Type()&os.ModeSocket == 0 {
			continue
		}
		path := filepath.Join(r.Dir, e.Name())
		present[path] = true
		r.mu.Lock()
		_, known := r.sockets[path]
		// A socket that failed is tried again after a while: the driver
		// may have been starting.
		retryAt, failed := r.failed[path]
		r.mu.Unlock()
		if known || (failed && time.Now().Before(retryAt)) {
			continue
		}
		if err := r.register(ctx, path); err != nil {
			r.Log.Warn("csi: registering plugin failed", "socket", path, "err", err)
			r.mu.Lock()
			if r.failed == nil {
				r.failed = map[string]time.Time{}
			}
			r.failed[path] = time.Now().Add(5 * time.Second)
			r.mu.Unlock()
		}
	}
	r.mu.Lock()
	var gone []string
	for path, name := range r.sockets {
		if !present[path] {
			gone = append(gone, name)
			delete(r.sockets, path)
		}
	}
	r.mu.Unlock()
	for _, name := range gone {
		r.deregister(ctx, name)
	}
}

// register is the kubelet's half of the registration handshake: GetInfo,
// then NodeGetInfo on the driver's endpoint, the CSINode, and
// NotifyRegistrationStatus with the outcome.
func (r *Registry) register(ctx context.Context, socket string) error {
	conn, err := dial(socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	reg := registerapi.NewRegistrationClient(conn)
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	info, err := reg.GetInfo(cctx, &registerapi.InfoRequest{})
	if err != nil {
		return fmt.Errorf("GetInfo: %w", err)
	}
	notify := func(err error) error {
		st := &registerapi.RegistrationStatus{PluginRegistered: err == nil}
		if err != nil {
			st.Error = err.Error()
		}
		if _, nerr := reg.NotifyRegistrationStatus(cctx, st); nerr != nil && err == nil {
			return fmt.Errorf("NotifyRegistrationStatus: %w", nerr)
		}
		return err
	}
	if info.Type != registerapi.CSIPlugin {
		return notify(fmt.Errorf("plugin type %q is not supported", info.Type))
	}
	if !slices.ContainsFunc(info.SupportedVersions, func(v string) bool { return strings.HasPrefix(strings.TrimPrefix(v, "v"), "1.") }) {
		return notify(fmt.Errorf("none of the versions %v of CSI plugin %s is supported", info.SupportedVersions, info.Name))
	}
	endpoint := info.Endpoint
	if endpoint == "" {
		endpoint = socket
	}
	d, err := r.connect(ctx, info.Name, endpoint)
	if err != nil {
		return notify(err)
	}
	if err := notify(nil); err != nil {
		_ = d.conn.Close()
		return err
	}
	r.mu.Lock()
	if r.drivers == nil {
		r.drivers, r.sockets = map[string]*driver{}, map[string]string{}
	}
	if old := r.drivers[info.Name]; old != nil {
		_ = old.conn.Close()
	}
	r.drivers[info.Name] = d
	r.sockets[socket] = info.Name
	delete(r.failed, socket)
	r.mu.Unlock()
	r.Log.Info("csi: registered plugin", "driver", info.Name, "endpoint", endpoint, "nodeID", d.nodeID)
	return nil
}

// connect asks the driver about this node and records the answer.
func (r *Registry) connect(ctx context.Context, name, endpoint string) (*driver, error) {
	conn, err := dial(endpoint)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ni, err := csipb.NewNodeClient(conn).NodeGetInfo(cctx, &csipb.NodeGetInfoRequest{})
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("NodeGetInfo of %s: %w", name, err)
	}
	if ni.NodeId == "" {
		_ = conn.Close()
		return nil, fmt.Errorf("driver %s returned an empty node ID", name)
	}
	var topology map[string]string
	if ni.AccessibleTopology != nil {
		topology = ni.AccessibleTopology.Segments
	}
	if err := r.recordNode(cctx, name, ni.NodeId, topology); err != nil {
		_ = conn.Close()
		return nil, err
	}
	if err := r.recordCSINode(cctx, name, func(drivers []storagev1.CSINodeDriver) []storagev1.CSINodeDriver {
		return withDriver(drivers, name, ni.NodeId, topology, ni.MaxVolumesPerNode)
	}); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return &driver{endpoint: endpoint, conn: conn, nodeID: ni.NodeId}, nil
}

func (r *Registry) deregister(ctx context.Context, name string) {
	r.mu.Lock()
	d := r.drivers[name]
	delete(r.drivers, name)
	r.mu.Unlock()
	if d != nil {
		_ = d.conn.Close()
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := r.recordCSINode(cctx, name, func(drivers []storagev1.CSINodeDriver) []storagev1.CSINodeDriver {
		return slices.DeleteFunc(drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == name })
	}); err != nil {
		r.Log.Warn("csi: remove driver from CSINode", "driver", name, "err", err)
	}
	r.Log.Info("csi: plugin deregistered", "driver", name)
}

// withDriver is drivers with name's entry set, in name order.
func withDriver(drivers []storagev1.CSINodeDriver, name, nodeID string, topology map[string]string, maxVolumes int64) []storagev1.CSINodeDriver {
	out := slices.DeleteFunc(slices.Clone(drivers), func(d storagev1.CSINodeDriver) bool { return d.Name == name })
	d := storagev1.CSINodeDriver{Name: name, NodeID: nodeID}
	for k := range topology {
		d.TopologyKeys = append(d.TopologyKeys, k)
	}
	sort.Strings(d.TopologyKeys)
	if maxVolumes > 0 {
		n := int32(maxVolumes)
		d.Allocatable = &storagev1.VolumeNodeResources{Count: &n}
	}
	out = append(out, d)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// recordCSINode applies change to the drivers of the node's CSINode,
// creating it (owned by the Node, as upstream) when missing.
func (r *Registry) recordCSINode(ctx context.Context, driverName string, change func([]storagev1.CSINodeDriver) []storagev1.CSINodeDriver) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := r.Client.StorageV1().CSINodes().Get(ctx, r.Node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			node, err := r.Client.CoreV1().Nodes().Get(ctx, r.Node, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("get node for its CSINode: %w", err)
			}
			csiNode := &storagev1.CSINode{
				ObjectMeta: metav1.ObjectMeta{Name: r.Node, OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
				}}},
				Spec: storagev1.CSINodeSpec{Drivers: change(nil)},
			}
			_, err = r.Client.StorageV1().CSINodes().Create(ctx, csiNode, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("create CSINode with driver %s: %w", driverName, err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("get CSINode: %w", err)
		}
		u := cur.DeepCopy()
		u.Spec.Drivers = change(cur.Spec.Drivers)
		_, err = r.Client.StorageV1().CSINodes().Update(ctx, u, metav1.UpdateOptions{})
		return err
	})
}

// recordNode puts the driver's node ID in the Node's annotation and its
// topology segments in the Node's labels.
func (r *Registry) recordNode(ctx context.Context, name, nodeID string, topology map[string]string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := r.Client.CoreV1().Nodes().Get(ctx, r.Node, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node: %w", err)
		}
		ids := map[string]string{}
		if s := node.Annotations[NodeIDAnnotation]; s != "" {
			_ = json.Unmarshal([]byte(s), &ids)
		}
		changed := ids[name] != nodeID
		ids[name] = nodeID
		for k, v := range topology {
			if node.Labels[k] != v {
				changed = true
			}
		}
		if !changed {
			return nil
		}
		b, err := json.Marshal(ids)
		if err != nil {
			return err
		}
		patch := map[string]any{"metadata": map[string]any{
			"annotations":     map[string]string{NodeIDAnnotation: string(b)},
			"labels":          topology,
			"resourceVersion": node.ResourceVersion,
		}}
		pb, _ := json.Marshal(patch)
		_, err = r.Client.CoreV1().Nodes().Patch(ctx, r.Node, types.MergePatchType, pb, metav1.PatchOptions{})
		return err
	})
}

// NodeClient is the node service of a registered driver, with upstream's
// error for one that is not.
func (r *Registry) NodeClient(name string) (csipb.NodeClient, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.drivers[name]
	if d == nil {
		return nil, fmt.Errorf("driver name %s not found in the list of registered CSI drivers", name)
	}
	return csipb.NewNodeClient(d.conn), nil
}

// Drivers lists the registered drivers' names.
func (r *Registry) Drivers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.drivers))
	for n := range r.drivers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func dial(endpoint string) (*grpc.ClientConn, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(endpoint, "unix://"), "unix:")
	if path == "" {
		return nil, errors.New("empty endpoint")
	}
	conn, err := grpc.NewClient("unix:"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", path, err)
	}
	return conn, nil
}
