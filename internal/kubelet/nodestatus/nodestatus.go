// Package nodestatus registers the kubelet's Node, keeps its Lease in
// kube-node-lease fresh, and reports its capacity, addresses, system
// information and conditions. The Node's desired content is computed by a
// pure function from a snapshot of the machine, so the reporting loop only
// decides when to send it.
package nodestatus

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/kubelet/eviction"
)

// Machine is what the node knows of itself at one moment.
type Machine struct {
	CPUs            int
	MemoryBytes     int64
	MemoryAvailable int64
	DiskBytes       int64
	DiskAvailable   int64
	PIDMax          int64
	PIDsInUse       int64
	MachineID       string
	SystemUUID      string
	BootID          string
	KernelVersion   string
	OSImage         string
	RuntimeVersion  string
	KubeletVersion  string
	RuntimeReady    bool
	RuntimeMessage  string
	NetworkReady    bool
	NetworkMessage  string
	Images          []v1.ContainerImage
	// VolumesInUse are the attachable volumes mounted on the node, which
	// the attach/detach controller does not detach.
	VolumesInUse []v1.UniqueVolumeName
	// Pressure are the pressure conditions the eviction manager judges
	// true (MemoryPressure, DiskPressure, PIDPressure): the one place
	// they are decided.
	Pressure map[v1.NodeConditionType]bool
}

// Spec is what the operator asked of the node.
type Spec struct {
	Name   string
	Labels map[string]string
	// Annotations the agent publishes (its local-path storage directory).
	Annotations map[string]string
	Taints      []v1.Taint
	Addresses   []v1.NodeAddress
	KubeletPort int32
	MaxPods     int64
	// Reserved is subtracted from capacity (kube-reserved plus
	// system-reserved); eviction thresholds are subtracted too.
	Reserved v1.ResourceList
	PodCIDR  string
	// Eviction holds the eviction thresholds, whose hard ones
	// allocatable leaves out (upstream's defaults when nil).
	Eviction *eviction.Config
}

func (s Spec) eviction() eviction.Config {
	if s.Eviction != nil {
		return *s.Eviction
	}
	cfg, _ := eviction.ParseConfig(eviction.Flags{})
	return cfg
}

// Capacity is the node's capacity and allocatable for a machine.
func Capacity(m Machine, s Spec) (capacity, allocatable v1.ResourceList) {
	capacity = v1.ResourceList{
		v1.ResourceCPU:              *resource.NewQuantity(int64(m.CPUs), resource.DecimalSI),
		v1.ResourceMemory:           *resource.NewQuantity(m.MemoryBytes, resource.BinarySI),
		v1.ResourceEphemeralStorage: *resource.NewQuantity(m.DiskBytes, resource.BinarySI),
		v1.ResourcePods:             *resource.NewQuantity(s.MaxPods, resource.DecimalSI),
		"hugepages-1Gi":             *resource.NewQuantity(0, resource.BinarySI),
		"hugepages-2Mi":             *resource.NewQuantity(0, resource.BinarySI),
	}
	allocatable = capacity.DeepCopy()
	for name, q := range s.Reserved {
		if a, ok := allocatable[name]; ok {
			a.Sub(q)
			allocatable[name] = a
		}
	}
	e := s.eviction()
	mem := allocatable[v1.ResourceMemory]
	mem.Sub(*resource.NewQuantity(e.HardAmount(eviction.MemoryAvailable, m.MemoryBytes), resource.BinarySI))
	allocatable[v1.ResourceMemory] = mem
	disk := allocatable[v1.ResourceEphemeralStorage]
	disk.Sub(*resource.NewQuantity(e.HardAmount(eviction.NodeFsAvailable, m.DiskBytes), resource.BinarySI))
	allocatable[v1.ResourceEphemeralStorage] = disk
	for name, q := range allocatable {
		if q.Sign() < 0 {
			allocatable[name] = *resource.NewQuantity(0, q.Format)
		}
	}
	return capacity, allocatable
}

