package openai_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestConnectionReused checks that a finished stream hands its connection
// back for the next request: every request of a session goes to the same
// server, and a new TCP (and TLS) handshake per step is pure latency.
func TestConnectionReused(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, l := range []string{
			`data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}`,
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`data: [DONE]`,
		} {
			_, _ = io.WriteString(w, l+"\n\n")
			w.(http.Flusher).Flush()
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)

	p := newProvider(t, srv.URL, nil)
	for i := 0; i < 3; i++ {
		ch, err := p.Stream(context.Background(), userReq("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if a := drain(ch); a.err != nil || a.text != "ok" {
			t.Fatalf("request %d: %q %v", i, a.text, a.err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 3 sequential requests, want 1", n)
	}
}

// TestStreamEndsAtDoneOnLingeringServer checks that a server holding the
// response open after [DONE] does not hold the consumer.
func TestStreamEndsAtDoneOnLingeringServer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	p := newProvider(t, srv.URL, nil)
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan answer)
	go func() { done <- drain(ch) }()
	select {
	case a := <-done:
		if a.err != nil || a.text != "ok" {
			t.Fatalf("%q %v", a.text, a.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream did not end after [DONE] while the server kept the response open")
	}
}
