package web

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
)

type fakeEngine struct {
	id  string
	srv *Server
}

func (f *fakeEngine) Send(_ context.Context, text string) error {
	f.srv.Publish(events.Event{Type: events.TextDelta, Session: f.id, Text: "echo " + text})
	return nil
}
func (f *fakeEngine) Plan(ctx context.Context, text string) error {
	_, d, err := f.srv.PlanApprover().Approve(ctx, events.Plan{Goal: text})
	if err == nil && d != events.PlanApprove {
		err = events.ErrPlanRejected
	}
	return err
}
func (f *fakeEngine) Goal(context.Context, string) error  { return nil }
func (f *fakeEngine) Answer(string, string, string) error { return errors.New("no such question") }
func (f *fakeEngine) AnswerQuestion(string, string) error { return errors.New("no such question") }
func (f *fakeEngine) AnswerElicitation(string, events.ElicitAnswer) error {
	return errors.New("no such request for input")
}
func (f *fakeEngine) Interrupt()                 {}
func (f *fakeEngine) SessionID() string          { return f.id }
func (f *fakeEngine) Commands() []events.Command { return nil }
func (f *fakeEngine) Close()                     {}

type fakeHost struct {
	srv *Server
	// answered records the answers the host took.
	mu       sync.Mutex
	answered []string
}

func (h *fakeHost) Answer(id, choice, _ string) error {
	if id != "ap-1" {
		return errors.New("no pending approval request " + id)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answered = append(h.answered, id+"="+choice)
	return nil
}
func (h *fakeHost) AnswerQuestion(id, answer string) error { return errors.New("no such question") }
func (h *fakeHost) AnswerElicitation(string, events.ElicitAnswer) error {
	return errors.New("no such request for input")
}

func (h *fakeHost) Open() (Engine, error)              { return &fakeEngine{id: "e-1", srv: h.srv}, nil }
func (h *fakeHost) Resume(string) (Engine, error)      { return nil, errors.New("none") }
func (h *fakeHost) Sessions() ([]store.Summary, error) { return nil, nil }
func (h *fakeHost) Workspace() string                  { return "/ws" }

const token = "0123456789abcdef0123"

func newTest(t *testing.T) (*Server, *httptest.Server) {
	t.Helper()
	s, ts, _ := newTestHost(t)
	return s, ts
}

func newTestHost(t *testing.T) (*Server, *httptest.Server, *fakeHost) {
	t.Helper()
	h := &fakeHost{}
	s, err := New(h, Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = s
	// The tests carry the link's token as the secret too, and find the
	// page at the root.
	s.secret, s.base = token, ""
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return s, ts, h
}

func do(t *testing.T, method, url string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader("{}"))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestEveryRequestNeedsTheTokenAndTheOrigin(t *testing.T) {
	_, ts := newTest(t)
	cookie := "reasonix_token=" + token
	for _, c := range []struct {
		name, method, path string
		hdr                map[string]string
		want               int
	}{
		{"page without token", "GET", "/", nil, 401},
		{"script without token", "GET", "/static/app.js", nil, 401},
		{"api without token", "POST", "/api/sessions", nil, 401},
		{"events without token", "GET", "/api/events", nil, 401},
		{"wrong token", "GET", "/", map[string]string{"Cookie": "reasonix_token=0123456789abcdef0124"}, 401},
		{"token in the URL moves to a cookie", "GET", "/?token=" + token, nil, 303},
		{"page with cookie", "GET", "/", map[string]string{"Cookie": cookie}, 200},
		{"cross-origin POST", "POST", "/api/sessions", map[string]string{"Cookie": cookie, "Origin": "http://evil.example"}, 403},
		{"rebinding Host", "GET", "/", map[string]string{"Cookie": cookie, "Host": "evil.example"}, 403},
		{"same-origin POST", "POST", "/api/sessions", map[string]string{"Cookie": cookie, "Origin": ts.URL}, 200},
		{"bearer token", "GET", "/api/sessions", map[string]string{"Authorization": "Bearer " + token}, 200},
		{"the link's token on the API", "GET", "/api/sessions?token=" + token, nil, 401},
	} {
		req, _ := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader("{}"))
		for k, v := range c.hdr {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, res.StatusCode, c.want)
		}
		if c.want == 303 {
			if ck := res.Header.Get("Set-Cookie"); !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict") {
				t.Errorf("cookie %q is not HttpOnly and SameSite=Strict", ck)
			}
		}
	}
}

