package openai

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// warmMaxAge bounds how old a connection dialed ahead may be when the
// first request takes it: an older one may have been closed by the server
// or a middlebox meanwhile, so a fresh one is dialed instead.
const warmMaxAge = 10 * time.Second

// warmDial is one TCP connection to the endpoint dialed ahead of the first
// request (Preconnect), handed to the transport's first dial of the same
// address. It is taken at most once.
type warmDial struct {
	network, addr string
	done          chan struct{} // closed when the dial has ended

	mu    sync.Mutex
	conn  net.Conn // set once done is closed, nil after an error
	err   error    // the dial's error
	at    time.Time
	taken bool
}

// dialer dials the transport's connections, handing out the warm one
// first when it is for the same address.
type dialer struct {
	net.Dialer
	mu   sync.Mutex
	warm *warmDial
}

// DialContext is the transport's dial function.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	w := d.warm
	if w != nil && (w.network != network || w.addr != addr) {
		w = nil
	}
	d.mu.Unlock()
	if w != nil {
		select {
		case <-w.done:
			if c, ok, err := w.take(); ok {
				return c, err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return d.Dialer.DialContext(ctx, network, addr)
}

// take hands out the outcome of the dial ahead once: its connection
// while it is young, or its error (a second dial would only make a person
// wait a second connect_timeout for the same failure; retries dial
// afresh). ok is false when there is nothing to hand out.
func (w *warmDial) take() (c net.Conn, ok bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.taken || (w.conn != nil && time.Since(w.at) > warmMaxAge) {
		return nil, false, nil
	}
	w.taken = true
	return w.conn, true, w.err
}

// Preconnect dials the endpoint's TCP connection in the background, so
// that the connect (a network round trip to a remote provider) overlaps
// the rest of start-up instead of standing before the first request. The
// first request's dial to the same address takes it; nothing is sent on
// it before then. A dial ahead that failed is that dial's failure (retried
// as any connection failure), so an unreachable endpoint costs one
// connect_timeout, not two. It does nothing when a proxy would carry the request,
// or when called twice. The returned stop cancels a dial still under way,
// waits for it, and closes the connection if no request took it; call it
// when the provider is no longer used.
func (p *Provider) Preconnect(ctx context.Context) (stop func()) {
	nothing := func() {}
	d := p.dialer
	if d == nil {
		return nothing
	}
	u, err := url.Parse(p.url)
	if err != nil || u.Host == "" {
		return nothing
	}
	// The transport dials the proxy, not the endpoint, when one applies.
	if proxy := p.transport.Proxy; proxy != nil {
		if pu, err := proxy(&http.Request{URL: u}); err != nil || pu != nil {
			return nothing
		}
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	w := &warmDial{network: "tcp", addr: net.JoinHostPort(u.Hostname(), port), done: make(chan struct{})}
	d.mu.Lock()
	if d.warm != nil {
		d.mu.Unlock()
		return nothing
	}
	d.warm = w
	d.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(w.done)
		c, err := d.Dialer.DialContext(ctx, w.network, w.addr)
		w.mu.Lock()
		w.conn, w.err, w.at = c, err, time.Now()
		w.mu.Unlock()
	}()
	return func() {
		cancel()
		<-w.done
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.taken && w.conn != nil {
			_ = w.conn.Close()
			w.taken = true
		}
	}
}
