package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/google/uuid"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/orca-project/orca/internal/storage"
)

// KubernetesService describes the `kubernetes` Service in default through
// which pods reach the API server, as upstream publishes it.
type KubernetesService struct {
	// ClusterIP is the service's address, the first of the service CIDR.
	ClusterIP string
	// AdvertiseIP and Port are where this API server is reached; they
	// become the service's endpoints.
	AdvertiseIP string
	Port        int32
}

const kubernetesServiceName = "kubernetes"

// reconcileKubernetesService creates the `kubernetes` Service, its
// Endpoints and its EndpointSlice, or brings them back to this server's
// address and port. It runs on every start, so it must be idempotent.
func (s *Server) reconcileKubernetesService(ctx context.Context) error {
	ks := s.cfg.KubernetesService
	svcRes := s.resources[corev1.SchemeGroupVersion.WithResource("services")]
	if ks == nil || svcRes == nil {
		return nil
	}
	ports := []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(ks.Port)}}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: ks.ClusterIP, Ports: ports,
			SessionAffinity: corev1.ServiceAffinityNone},
	}
	// Creating an existing service would fail on its address before it
	// failed on its name, so look first.
	_, err := svcRes.store.Get(ctx, svcRes.key(metav1.NamespaceDefault, kubernetesServiceName), svcRes.typ(), svcRes.New)
	if errors.Is(err, storage.ErrNotFound) {
		_, err = s.create(ctx, svcRes, metav1.NamespaceDefault, svc, false)
	} else if err == nil {
		err = apierrors.NewAlreadyExists(svcRes.GroupResource(), kubernetesServiceName)
	}
	switch {
	case apierrors.IsAlreadyExists(err):
		// Only the ports are reconciled, as upstream does: the address is
		// immutable and a user may have added labels.
		_, err = s.update(ctx, svcRes, metav1.NamespaceDefault, kubernetesServiceName, false, func(cur runtime.Object) (runtime.Object, error) {
			next := cur.DeepCopyObject().(*corev1.Service)
			if apiequality.Semantic.DeepEqual(next.Spec.Ports, ports) {
				return cur, nil
			}
			next.Spec.Ports = ports
			return s.prepareUpdate(ctx, svcRes, next, cur, "", "", false)
		})
		if err != nil {
			return fmt.Errorf("reconcile the kubernetes service: %w", err)
		}
	case err != nil:
		// Another service holds the address (the range changed): the
		// cluster works without this service, so start anyway.
		s.log.Error("cannot create the kubernetes service", "clusterIP", ks.ClusterIP, "err", err)
		return nil
	}

	ips, err := s.renewEndpointLease(ctx)
	if err != nil {
		return err
	}
	return s.writeKubernetesEndpoints(ctx, ips)
}

// The `kubernetes` Service's endpoints are every live API server, as
// upstream's lease endpoint reconciler keeps them: each server holds a
// key under endpointLeasePrefix with its address, bound to an etcd lease
// of endpointLeaseTTL that it renews every endpointLeaseInterval, and
// writes the endpoints from the keys it finds. A server that dies drops
// out when its lease runs out; one that stops removes its key at once.
const (
	endpointLeasePrefix   = "/registry/masterleases/"
	endpointLeaseTTL      = 15 * time.Second
	endpointLeaseInterval = 10 * time.Second
)

// renewEndpointLease keeps this server's address under a live lease (the
// same one while it lasts, a new one after it ran out) and returns the
// addresses of every server holding one.
func (s *Server) renewEndpointLease(ctx context.Context) ([]string, error) {
	ks := s.cfg.KubernetesService
	c := s.cfg.Store.Client()
	if id := s.endpointLease.Load(); id == 0 || func() error { _, err := c.KeepAliveOnce(ctx, clientv3.LeaseID(id)); return err }() != nil {
		lease, err := c.Grant(ctx, int64(endpointLeaseTTL/time.Second))
		if err != nil {
			return nil, fmt.Errorf("endpoint lease: %w", err)
		}
		if _, err := c.Put(ctx, endpointLeasePrefix+ks.AdvertiseIP, ks.AdvertiseIP, clientv3.WithLease(lease.ID)); err != nil {
			return nil, fmt.Errorf("endpoint lease: %w", err)
		}
		s.endpointLease.Store(int64(lease.ID))
	}
	return s.endpointLeaseIPs(ctx)
}

func (s *Server) endpointLeaseIPs(ctx context.Context) ([]string, error) {
	resp, err := s.cfg.Store.Client().Get(ctx, endpointLeasePrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("endpoint leases: %w", err)
	}
	var ips []string
	for _, kv := range resp.Kvs {
		ips = append(ips, string(kv.Value))
	}
	return endpointIPs(ips), nil
}

