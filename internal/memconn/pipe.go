package memconn

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// A connection's two directions are buffers: a write returns as soon as
// its bytes are queued, as on a socket with kernel buffers, rather than
// waiting for the other side to read them (net.Pipe's hand-over). TLS and
// HTTP/2 were written for sockets: both sides may write at once, and a
// side busy writing must not wait for the other to be reading.

// maxQueued bounds what one direction holds before a writer waits.
const maxQueued = 4 << 20

// queue is one direction of a connection.
type queue struct {
	mu     sync.Mutex
	buf    []byte
	eof    bool          // the writing side closed: readers drain, then io.EOF
	broken bool          // the reading side closed: writes fail
	data   chan struct{} // poked when bytes arrive or either side closes
	space  chan struct{} // poked when bytes leave or either side closes
}

func newQueue() *queue {
	return &queue{data: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// pipeConn is one end: it reads from in and writes to out.
type pipeConn struct {
	in, out       *queue
	rd, wd        deadline
	local, remote net.Addr
	closeOnce     sync.Once
	closed        chan struct{}
}

// pipe returns the two ends of a buffered in-memory connection.
func pipe(clientAddr, serverAddr net.Addr) (client, server net.Conn) {
	up, down := newQueue(), newQueue()
	c := &pipeConn{in: down, out: up, rd: newDeadline(), wd: newDeadline(), local: clientAddr, remote: serverAddr, closed: make(chan struct{})}
	s := &pipeConn{in: up, out: down, rd: newDeadline(), wd: newDeadline(), local: serverAddr, remote: clientAddr, closed: make(chan struct{})}
	return c, s
}

func (c *pipeConn) Read(p []byte) (int, error) {
	for {
		select {
		case <-c.closed:
			return 0, io.ErrClosedPipe
		case <-c.rd.wait():
			return 0, os.ErrDeadlineExceeded
		default:
		}
		q := c.in
		q.mu.Lock()
		if len(q.buf) > 0 {
			n := copy(p, q.buf)
			q.buf = q.buf[n:]
			if len(q.buf) == 0 {
				q.buf = nil
			}
			q.mu.Unlock()
			poke(q.space)
			return n, nil
		}
		if q.eof {
			q.mu.Unlock()
			return 0, io.EOF
		}
		q.mu.Unlock()
		if len(p) == 0 {
			return 0, nil
		}
		select {
		case <-q.data:
		case <-c.closed:
			return 0, io.ErrClosedPipe
		case <-c.rd.wait():
			return 0, os.ErrDeadlineExceeded
		}
	}
}

func (c *pipeConn) Write(p []byte) (int, error) {
	written := 0
	for {
		select {
		case <-c.closed:
			return written, io.ErrClosedPipe
		case <-c.wd.wait():
			return written, os.ErrDeadlineExceeded
		default:
		}
		q := c.out
		q.mu.Lock()
		if q.broken {
			q.mu.Unlock()
			return written, io.ErrClosedPipe
		}
		if room := maxQueued - len(q.buf); room > 0 {
			k := min(room, len(p))
			q.buf = append(q.buf, p[:k]...)
			p = p[k:]
			written += k
		}
		q.mu.Unlock()
		poke(q.data)
		if len(p) == 0 {
			return written, nil
		}
		select {
		case <-q.space:
		case <-c.closed:
			return written, io.ErrClosedPipe
		case <-c.wd.wait():
			return written, os.ErrDeadlineExceeded
		}
	}
}

// Close ends both directions: the other side reads what was queued, then
// io.EOF, and its writes fail.
func (c *pipeConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.out.mu.Lock()
		c.out.eof = true
		c.out.mu.Unlock()
		poke(c.out.data)
		c.in.mu.Lock()
		c.in.broken = true
		c.in.buf = nil
		c.in.mu.Unlock()
		poke(c.in.space)
	})
	return nil
}

func (c *pipeConn) LocalAddr() net.Addr  { return c.local }
func (c *pipeConn) RemoteAddr() net.Addr { return c.remote }

func (c *pipeConn) SetDeadline(t time.Time) error {
	c.rd.set(t)
	c.wd.set(t)
	return nil
}

func (c *pipeConn) SetReadDeadline(t time.Time) error  { c.rd.set(t); return nil }
func (c *pipeConn) SetWriteDeadline(t time.Time) error { c.wd.set(t); return nil }

// deadline is a channel closed when the time set passes; setting a new
// time, or none, opens it again.
type deadline struct {
	mu     *sync.Mutex
	timer  **time.Timer
	cancel *chan struct{}
}

func newDeadline() deadline {
	c := make(chan struct{})
	var t *time.Timer
	return deadline{mu: &sync.Mutex{}, timer: &t, cancel: &c}
}

func (d deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if *d.timer != nil && !(*d.timer).Stop() {
		<-*d.cancel // the timer fired: wait for it to have closed the channel
	}
	*d.timer = nil
	expired := isClosed(*d.cancel)
	if t.IsZero() {
		if expired {
			*d.cancel = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if expired {
			*d.cancel = make(chan struct{})
		}
		cancel := *d.cancel
		*d.timer = time.AfterFunc(dur, func() { close(cancel) })
		return
	}
	if !expired {
		close(*d.cancel)
	}
}

func (d deadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.cancel
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