// readEvents reads SSE data lines until n have arrived.
func readEvents(t *testing.T, url string, hdr map[string]string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out []string
	cur := ""
	sc := bufio.NewScanner(res.Body)
	for len(out) < n && sc.Scan() {
		switch l := sc.Text(); {
		case strings.HasPrefix(l, "id: "):
			cur = strings.TrimPrefix(l, "id: ")
		case strings.HasPrefix(l, "data: "):
			cur += " " + strings.TrimPrefix(l, "data: ")
		case l == "" && cur != "":
			out = append(out, cur)
			cur = ""
		}
	}
	return out
}

func TestEventsResumeWithoutLossOrDoubles(t *testing.T) {
	s, ts := newTest(t)
	if res := do(t, "POST", ts.URL+"/api/sessions", map[string]string{"Authorization": "Bearer " + token}); res.StatusCode != 200 {
		t.Fatal(res.Status)
	}
	for i := 0; i < 5; i++ {
		s.Publish(events.Event{Type: events.TextDelta, Session: "e-1", Text: string(rune('a' + i))})
	}
	all := readEvents(t, ts.URL+"/api/events", nil, 6)
	if len(all) != 6 || !strings.HasPrefix(all[0], "1 ") || !strings.Contains(all[0], `"session_open"`) {
		t.Fatalf("first read: %q", all)
	}
	// A reconnect after event 3 gets 4, 5 and 6, then what comes next.
	go func() {
		time.Sleep(100 * time.Millisecond)
		s.Publish(events.Event{Type: events.TextDelta, Session: "e-1", Text: "f"})
	}()
	again := readEvents(t, ts.URL+"/api/events", map[string]string{"Last-Event-ID": "3"}, 4)
	var ids []string
	for _, e := range again {
		ids = append(ids, strings.Fields(e)[0])
	}
	if strings.Join(ids, ",") != "4,5,6,7" || !strings.Contains(again[3], `"text":"f"`) {
		t.Errorf("resumed read: %q", again)
	}
	// Events of sessions no page opened are not kept.
	s.Publish(events.Event{Type: events.TextDelta, Session: "someone-else", Text: "x"})
	if b, _, _ := s.log.after(7); len(b) != 0 {
		t.Errorf("an unrelated session's event was logged: %s", b[0].data)
	}
}

func TestLogIsBounded(t *testing.T) {
	l := newEventLog(3)
	for i := 0; i < 5; i++ {
		l.add(wire{Event: events.Event{Type: events.Notice, Text: "n"}})
	}
	b, first, _ := l.after(0)
	if len(b) != 3 || first != 3 || b[0].seq != 3 {
		t.Fatalf("kept %d from %d", len(b), first)
	}
	if b, _, _ := l.after(4); len(b) != 1 || b[0].seq != 5 {
		t.Fatalf("after 4: %v", b)
	}
}