// endpointIPs is the sorted set of valid addresses among ips.
func endpointIPs(ips []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, ip := range ips {
		if net.ParseIP(ip) == nil || seen[ip] {
			continue
		}
		seen[ip] = true
		out = append(out, ip)
	}
	slices.Sort(out)
	return out
}

// runEndpointReconciler renews this server's lease and the endpoints
// until ctx ends, then gives its place up.
func (s *Server) runEndpointReconciler(ctx context.Context) {
	if s.cfg.KubernetesService == nil || s.resources[corev1.SchemeGroupVersion.WithResource("services")] == nil {
		return
	}
	t := time.NewTicker(endpointLeaseInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.removeEndpointLease()
			return
		case <-t.C:
		}
		ips, err := s.renewEndpointLease(ctx)
		if err == nil {
			err = s.writeKubernetesEndpoints(ctx, ips)
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("kubernetes service endpoints", "err", err)
		}
	}
}

// removeEndpointLease takes this server out of the endpoints as it stops.
func (s *Server) removeEndpointLease() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ks := s.cfg.KubernetesService
	if _, err := s.cfg.Store.Client().Delete(ctx, endpointLeasePrefix+ks.AdvertiseIP); err != nil {
		return
	}
	ips, err := s.endpointLeaseIPs(ctx)
	if err != nil || len(ips) == 0 {
		// The last server leaves its address: a client that finds it
		// gone learns nothing more from an empty list.
		return
	}
	if err := s.writeKubernetesEndpoints(ctx, ips); err != nil {
		s.log.Debug("kubernetes service endpoints on shutdown", "err", err)
	}
}

// writeKubernetesEndpoints points the `kubernetes` Endpoints and
// EndpointSlice at ips.
func (s *Server) writeKubernetesEndpoints(ctx context.Context, ips []string) error {
	ks := s.cfg.KubernetesService
	if len(ips) == 0 {
		ips = []string{ks.AdvertiseIP}
	}
	var addrs []corev1.EndpointAddress
	var endpoints []discoveryv1.Endpoint
	ready := true
	for _, ip := range ips {
		addrs = append(addrs, corev1.EndpointAddress{IP: ip})
		endpoints = append(endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
	}
	epPorts := []corev1.EndpointPort{{Name: "https", Port: ks.Port, Protocol: corev1.ProtocolTCP}}
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
		Subsets: []corev1.EndpointSubset{{Addresses: addrs, Ports: epPorts}},
	}
	if err := s.putSystemObject(ctx, corev1.SchemeGroupVersion.WithResource("endpoints"), ep, func(cur runtime.Object) {
		c := cur.(*corev1.Endpoints)
		c.Subsets = ep.Subsets
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels[discoveryv1.LabelSkipMirror] = "true"
	}); err != nil {
		return err
	}
	name, proto := "https", corev1.ProtocolTCP
	port := ks.Port
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelServiceName: kubernetesServiceName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   endpoints,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Protocol: &proto, Port: &port}},
	}
	return s.putSystemObject(ctx, discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), slice, func(cur runtime.Object) {
		c := cur.(*discoveryv1.EndpointSlice)
		c.AddressType, c.Endpoints, c.Ports = slice.AddressType, slice.Endpoints, slice.Ports
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels[discoveryv1.LabelServiceName] = kubernetesServiceName
	})
}

// putSystemObject creates obj, or applies set to the stored one, straight
// in storage. The API server's own endpoints skip validation because
// validation refuses loopback addresses, and 127.0.0.1 is the right one
// for a single-node cluster advertised on loopback (no pod network yet).
func (s *Server) putSystemObject(ctx context.Context, gvr schema.GroupVersionResource, obj runtime.Object, set func(runtime.Object)) error {
	res := s.resources[gvr]
	if res == nil {
		return nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	key := res.key(acc.GetNamespace(), acc.GetName())
	_, err = res.store.GuaranteedUpdate(ctx, key, res.typ(), res.New, nil, func(cur runtime.Object) (runtime.Object, error) {
		set(cur)
		return cur, nil
	})
	if !errors.Is(err, storage.ErrNotFound) {
		if err != nil {
			return fmt.Errorf("reconcile %s %s: %w", gvr.Resource, acc.GetName(), err)
		}
		return nil
	}
	acc.SetUID(types.UID(uuid.NewString()))
	acc.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
	storage.SetKind(obj, res.GroupVersionKind())
	err = res.store.Create(ctx, key, res.typ(), obj)
	if errors.Is(err, storage.ErrAlreadyExists) {
		// Another API server created it meanwhile; reconcile that one.
		return s.putSystemObject(ctx, gvr, obj, set)
	}
	if err != nil {
		return fmt.Errorf("create %s %s: %w", gvr.Resource, acc.GetName(), err)
	}
	return nil
}
