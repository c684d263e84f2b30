package apiserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
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

	epPorts := []corev1.EndpointPort{{Name: "https", Port: ks.Port, Protocol: corev1.ProtocolTCP}}
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: ks.AdvertiseIP}}, Ports: epPorts}},
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
	name, proto, ready := "https", corev1.ProtocolTCP, true
	port := ks.Port
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: kubernetesServiceName, Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{discoveryv1.LabelServiceName: kubernetesServiceName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ks.AdvertiseIP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
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
