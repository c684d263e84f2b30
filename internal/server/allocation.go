package server

import (
	"context"
	"fmt"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/orca-project/orca/internal/allocator"
	"github.com/orca-project/orca/internal/apiserver"
	"github.com/orca-project/orca/internal/storage"
	"github.com/orca-project/orca/internal/storage/encryption"
)

// Defaults of the service ranges, k3s's.
const (
	DefaultServiceCIDR = "10.43.0.0/16"
	// DefaultClusterCIDR is k3s's pod range; each node gets a /24 of it.
	DefaultClusterCIDR          = "10.42.0.0/16"
	DefaultServiceNodePortRange = "30000-32767"
)

// repairInterval is how often the service ranges are checked against the
// stored services. Leaks only come from crashes, so minutes are plenty.
const repairInterval = 3 * time.Minute

// serviceRanges reads the service CIDR and node port range options.
func serviceRanges(opts Options) (allocator.IPRange, allocator.PortRange, error) {
	cidr, ports := opts.ServiceCIDR, opts.ServiceNodePortRange
	if cidr == "" {
		cidr = DefaultServiceCIDR
	}
	if ports == "" {
		ports = DefaultServiceNodePortRange
	}
	ipr, err := allocator.ParseIPRange(cidr)
	if err != nil {
		return allocator.IPRange{}, allocator.PortRange{}, fmt.Errorf("--service-cidr: %w", err)
	}
	pr, err := allocator.ParsePortRange(ports)
	if err != nil {
		return allocator.IPRange{}, allocator.PortRange{}, fmt.Errorf("--service-node-port-range: %w", err)
	}
	return ipr, pr, nil
}

// serviceAllocator prepares the persisted ranges and returns the
// allocator the API server's write paths call. It writes IPAddress
// objects, which the API server serves, through the transformer the API
// server reads them with.
func serviceAllocator(ctx context.Context, store *storage.Store, opts Options, enc *encryption.Transformers) (*allocator.Services, error) {
	ipr, pr, err := serviceRanges(opts)
	if err != nil {
		return nil, err
	}
	addrs := store
	if enc != nil {
		addrs = store.WithTransformer(enc.TransformerForResource(networkingv1.Resource("ipaddresses")))
	}
	a := allocator.NewServices(store, ipr, pr, opts.Log, allocator.WithIPAddressStore(addrs))
	if err := a.Init(ctx); err != nil {
		return nil, fmt.Errorf("service ranges: %w", err)
	}
	return a, nil
}

// kubernetesService points the `kubernetes` service at this server's
// advertised address (see withAdvertisedIP).
func kubernetesService(a *allocator.Services, opts Options, port int) *apiserver.KubernetesService {
	return &apiserver.KubernetesService{ClusterIP: a.FirstIP().String(), AdvertiseIP: opts.AdvertiseAddress, Port: int32(port)}
}
