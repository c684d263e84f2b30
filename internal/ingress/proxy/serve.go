package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Listeners are where a Handler serves: plain HTTP (HTTP/1.1, and HTTP/2
// with prior knowledge) and HTTPS (HTTP/1.1 and HTTP/2 by ALPN, the
// certificate chosen by server name). An empty address serves none.
type Listeners struct {
	HTTP, HTTPS string
	// Retry is the wait before another try at a port that could not be
	// bound (5 s when 0).
	Retry time.Duration
	// Bound, when set, is called once every listener is bound.
	Bound func()
	Log   *slog.Logger
}

// Serve serves h on the listeners until ctx ends, then lets the requests
// in flight finish for up to five seconds. A port that cannot be bound
// (another program holds it) is logged and tried again, as the kubelet
// does with its ports, rather than stopping the node.
func (l Listeners) Serve(ctx context.Context, h *Handler) error {
	if l.Retry == 0 {
		l.Retry = 5 * time.Second
	}
	if l.Log == nil {
		l.Log = slog.Default()
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	plain := &http.Server{Handler: h, Protocols: &protocols, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		ConnContext: withOriginalDst, ErrorLog: slog.NewLogLogger(l.Log.Handler(), slog.LevelDebug)}
	secure := &http.Server{Handler: h, TLSConfig: h.TLSConfig(), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		ConnContext: withOriginalDst, ErrorLog: slog.NewLogLogger(l.Log.Handler(), slog.LevelDebug)}

	var bound sync.WaitGroup
	var wg sync.WaitGroup
	serve := func(addr string, srv *http.Server, tls bool) {
		if addr == "" {
			return
		}
		bound.Add(1)
		wg.Go(func() {
			ln := l.listen(ctx, addr)
			bound.Done()
			if ln == nil {
				return
			}
			var err error
			if tls {
				err = srv.ServeTLS(ln, "", "")
			} else {
				err = srv.Serve(ln)
			}
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				l.Log.Error("ingress listener stopped", "addr", addr, "err", err)
			}
		})
	}
	serve(l.HTTP, plain, false)
	serve(l.HTTPS, secure, true)
	go func() {
		bound.Wait()
		if ctx.Err() == nil && l.Bound != nil {
			l.Bound()
		}
	}()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = plain.Shutdown(sctx)
	_ = secure.Shutdown(sctx)
	wg.Wait()
	return nil
}

// listen binds addr, trying again until it can or ctx ends (nil then).
func (l Listeners) listen(ctx context.Context, addr string) net.Listener {
	for {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err == nil {
			l.Log.Info("ingress listening", "addr", ln.Addr().String())
			return ln
		}
		if ctx.Err() != nil {
			return nil
		}
		l.Log.Error("ingress cannot listen; trying again", "addr", addr, "retry", l.Retry, "err", fmt.Errorf("%w (is another program serving this port? --disable-ingress turns Orca's ingress off)", err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(l.Retry):
		}
	}
}