// Conditions are the node's conditions for a machine, keeping transition
// times from old when a status has not changed, and heartbeat now.
func Conditions(m Machine, old []v1.NodeCondition, now time.Time) []v1.NodeCondition {
	type c struct {
		t                                  v1.NodeConditionType
		bad                                bool
		okReason, okMsg, badReason, badMsg string
	}
	ready := m.RuntimeReady && m.NetworkReady
	readyMsg := "container runtime is down"
	if m.RuntimeReady && !m.NetworkReady {
		readyMsg = "container runtime network not ready: " + m.NetworkMessage
	} else if m.RuntimeMessage != "" {
		readyMsg = m.RuntimeMessage
	}
	list := []c{
		{v1.NodeMemoryPressure, m.Pressure[v1.NodeMemoryPressure], "KubeletHasSufficientMemory", "kubelet has sufficient memory available", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"},
		{v1.NodeDiskPressure, m.Pressure[v1.NodeDiskPressure], "KubeletHasNoDiskPressure", "kubelet has no disk pressure", "KubeletHasDiskPressure", "kubelet has disk pressure"},
		{v1.NodePIDPressure, m.Pressure[v1.NodePIDPressure], "KubeletHasSufficientPID", "kubelet has sufficient PID available", "KubeletHasInsufficientPID", "kubelet has insufficient PID available"},
		{v1.NodeReady, !ready, "KubeletReady", "kubelet is posting ready status", "KubeletNotReady", readyMsg},
	}
	out := make([]v1.NodeCondition, 0, len(list))
	for _, x := range list {
		// Pressure conditions are "True" when bad; Ready is "True" when good.
		status := v1.ConditionFalse
		reason, msg := x.okReason, x.okMsg
		if x.bad {
			status, reason, msg = v1.ConditionTrue, x.badReason, x.badMsg
		}
		if x.t == v1.NodeReady {
			status = v1.ConditionTrue
			if x.bad {
				status = v1.ConditionFalse
			}
		}
		nc := v1.NodeCondition{Type: x.t, Status: status, Reason: reason, Message: msg,
			LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
		for _, o := range old {
			if o.Type == x.t && o.Status == status {
				nc.LastTransitionTime = o.LastTransitionTime
			}
		}
		out = append(out, nc)
	}
	return out
}

// Status is the node's whole status for a machine and spec.
func Status(m Machine, s Spec, old v1.NodeStatus, now time.Time) v1.NodeStatus {
	capacity, allocatable := Capacity(m, s)
	st := v1.NodeStatus{
		Capacity:        capacity,
		Allocatable:     allocatable,
		Conditions:      Conditions(m, old.Conditions, now),
		Addresses:       s.Addresses,
		DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: s.KubeletPort}},
		NodeInfo: v1.NodeSystemInfo{
			MachineID: m.MachineID, SystemUUID: m.SystemUUID, BootID: m.BootID,
			KernelVersion: m.KernelVersion, OSImage: m.OSImage,
			ContainerRuntimeVersion: m.RuntimeVersion, KubeletVersion: m.KubeletVersion,
			OperatingSystem: runtime.GOOS, Architecture: runtime.GOARCH,
		},
		Images:          m.Images,
		VolumesInUse:    m.VolumesInUse,
		VolumesAttached: old.VolumesAttached,
	}
	return st
}

// Significant reports whether two statuses differ in more than heartbeat
// times: such a change is sent at once, a mere heartbeat once a minute.
func Significant(a, b v1.NodeStatus) bool {
	strip := func(s v1.NodeStatus) v1.NodeStatus {
		s = *s.DeepCopy()
		for i := range s.Conditions {
			s.Conditions[i].LastHeartbeatTime = metav1.Time{}
		}
		return s
	}
	return !equality.Semantic.DeepEqual(strip(a), strip(b))
}

// Reporter registers the node and keeps its status and Lease current.
type Reporter struct {
	Client  kubernetes.Interface
	Spec    Spec
	Observe func(ctx context.Context) Machine
	Log     *slog.Logger
	// StatusFrequency is how often the machine is observed (10 s);
	// ReportFrequency how often an unchanged status is sent anyway (1 min).
	StatusFrequency, ReportFrequency time.Duration
	LeaseDuration                    time.Duration

	lastReport time.Time
	uid        types.UID
}

