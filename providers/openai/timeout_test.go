package openai_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers"
)

const sseText = "data: {\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}\n\n"
const sseDone = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// holder returns a channel to close at the end of a test and a function
// that holds a handler until then or until its client goes away (the body
// is read first so the server notices the client closing).
func holder() (chan struct{}, func(*http.Request)) {
	ch := make(chan struct{})
	return ch, func(r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-ch:
		}
	}
}

// A server that accepts the request and never answers: first_byte_timeout
// fires and the error names it.
func TestFirstByteTimeout(t *testing.T) {
	release, hold := holder()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hold(r)
	}))
	defer srv.Close()
	defer close(release)
	p := newProvider(t, srv.URL, func(c *providers.Config) {
		c.FirstByteTimeout = 100 * time.Millisecond
		c.MaxAttempts = 2
	})
	start := time.Now()
	_, err := p.Stream(context.Background(), userReq("hi"))
	if err == nil || !strings.Contains(err.Error(), "first_byte_timeout") || !strings.Contains(err.Error(), "gave up after 2 attempts") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

// Headers sent, then nothing: still no first byte of the answer.
func TestFirstByteTimeoutAfterHeaders(t *testing.T) {
	release, hold := holder()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		hold(r)
	}))
	defer srv.Close()
	defer close(release)
	p := newProvider(t, srv.URL, func(c *providers.Config) {
		c.FirstByteTimeout = 100 * time.Millisecond
		c.MaxAttempts = 1
	})
	_, err := p.Stream(context.Background(), userReq("hi"))
	if err == nil || !strings.Contains(err.Error(), "no answer within 100ms") {
		t.Fatalf("err = %v", err)
	}
}

// A stream that goes silent after some text: idle_timeout fires, the text
// already delivered is kept and the error names the timeout.
func TestIdleTimeoutKeepsPartialAnswer(t *testing.T) {
	release, hold := holder()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, sseText, "partial")
		w.(http.Flusher).Flush()
		hold(r)
	}))
	defer srv.Close()
	defer close(release)
	p := newProvider(t, srv.URL, func(c *providers.Config) {
		c.IdleTimeout = 150 * time.Millisecond
		c.FirstByteTimeout = 5 * time.Second
	})
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	a := drain(ch)
	if a.text != "partial" || a.err == nil || !strings.Contains(a.err.Error(), "silent for 150ms (idle_timeout)") {
		t.Fatalf("text %q err %v", a.text, a.err)
	}
}

// A slow but steady stream is not cut by idle_timeout.
func TestIdleTimeoutResetByData(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 5; i++ {
			fmt.Fprintf(w, sseText, "x")
			w.(http.Flusher).Flush()
			time.Sleep(60 * time.Millisecond)
		}
		fmt.Fprint(w, sseDone)
	}))
	defer srv.Close()
	p := newProvider(t, srv.URL, func(c *providers.Config) { c.IdleTimeout = 200 * time.Millisecond })
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if a := drain(ch); a.err != nil || a.text != "xxxxx" {
		t.Fatalf("text %q err %v", a.text, a.err)
	}
}

// A server that takes the TCP connection but never completes the TLS
// handshake: connect_timeout fires.
func TestConnectTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	p := newProvider(t, "https://"+ln.Addr().String(), func(c *providers.Config) {
		c.ConnectTimeout = 100 * time.Millisecond
		c.MaxAttempts = 1
	})
	_, err = p.Stream(context.Background(), userReq("hi"))
	if err == nil || !strings.Contains(err.Error(), "could not connect within 100ms (connect_timeout)") {
		t.Fatalf("err = %v", err)
	}
}

// A stream that breaks before delivering anything is sent again, like a
// 5xx; one that breaks after delivering text is not.
func TestStreamBrokenBeforeAnythingIsRetried(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if n.Add(1) == 1 {
			// A comment, then the connection drops.
			fmt.Fprint(w, ": keep-alive\n\n")
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		fmt.Fprintf(w, sseText, "hello")
		fmt.Fprint(w, sseDone)
	}))
	defer srv.Close()
	p := newProvider(t, srv.URL, nil)
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if a := drain(ch); a.err != nil || a.text != "hello" || n.Load() != 2 {
		t.Fatalf("text %q err %v requests %d", a.text, a.err, n.Load())
	}
}
