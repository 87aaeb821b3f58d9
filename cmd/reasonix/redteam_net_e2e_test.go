//go:build linux

package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2ERedTeamWebFetchLocal: in auto and yolo a hostile model fetched
// whatever this machine served on loopback (and would have had the cloud
// metadata service's credentials at 169.254.169.254): a URL that names a
// local address now waits for a person, whom a headless run has not, and
// no request reaches the service.
func TestE2ERedTeamWebFetchLocal(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		hits int
	)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		fmt.Fprint(w, "INTERNAL-SECRET-31c9")
	}))
	t.Cleanup(func() {
		svc.Close()
		mu.Lock()
		defer mu.Unlock()
		if hits != 0 {
			t.Errorf("the local service got %d requests", hits)
		}
	})
	port := svc.Listener.Addr().(*net.TCPAddr).Port
	urls := []string{svc.URL + "/admin", fmt.Sprintf("http://localhost:%d/admin", port), fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		"http://169.254.169.254/latest/meta-data/iam/security-credentials/"}
	for _, mode := range []string{"auto", "yolo"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			var calls []scripted.Call
			for _, u := range urls {
				calls = append(calls, call("web_fetch", map[string]any{"url": u}))
			}
			e := newE2E(t, scripted.Turn{ToolCalls: calls}, scripted.Turn{Text: "done"})
			r := e.run("", "run", "--"+mode, "look around")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			reqs := e.srv.Requests()
			res := toolResults(t, reqs[len(reqs)-1])
			for i, u := range urls {
				got := res[fmt.Sprintf("call_0_%d", i)]
				if strings.Contains(got, "INTERNAL-SECRET") || !strings.Contains(got, "needs a person's approval") {
					t.Errorf("%s: not refused: %.300s", u, got)
				}
			}
		})
	}
}