func TestPlanWaitsForThePage(t *testing.T) {
	_, ts := newTest(t)
	auth := map[string]string{"Authorization": "Bearer " + token}
	do(t, "POST", ts.URL+"/api/sessions", auth)
	req, _ := http.NewRequest("POST", ts.URL+"/api/sessions/e-1/prompt", strings.NewReader(`{"text":"/plan rename it"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 202 {
		t.Fatalf("prompt: %v %v", res.Status, err)
	}
	res.Body.Close()
	evs := readEvents(t, ts.URL+"/api/events", nil, 3)
	if len(evs) < 3 || !strings.Contains(evs[2], `"plan_request"`) || !strings.Contains(evs[2], `"plan_id":"plan-1"`) {
		t.Fatalf("events: %q", evs)
	}
	req, _ = http.NewRequest("POST", ts.URL+"/api/plans/plan-1", strings.NewReader(`{"decision":"reject"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 204 {
		t.Fatalf("decide: %v %v", res.Status, err)
	}
	evs = readEvents(t, ts.URL+"/api/events", nil, 5)
	if !strings.Contains(evs[3], `"plan_resolved"`) || !strings.Contains(evs[3], `"decision":"reject"`) ||
		!strings.Contains(evs[4], `"turn_done"`) || !strings.Contains(evs[4], "plan rejected") {
		t.Errorf("after the decision: %q", evs)
	}
}

// A question of no session (an MCP server's trust question at start-up,
// before any page connected or any session opened) is kept in the log
// for the page, with its notices, and the answer goes to the host.
func TestSessionlessQuestionWaitsForThePage(t *testing.T) {
	s, ts, h := newTestHost(t)
	ask := &events.Approval{ID: "ap-1", Tool: "mcp server repo-tools", Choices: []string{"allow", "deny"}}
	s.Publish(events.Event{Type: events.ApprovalRequest, Approval: ask})
	s.Publish(events.Event{Type: events.Notice, Text: "MCP server repo-tools is running (2 tools)"})
	// A session-less event that is neither a question nor a notice is not
	// the page's.
	s.Publish(events.Event{Type: events.TextDelta, Text: "stray"})
	evs := readEvents(t, ts.URL+"/api/events", nil, 2)
	if len(evs) != 2 || !strings.Contains(evs[0], `"approval_request"`) || !strings.Contains(evs[0], `"root":""`) ||
		!strings.Contains(evs[0], "repo-tools") || !strings.Contains(evs[1], "is running") {
		t.Fatalf("events: %q", evs)
	}
	if b, _, _ := s.log.after(2); len(b) != 0 {
		t.Errorf("a stray session-less event was logged: %s", b[0].data)
	}
	post := func(body string) int {
		req, _ := http.NewRequest("POST", ts.URL+"/api/approvals/ap-1", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	// No session is open: the host takes the answer.
	if code := post(`{"session":"","choice":"allow"}`); code != 204 {
		t.Fatalf("answer with no session open: %d", code)
	}
	// With a session open, an answer naming no session still goes to the
	// host, not to the session's engine (which knows no ap-1 here).
	do(t, "POST", ts.URL+"/api/sessions", map[string]string{"Authorization": "Bearer " + token})
	if code := post(`{"session":"","choice":"deny"}`); code != 204 {
		t.Fatalf("answer with a session open: %d", code)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if strings.Join(h.answered, ",") != "ap-1=allow,ap-1=deny" {
		t.Errorf("the host took %v", h.answered)
	}
	// A question a subagent of an unknown session asks still reaches the
	// page rather than waiting for an answer no one can give.
	s.Publish(events.Event{Type: events.QuestionRequest, Session: "unknown", Question: &events.Question{ID: "q-1", Text: "which?"}})
	if b, _, _ := s.log.after(3); len(b) != 1 || !strings.Contains(string(b[0].data), `"type":"question"`) {
		t.Errorf("a question of an unknown session was not logged: %d", len(b))
	}
}

// TestTheLinkWorksOnce: the printed link's token is exchanged for a cookie
// holding another secret and is spent: a process that read the link off
// the browser's command line opens nothing with it, while the browser
// that opened it (its cookie sent) is sent on to the page.
func TestTheLinkWorksOnce(t *testing.T) {
	t.Parallel()
	s, err := New(&fakeHost{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	link := "/?token=" + s.Token()
	res := do(t, "GET", ts.URL+link, nil)
	var secret string
	for _, c := range res.Cookies() {
		if c.Name == TokenCookie {
			secret = c.Value
		}
	}
	if res.StatusCode != 303 || secret == "" || secret == s.Token() || len(secret) < 32 {
		t.Fatalf("first use: %d, cookie %q (link token %q)", res.StatusCode, secret, s.Token())
	}
	// The page lives under a random path, which the cookie is kept to: a
	// browser sends a host's cookies to every port of it.
	base := res.Header.Get("Location")
	var path string
	for _, c := range res.Cookies() {
		path = c.Path
	}
	if len(base) < 16 || !strings.HasPrefix(base, "/r-") || !strings.HasSuffix(base, "/") || path != base || strings.Contains(base, s.Token()) {
		t.Fatalf("sent to %q, cookie path %q", base, path)
	}
	cookie := map[string]string{"Cookie": TokenCookie + "=" + secret}
	for _, c := range []struct {
		name, method, path string
		hdr                map[string]string
		want               int
	}{
		{"the link again", "GET", link, nil, 401},
		{"the link again, by the browser that opened it", "GET", link, cookie, 303},
		{"the link's token as a cookie", "GET", base, map[string]string{"Cookie": TokenCookie + "=" + s.Token()}, 401},
		{"the link's token as a bearer", "GET", base + "api/sessions", map[string]string{"Authorization": "Bearer " + s.Token()}, 401},
		{"the cookie", "GET", base + "api/sessions", cookie, 200},
		{"the page", "GET", base, cookie, 200},
		{"the page's script", "GET", base + "static/app.js", cookie, 200},
		{"the secret as a bearer", "GET", base + "api/sessions", map[string]string{"Authorization": "Bearer " + secret}, 200},
		{"the API outside the page's path", "GET", "/api/sessions", cookie, 404},
		{"a path beside the page's", "GET", strings.TrimSuffix(base, "/") + "x/api/sessions", cookie, 404},
	} {
		if res := do(t, c.method, ts.URL+c.path, c.hdr); res.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, res.StatusCode, c.want)
		}
	}
}
