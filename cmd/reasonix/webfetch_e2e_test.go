package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EWebFetch: the model fetches a local page an allow rule names and
// its Markdown reaches the next request; a deny rule refuses another host
// before any request leaves, and a redirect to that host is not followed.
func TestE2EWebFetch(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		hits []string
	)
	hit := func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		hits = append(hits, r.Host+r.URL.Path)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		hit(r)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><h2>Install</h2><p>Run <code>make install</code>, then see <a href="/faq">the FAQ</a>.</p></body></html>`)
	})
	page := httptest.NewServer(mux)
	defer page.Close()
	other := strings.Replace(page.URL, "127.0.0.1", "localhost", 1)
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		hit(r)
		http.Redirect(w, r, other+"/page", http.StatusFound)
	})

	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("web_fetch", map[string]any{"url": page.URL + "/page"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("web_fetch", map[string]any{"url": other + "/page"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("web_fetch", map[string]any{"url": page.URL + "/away"})}},
		scripted.Turn{Text: "done"},
	)
	e.write("reasonix.toml", "[permissions]\nmode = \"deny\"\nallow = [\"WebFetch(domain:127.0.0.1)\"]\ndeny = [\"WebFetch(domain:localhost)\"]\n")
	// The project's allow rule applies once the person trusts it.
	if r := e.run("", "trust"); r.code != 0 {
		t.Fatalf("trust: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := e.run("", "run", "read the install page")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	tool := func(i int) string {
		msgs := wireMessages(t, reqs[i])
		return msgs[len(msgs)-1].Content
	}
	if got := tool(1); !strings.Contains(got, "## Install") || !strings.Contains(got, "`make install`") ||
		!strings.Contains(got, "[the FAQ]("+page.URL+"/faq)") {
		t.Errorf("the page's Markdown did not reach the model:\n%s", got)
	}
	if got := tool(2); !strings.Contains(got, "denied by rule Deny: WebFetch(domain:localhost)") {
		t.Errorf("the fetch of another host was not refused by the rule:\n%s", got)
	}
	if got := tool(3); !strings.Contains(got, "redirected to another host: "+other+"/page") || strings.Contains(got, "Install") {
		t.Errorf("the redirect to another host was followed:\n%s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{page.Listener.Addr().String() + "/page", page.Listener.Addr().String() + "/away"}; fmt.Sprint(hits) != fmt.Sprint(want) {
		t.Errorf("the page server saw %q, want %q", hits, want)
	}
}

// TestE2EWebFetchHeadlessNeedsARule: with no person to ask, a fetch from a
// host no rule names is refused in the ask posture (the model is told
// why, and no request leaves); --auto and --yolo let the posture allow it.
// The host is a public name reached through a proxy the environment names
// (the test server plays it): a URL naming this machine would wait for a
// person in every posture (TestE2ERedTeamWebFetchLocal).
func TestE2EWebFetchHeadlessNeedsARule(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		hits int
	)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		fmt.Fprint(w, "fetched body")
	}))
	defer page.Close()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return hits
	}
	for _, tc := range []struct {
		flags []string
		fetch bool
	}{{nil, false}, {[]string{"--auto"}, true}, {[]string{"--yolo"}, true}} {
		e := newE2E(t,
			scripted.Turn{ToolCalls: []scripted.Call{call("web_fetch", map[string]any{"url": "http://docs.example/x?data=secret"})}},
			scripted.Turn{Text: "done"},
		)
		e.env = append(e.env, "HTTP_PROXY="+page.URL, "http_proxy="+page.URL, "NO_PROXY=", "no_proxy=")
		before := count()
		r := e.run("", append(append([]string{"run"}, tc.flags...), "read it")...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", tc.flags, r.code, r.stderr)
		}
		reqs := e.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%v: %d requests", tc.flags, len(reqs))
		}
		msgs := wireMessages(t, reqs[1])
		got := msgs[len(msgs)-1].Content
		if tc.fetch != (count() > before) || tc.fetch != strings.Contains(got, "fetched body") {
			t.Errorf("%v: fetched = %v, want %v:\n%s", tc.flags, count() > before, tc.fetch, got)
		}
		if !tc.fetch && !strings.Contains(got, "no WebFetch(domain:docs.example) rule allows fetching from docs.example") {
			t.Errorf("%v: the refusal does not name the rule that would allow it:\n%s", tc.flags, got)
		}
	}
}