// Run registers the node, then loops until ctx ends.
func (r *Reporter) Run(ctx context.Context) error {
	if r.Log == nil {
		r.Log = slog.Default()
	}
	if r.StatusFrequency == 0 {
		r.StatusFrequency = 10 * time.Second
	}
	if r.ReportFrequency == 0 {
		r.ReportFrequency = time.Minute
	}
	if r.LeaseDuration == 0 {
		r.LeaseDuration = 40 * time.Second
	}
	for {
		err := r.register(ctx)
		if err == nil {
			break
		}
		r.Log.Warn("register node", "node", r.Spec.Name, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	t := time.NewTicker(r.StatusFrequency)
	defer t.Stop()
	for {
		if err := r.renewLease(ctx); err != nil && ctx.Err() == nil {
			r.Log.Warn("renew node lease", "node", r.Spec.Name, "err", err)
		}
		if err := r.report(ctx, false); err != nil && ctx.Err() == nil {
			r.Log.Warn("update node status", "node", r.Spec.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// register creates the Node, or takes over an existing one (a restarted
// agent): labels and taints given by flags are applied, others are kept.
func (r *Reporter) register(ctx context.Context) error {
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: r.Spec.Name, Labels: r.Spec.Labels, Annotations: r.Spec.Annotations},
		Spec:       v1.NodeSpec{Taints: r.Spec.Taints, PodCIDR: r.Spec.PodCIDR},
	}
	if r.Spec.PodCIDR != "" {
		node.Spec.PodCIDRs = []string{r.Spec.PodCIDR}
	}
	created, err := r.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	switch {
	case err == nil:
		r.uid = created.UID
		r.Log.Info("registered node", "node", r.Spec.Name)
	case apierrors.IsAlreadyExists(err):
		cur, err := r.Client.CoreV1().Nodes().Get(ctx, r.Spec.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node: %w", err)
		}
		r.uid = cur.UID
		labels := map[string]string{}
		for k, v := range r.Spec.Labels {
			if cur.Labels[k] != v {
				labels[k] = v
			}
		}
		annotations := map[string]string{}
		for k, v := range r.Spec.Annotations {
			if cur.Annotations[k] != v {
				annotations[k] = v
			}
		}
		taints := cur.Spec.Taints
		for _, want := range r.Spec.Taints {
			found := false
			for _, t := range taints {
				if t.Key == want.Key && t.Effect == want.Effect {
					found = true
				}
			}
			if !found {
				taints = append(taints, want)
			}
		}
		if len(labels) > 0 || len(annotations) > 0 || len(taints) != len(cur.Spec.Taints) {
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels, "annotations": annotations}, "spec": map[string]any{"taints": taints}})
			if _, err := r.Client.CoreV1().Nodes().Patch(ctx, r.Spec.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("update node labels and taints: %w", err)
			}
		}
	default:
		return fmt.Errorf("create node: %w", err)
	}
	return r.report(ctx, true)
}

func (r *Reporter) report(ctx context.Context, force bool) error {
	cur, err := r.Client.CoreV1().Nodes().Get(ctx, r.Spec.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Deleted while we ran: register again, as upstream's kubelet.
		return r.register(ctx)
	}
	if err != nil {
		return fmt.Errorf("get node: %w", err)
	}
	r.uid = cur.UID
	now := time.Now()
	st := Status(r.Observe(ctx), r.Spec, cur.Status, now)
	if !force && !Significant(st, cur.Status) && now.Sub(r.lastReport) < r.ReportFrequency {
		return nil
	}
	body := map[string]any{"status": st}
	if len(st.VolumesInUse) == 0 && len(cur.Status.VolumesInUse) > 0 {
		// An empty list is omitted from the patch, which would keep the
		// old one: null clears it.
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		m["volumesInUse"] = nil
		body["status"] = m
	}
	patch, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if _, err := r.Client.CoreV1().Nodes().Patch(ctx, r.Spec.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("patch node status: %w", err)
	}
	r.lastReport = now
	return nil
}

func (r *Reporter) renewLease(ctx context.Context) error {
	leases := r.Client.CoordinationV1().Leases(v1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(ctx, r.Spec.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: r.Spec.Name, Namespace: v1.NamespaceNodeLease,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: r.Spec.Name, UID: r.uid}}},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(r.Spec.Name), LeaseDurationSeconds: ptr.To(int32(r.LeaseDuration / time.Second)),
				RenewTime: &now,
			},
		}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.RenewTime = &now
	l.Spec.HolderIdentity = ptr.To(r.Spec.Name)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(r.LeaseDuration / time.Second))
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// ReadFirstLine returns a file's first line, trimmed, or "".
func ReadFirstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
}
