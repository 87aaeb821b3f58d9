package openai_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers"
)

// connServer answers every request with a short stream and records each
// connection's state changes.
type connServer struct {
	*httptest.Server
	mu     sync.Mutex
	states []http.ConnState
}

func newConnServer(t *testing.T) *connServer {
	t.Helper()
	cs := &connServer{}
	cs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	cs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		cs.mu.Lock()
		cs.states = append(cs.states, s)
		cs.mu.Unlock()
	}
	cs.Start()
	t.Cleanup(cs.Close)
	return cs
}

// count is how many connections reached state s.
func (cs *connServer) count(s http.ConnState) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := 0
	for _, x := range cs.states {
		if x == s {
			n++
		}
	}
	return n
}

// waitFor waits until n connections reached state s.
func (cs *connServer) waitFor(t *testing.T, s http.ConnState, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for cs.count(s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections reached %v within 5s, want %d", cs.count(s), s, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

type preconnecter interface {
	Preconnect(context.Context) func()
}

// TestPreconnectTakenByFirstRequest checks that the connection dialed
// ahead is open before any request and that the first request travels on
// it rather than dialing again.
func TestPreconnectTakenByFirstRequest(t *testing.T) {
	srv := newConnServer(t)
	p := newProvider(t, srv.URL, nil)
	stop := p.(preconnecter).Preconnect(context.Background())
	defer stop()
	srv.waitFor(t, http.StateNew, 1) // dialed with no request yet
	if n := srv.count(http.StateActive); n != 0 {
		t.Fatalf("%d connections carried a request before any was sent", n)
	}
	for i := 0; i < 2; i++ {
		ch, err := p.Stream(context.Background(), userReq("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if a := drain(ch); a.err != nil || a.text != "ok" {
			t.Fatalf("request %d: %q %v", i, a.text, a.err)
		}
	}
	if n := srv.count(http.StateNew); n != 1 {
		t.Fatalf("%d connections for a preconnect and 2 requests, want 1", n)
	}
	stop() // taken: stop leaves it to the transport
	if n := srv.count(http.StateClosed); n != 0 {
		t.Fatalf("stop closed a connection a request had taken")
	}
}

// TestPreconnectUnusedClosed checks that stop closes a connection no
// request took, and that a second Preconnect dials nothing more.
func TestPreconnectUnusedClosed(t *testing.T) {
	srv := newConnServer(t)
	p := newProvider(t, srv.URL, nil).(preconnecter)
	stop := p.Preconnect(context.Background())
	p.Preconnect(context.Background())()
	srv.waitFor(t, http.StateNew, 1)
	stop()
	srv.waitFor(t, http.StateClosed, 1)
	if n := srv.count(http.StateNew); n != 1 {
		t.Fatalf("%d connections dialed, want 1", n)
	}
}

// TestPreconnectFailureLeavesRequestsAlone checks that a dial ahead that
// fails gives the request the connection error it would have had itself,
// once (a retry dials afresh).
func TestPreconnectFailureLeavesRequestsAlone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: every dial is refused
	p := newProvider(t, "http://"+addr, func(c *providers.Config) { c.MaxAttempts = 1 })
	stop := p.(preconnecter).Preconnect(context.Background())
	defer stop()
	_, err = p.Stream(context.Background(), userReq("hi"))
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v, want the request's own connection refused", err)
	}
}
