package proxy

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"
)

// A Gateway's own address is a Service address the node's service proxy
// translates to the node's ingress port, so the connection arrives with
// the node's address as its destination. The address the client dialled
// is the one conntrack remembers, which SO_ORIGINAL_DST reads.

type origDstKey struct{}

// withOriginalDst is the server's ConnContext: it keeps the connection's
// original destination address in the context of its requests and TLS
// handshake.
func withOriginalDst(ctx context.Context, c net.Conn) context.Context {
	if addr, ok := originalDst(c); ok {
		return context.WithValue(ctx, origDstKey{}, addr)
	}
	return ctx
}

// originalDstOf is the address kept by withOriginalDst, "" without one.
func originalDstOf(ctx context.Context) string {
	addr, _ := ctx.Value(origDstKey{}).(string)
	return addr
}

// originalDst is the IPv4 address a TCP connection was sent to before
// destination NAT (its own local address when there was none).
func originalDst(c net.Conn) (string, bool) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	tcp, ok := c.(*net.TCPConn)
	if !ok {
		return "", false
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		return "", false
	}
	var addr string
	ctlErr := raw.Control(func(fd uintptr) {
		// struct sockaddr_in fits the 16 bytes of an ipv6_mreq, the
		// getsockopt helper of that size.
		m, err := unix.GetsockoptIPv6Mreq(int(fd), unix.SOL_IP, unix.SO_ORIGINAL_DST)
		if err != nil || binary.NativeEndian.Uint16(m.Multiaddr[0:2]) != unix.AF_INET {
			return
		}
		addr = netip.AddrFrom4([4]byte(m.Multiaddr[4:8])).String()
	})
	return addr, ctlErr == nil && addr != ""
}
