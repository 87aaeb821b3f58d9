package web

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/benchtest"
)

// TestEventLatencyBench prints the time from an engine publishing an
// event to the page's event stream delivering it over real HTTP, the
// figure a streamed answer feels like. `make bench` only.
func TestEventLatencyBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") == "" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	s, ts := newTest(t)
	do(t, "POST", ts.URL+"/api/sessions", map[string]string{"Authorization": "Bearer " + token})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/events?since=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	d := benchtest.Median(500, func() {
		s.Publish(events.Event{Type: events.TextDelta, Session: "e-1", Text: "chunk"})
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				return
			}
		}
		t.Fatal("stream ended")
	})
	fmt.Printf("serve: event latency engine to page %.3f ms median over 500 events (target < 16 ms)\n", benchtest.Ms(d))
}
