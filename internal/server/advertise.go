package server

import (
	"net"
	"slices"

	"github.com/orca-project/orca/internal/nodeaddr"
)

// advertisedIP is the address the `kubernetes` Service's endpoint names:
// where pods on every node reach this API server. As upstream's
// --advertise-address: the flag when it names a routable address, else
// the bind address when it is a specific one (the server listens nowhere
// else), else the node's own address (the in-process agent's --node-ip,
// or the default route's source), so that it is the address the agent
// reports as the node's InternalIP. Loopback is the answer only when
// nothing else can reach the server anyway.
func advertisedIP(advertise, bind, nodeIP string, detect func() (string, error)) string {
	if ip := net.ParseIP(advertise); nodeaddr.Routable(ip) {
		return ip.String()
	}
	if ip := net.ParseIP(bind); ip != nil && !ip.IsUnspecified() {
		return ip.String()
	}
	if ip := net.ParseIP(nodeIP); nodeaddr.Routable(ip) {
		return ip.String()
	}
	if detect != nil {
		if s, err := detect(); err == nil && nodeaddr.Routable(net.ParseIP(s)) {
			return s
		}
	}
	return "127.0.0.1"
}

// resolveAdvertise turns a host name given as --advertise-address into
// an address, since endpoints hold addresses; a name that does not
// resolve is left for advertisedIP to pass over.
func resolveAdvertise(advertise string) string {
	if advertise == "" || net.ParseIP(advertise) != nil {
		return advertise
	}
	if ips, err := net.LookupIP(advertise); err == nil {
		for _, ip := range ips {
			if ip.To4() != nil {
				return ip.String()
			}
		}
	}
	return advertise
}

// kubeconfigHost is where the admin kubeconfig points: this machine's
// loopback when the server listens on every address (the file is for a
// user on this machine, and loopback survives address changes), else the
// one address it listens on.
func kubeconfigHost(bind string) string {
	if ip := net.ParseIP(bind); ip != nil && !ip.IsUnspecified() {
		return ip.String()
	}
	return "127.0.0.1"
}

// withAdvertisedIP settles opts.AdvertiseAddress to the address the
// endpoint names, keeping a host name the user gave as a certificate name.
func withAdvertisedIP(opts Options) Options {
	nodeIP := ""
	if opts.Agent != nil {
		nodeIP = opts.Agent.NodeIP
	}
	given := opts.AdvertiseAddress
	resolved := resolveAdvertise(given)
	ip := advertisedIP(resolved, opts.BindAddress, nodeIP, nodeaddr.Default)
	if given != "" && net.ParseIP(given) == nil {
		opts.ExtraSANs = append(slices.Clone(opts.ExtraSANs), given)
	}
	if given != "" && resolved != ip && opts.Log != nil {
		opts.Log.Warn("--advertise-address is not an address pods can reach; the kubernetes service points at another", "given", given, "advertised", ip)
	}
	opts.AdvertiseAddress = ip
	return opts
}
