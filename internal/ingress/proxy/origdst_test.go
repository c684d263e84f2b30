package proxy

import (
	"context"
	"net"
	"testing"
)

// Without destination NAT the original destination is the address the
// connection was accepted on (or unknown, where conntrack is not loaded),
// never another one.
func TestOriginalDstWithoutNAT(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := net.Dial("tcp4", ln.Addr().String()); err == nil {
			defer c.Close()
			_, _ = c.Read(make([]byte, 1))
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if addr, ok := originalDst(c); ok && addr != "127.0.0.1" {
		t.Errorf("original destination %s, want 127.0.0.1", addr)
	}
	ctx := withOriginalDst(context.Background(), c)
	if got := originalDstOf(ctx); got != "" && got != "127.0.0.1" {
		t.Errorf("context says %s", got)
	}
	if originalDstOf(context.Background()) != "" {
		t.Error("an address out of nowhere")
	}
	// Not a TCP connection: nothing.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, ok := originalDst(a); ok {
		t.Error("a pipe has an original destination")
	}
}
