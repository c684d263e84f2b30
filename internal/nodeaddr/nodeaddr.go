// Package nodeaddr finds the address other machines reach this one at
// when no flag names it: the source address of the default route, as
// upstream's kubelet and API server pick their node and advertise
// addresses.
package nodeaddr

import (
	"errors"
	"net"
)

// Default is the IPv4 address the kernel would send from to reach the
// outside world, or else the first non-loopback IPv4 address of an
// interface.
func Default() (string, error) {
	// A UDP "connection" sends nothing; it only asks the kernel which
	// source address it would use. 192.0.2.1 is a documentation address.
	conn, err := net.Dial("udp4", "192.0.2.1:9")
	if err == nil {
		defer conn.Close()
		return conn.LocalAddr().(*net.UDPAddr).IP.String(), nil
	}
	addrs, err2 := net.InterfaceAddrs()
	if err2 != nil {
		return "", errors.Join(err, err2)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String(), nil
		}
	}
	return "", err
}

// Routable reports whether ip is an address another machine or a pod
// could reach: neither loopback nor unspecified.
func Routable(ip net.IP) bool {
	return ip != nil && !ip.IsLoopback() && !ip.IsUnspecified()
}
