// Package memconn is a net.Listener whose connections are buffered
// in-memory pipes.
// The components that run inside the server process (controller manager,
// scheduler, the node agent, the API server's own admission informers)
// reach the API through it: the same TLS, client certificates, HTTP/2 and
// handler chain as a client on the network, without a round through the
// kernel's TCP stack for every frame. On loopback TCP each write costs a
// system call that also runs the receiving side's network stack; every
// watch event and every write these components make paid that twice.
package memconn

import (
	"context"
	"net"
	"sync"
)

// Listener hands out the server ends of the pipes its Dial makes.
type Listener struct {
	addr   net.Addr
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

// clientAddr is the address the server sees for an in-process client:
// loopback, as it would see a client on the machine.
var clientAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}

// NewListener returns a listener that reports addr, the address of the
// network listener it stands beside, so that requests look the same.
func NewListener(addr net.Addr) *Listener {
	return &Listener{addr: addr, conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept waits for a Dial.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, &net.OpError{Op: "accept", Net: "memory", Addr: l.addr, Err: net.ErrClosed}
	}
}

// Close stops Accept and Dial; connections already made stay open.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is the address given to NewListener.
func (l *Listener) Addr() net.Addr { return l.addr }

// DialContext connects to the listener. Its signature is the one
// http.Transport and client-go's rest.Config take; network and address
// are ignored.
func (l *Listener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := pipe(clientAddr, l.addr)
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		client.Close()
		server.Close()
		return nil, &net.OpError{Op: "dial", Net: "memory", Addr: l.addr, Err: net.ErrClosed}
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, &net.OpError{Op: "dial", Net: "memory", Addr: l.addr, Err: ctx.Err()}
	}
}
