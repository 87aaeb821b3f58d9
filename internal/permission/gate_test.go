package permission

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

type fakeTool struct {
	name     string
	readOnly bool
	preview  []tools.Preview
}

func (f fakeTool) Name() string            { return f.name }
func (f fakeTool) Description() string     { return "" }
func (f fakeTool) Schema() json.RawMessage { return json.RawMessage(`{}`) }
func (f fakeTool) ReadOnly() bool          { return f.readOnly }
func (f fakeTool) Access(args json.RawMessage) (tools.Access, error) {
	a := describeCall(f.name, args)
	if a.Kind == invalidKind {
		return tools.Access{}, errors.New(a.Detail)
	}
	return a, nil
}
func (f fakeTool) Execute(context.Context, *tools.Env, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, nil
}

type previewTool struct{ fakeTool }

func (p previewTool) Preview(context.Context, *tools.Env, json.RawMessage) ([]tools.Preview, error) {
	return p.preview, nil
}

var (
	bashTool  = fakeTool{name: "bash"}
	writeTool = fakeTool{name: "write_file"}
	readTool  = fakeTool{name: "read_file", readOnly: true}
)

func bashInv(cmd string) tools.Invocation {
	return tools.Invocation{Session: "s1", Role: "executor", Tool: bashTool, Args: bashArgs(cmd)}
}

func mustPolicy(t *testing.T, mode string, allow, ask, deny []string) Policy {
	t.Helper()
	p, err := ParsePolicy(mode, allow, ask, deny, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGateSerializesPrompts(t *testing.T) {
	ap := &ScriptedApprover{Func: func(Request) Answer {
		time.Sleep(2 * time.Millisecond)
		return AllowOnce
	}}
	g := NewGate(GateOptions{Approver: ap, Workspace: t.TempDir()})
	const n = 24
	var wg sync.WaitGroup
	verdicts := make([]tools.Verdict, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			verdicts[i] = g.Authorize(context.Background(), bashInv(fmt.Sprintf("npm install pkg%d", i)))
		}(i)
	}
	wg.Wait()
	for i, v := range verdicts {
		if !v.Allow {
			t.Errorf("call %d refused: %s", i, v.Message)
		}
	}
	if got := len(ap.Requests()); got != n {
		t.Errorf("approver saw %d requests, want %d", got, n)
	}
	if m := ap.MaxConcurrent(); m != 1 {
		t.Errorf("approver saw %d prompts at once, want 1", m)
	}
}

func TestGateSessionGrantSharedAcrossWorkers(t *testing.T) {
	release := make(chan struct{})
	ap := &ScriptedApprover{Func: func(Request) Answer {
		<-release // hold the prompt so the other workers queue behind it
		return AllowSession
	}}
	g := NewGate(GateOptions{Approver: ap, Workspace: t.TempDir()})
	exec := g.ForRole("executor", false)
	sub := g.ForRole("explore", false).WithOverride(mustPolicy(t, "", nil, nil, []string{"Bash(curl:*)"}))
	const n = 16
	var wg sync.WaitGroup
	allowed := make(chan bool, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			view := exec
			if i%2 == 1 {
				view = sub
			}
			allowed <- view.Authorize(context.Background(), bashInv("npm install")).Allow
		}(i)
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	close(allowed)
	for a := range allowed {
		if !a {
			t.Fatal("a worker was refused")
		}
	}
	if got := len(ap.Requests()); got != 1 {
		t.Fatalf("approver asked %d times; the session grant should cover every waiting worker", got)
	}
	if gr := g.Grants(); len(gr) != 1 || gr[0] != "Bash(npm install:*)" {
		t.Fatalf("grants = %q", gr)
	}
	// The grant is per run, not a rule: a denied command stays denied.
	if v := sub.Authorize(context.Background(), bashInv("npm install && curl x")); v.Allow {
		t.Fatal("deny rule of the sub view bypassed by a grant")
	}
}

func TestGateAlwaysAllowSavesPrefixRules(t *testing.T) {
	var mu sync.Mutex
	var saved []string
	ap := &ScriptedApprover{Answers: []Answer{AllowAlways}}
	ws := t.TempDir()
	g := NewGate(GateOptions{Approver: ap, Workspace: ws, ProjectConfig: filepath.Join(ws, "reasonix.toml"),
		SaveRule: func(list, rule string) error {
			mu.Lock()
			defer mu.Unlock()
			if list != "allow" {
				t.Errorf("saved to list %q", list)
			}
			saved = append(saved, rule)
			return nil
		}})
	ctx := context.Background()
	for _, cmd := range []string{"go test ./...", "npm run build", "make", "go test -run X ./pkg"} {
		if v := g.Authorize(ctx, bashInv(cmd)); !v.Allow {
			t.Fatalf("%q refused: %s", cmd, v.Message)
		}
	}
	inv := tools.Invocation{Tool: writeTool, Args: pathArgs("docs/a.md")}
	if v := g.Authorize(ctx, inv); !v.Allow {
		t.Fatal(v.Message)
	}
	want := []string{"Bash(go test:*)", "Bash(npm run:*)", "Bash(make:*)", "Edit(docs/a.md)"}
	if strings.Join(saved, " ") != strings.Join(want, " ") {
		t.Fatalf("saved %q, want %q", saved, want)
	}
	// go test -run X was covered by the saved prefix: four prompts only.
	if got := len(ap.Requests()); got != 4 {
		t.Fatalf("%d prompts, want 4", got)
	}
	if rules := ap.Requests()[0].Rules; len(rules) != 1 || rules[0] != "Bash(go test:*)" {
		t.Fatalf("request offered %q", rules)
	}
}

func TestGateDangerousNeverGranted(t *testing.T) {
	saves := 0
	ap := &ScriptedApprover{Answers: []Answer{AllowAlways, AllowSession, AllowOnce, DenyAnswer}}
	g := NewGate(GateOptions{Approver: ap, Workspace: t.TempDir(),
		Policy:   mustPolicy(t, "yolo", []string{"Bash(rm:*)"}, nil, nil),
		SaveRule: func(string, string) error { saves++; return nil }})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if v := g.Authorize(ctx, bashInv("rm -rf build")); !v.Allow {
			t.Fatalf("attempt %d: %s", i, v.Message)
		}
	}
	v := g.Authorize(ctx, bashInv("rm -rf build"))
	if v.Allow || v.Message != "denied by the user" {
		t.Fatalf("verdict %+v, want denied by the user", v)
	}
	if saves != 0 || len(g.Grants()) != 0 {
		t.Fatalf("dangerous command saved %d times, grants %q", saves, g.Grants())
	}
	reqs := ap.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d prompts, want a fresh one each time", len(reqs))
	}
	if !reqs[0].Dangerous || len(reqs[0].Rules) != 0 || reqs[0].Command != "rm -rf build" || !strings.Contains(reqs[0].Impact, "rm deletes files") {
		t.Fatalf("request %+v", reqs[0])
	}
}

func TestGateHeadless(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "home", "permissions.log")
	g := NewGate(GateOptions{Workspace: t.TempDir(), LogPath: logPath,
		Policy: mustPolicy(t, "", []string{"Bash(go test:*)"}, nil, []string{"Bash(rm -rf /:*)", "Bash(curl:*)"})})
	ctx := context.Background()
	if !g.Headless() {
		t.Fatal("gate without approver is not headless")
	}
	if v := g.Authorize(ctx, bashInv("npm install")); !v.Allow {
		t.Fatalf("ordinary ask refused headless: %s", v.Message)
	}
	v := g.Authorize(ctx, bashInv("rm -rf src"))
	want := `blocked: "rm -rf src" is a dangerous command (rm deletes files) and needs human approval; no one is available to approve in this run. Do not retry it; tell the user what you wanted to run and why.`
	if v.Allow || v.Message != want {
		t.Fatalf("dangerous headless: %+v\nwant %s", v, want)
	}
	if v := g.Authorize(ctx, bashInv("git status; curl -s x")); v.Allow || v.Message != "denied by rule Deny: Bash(curl:*)" {
		t.Fatalf("deny: %+v", v)
	}
	planner := g.ForRole("planner", true)
	if v := planner.Authorize(ctx, bashInv("go test ./...")); v.Allow || v.Message != "plan mode: write tools are disabled" {
		t.Fatalf("plan: %+v", v)
	}
	if v := planner.Authorize(ctx, tools.Invocation{Tool: readTool, Args: pathArgs("x")}); !v.Allow {
		t.Fatalf("plan refused a reader: %s", v.Message)
	}
	if v := g.Authorize(ctx, bashInv("go test ./...")); !v.Allow {
		t.Fatal("the planner view leaked plan mode into the gate")
	}
	if v := planner.WithOverride(mustPolicy(t, "yolo", []string{"Bash"}, nil, nil)).Authorize(ctx, bashInv("ls")); v.Allow {
		t.Fatal("an override lifted plan mode")
	}

	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var entries []logEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e logEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("bad log line %q: %v", sc.Text(), err)
		}
		entries = append(entries, e)
	}
	got := []string{}
	for _, e := range entries {
		got = append(got, e.Decision+"/"+e.By+"/"+e.Rule)
	}
	wantLog := []string{"allow/headless/", "deny/headless/", "deny/rule/Bash(curl:*)", "deny/policy/", "allow/policy/", "allow/rule/Bash(go test:*)", "deny/policy/"}
	if strings.Join(got, " ") != strings.Join(wantLog, " ") {
		t.Fatalf("log = %q, want %q", got, wantLog)
	}
	e := entries[1]
	if e.Tool != "bash" || e.Subject != "rm -rf src" || e.Session != "s1" || e.Role != "executor" || !e.Dangerous || e.Time == "" {
		t.Fatalf("log entry %+v", e)
	}
}

func TestGateLogConcurrentAppends(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "permissions.log")
	g := NewGate(GateOptions{Workspace: t.TempDir(), LogPath: logPath})
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			g.Authorize(context.Background(), bashInv(fmt.Sprintf("echo %d %s", i, strings.Repeat("x", 3000))))
		}(i)
	}
	wg.Wait()
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d log lines, want 50", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("interleaved log line: %.80s…", l)
		}
	}
}

func TestGateUserDenyAndPreview(t *testing.T) {
	ap := &ScriptedApprover{Answers: []Answer{DenyAnswer}}
	g := NewGate(GateOptions{Approver: ap, Workspace: t.TempDir()})
	tool := previewTool{fakeTool{name: "edit_file", preview: []tools.Preview{{Path: "a.go", Operation: "update", Diff: "-x\n+y\n", Added: 1, Removed: 1}}}}
	v := g.Authorize(context.Background(), tools.Invocation{Tool: tool, Args: pathArgs("a.go"), Reason: "fix the bug"})
	if v.Allow || v.Message != "denied by the user" {
		t.Fatalf("verdict %+v", v)
	}
	req := ap.Requests()[0]
	if len(req.Preview) != 1 || req.Preview[0].Diff != "-x\n+y\n" || req.Reason != "fix the bug" || req.Subject != "a.go" ||
		!strings.Contains(req.Impact, "+1 -1") || len(req.Rules) != 1 || req.Rules[0] != "Edit(a.go)" {
		t.Fatalf("request %+v", req)
	}
}

func TestGateConfinesPathsBeforeAsking(t *testing.T) {
	f := newFixture(t)
	c, err := NewConfiner(f.ws, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink(filepath.Join(f.ws, "src"), filepath.Join(f.ws, "docs", "srclink")))
	ap := &ScriptedApprover{Answers: []Answer{AllowOnce}}
	g := NewGate(GateOptions{Approver: ap, Workspace: f.ws, Policy: mustPolicy(t, "", []string{"Edit(docs/**)"}, nil, []string{"Edit(src/**)"})})
	env := &tools.Env{Root: f.ws, Guard: c}
	ctx := context.Background()
	v := g.Authorize(ctx, tools.Invocation{Tool: writeTool, Args: pathArgs("outlink/x"), Env: env})
	if v.Allow || !strings.Contains(v.Message, `path "outlink/x"`) || !strings.Contains(v.Message, "outside the workspace") {
		t.Fatalf("escape: %+v", v)
	}
	// docs/srclink/x is really src/x: the deny rule on src applies.
	v = g.Authorize(ctx, tools.Invocation{Tool: writeTool, Args: pathArgs("docs/srclink/x.go"), Env: env})
	if v.Allow || v.Message != "denied by rule Deny: Edit(src/**)" {
		t.Fatalf("symlinked path: %+v", v)
	}
	if v := g.Authorize(ctx, tools.Invocation{Tool: writeTool, Args: pathArgs("docs/new.md"), Env: env}); !v.Allow {
		t.Fatalf("docs write: %s", v.Message)
	}
	if len(ap.Requests()) != 0 {
		t.Fatalf("asked %d times; every call here is decided by rules or confinement", len(ap.Requests()))
	}
}

func TestGateHonoursContext(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	held := make(chan struct{}, 1)
	ap := &ScriptedApprover{Func: func(Request) Answer {
		held <- struct{}{}
		<-block
		return AllowOnce
	}}
	g := NewGate(GateOptions{Approver: ap, Workspace: t.TempDir()})
	go g.Authorize(context.Background(), bashInv("npm install a")) // holds the prompt
	// Wait until the first question is being asked (a sleep is not
	// enough on a loaded machine: the second call could take the prompt
	// first and wait for ever on the blocked approver).
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	v := g.Authorize(ctx, bashInv("npm install b"))
	if v.Allow || !strings.Contains(v.Message, "approval canceled") {
		t.Fatalf("verdict %+v", v)
	}
}

func TestGateApproverError(t *testing.T) {
	g := NewGate(GateOptions{Workspace: t.TempDir(), Approver: ApproverFunc(func(context.Context, Request) (Reply, error) {
		return Reply{}, errors.New("terminal closed")
	})})
	v := g.Authorize(context.Background(), bashInv("npm install"))
	if v.Allow || !strings.Contains(v.Message, "terminal closed") {
		t.Fatalf("verdict %+v", v)
	}
}

// frontEnd answers approval requests from the event stream the way a
// front end does: by id, through the broker.
type frontEnd struct {
	mu     sync.Mutex
	events []events.Event
	answer func(a *events.Approval) (choice, reason string)
	broker *Broker
	errs   []error
}

func (f *frontEnd) Publish(e events.Event) {
	f.mu.Lock()
	f.events = append(f.events, e)
	answer := f.answer
	f.mu.Unlock()
	if e.Type == events.ApprovalRequest && answer != nil {
		choice, reason := answer(e.Approval)
		// Answer from another goroutine, as a UI or a stdin reader does.
		go func() {
			if err := f.broker.Answer(e.Approval.ID, choice, reason); err != nil {
				f.mu.Lock()
				f.errs = append(f.errs, err)
				f.mu.Unlock()
			}
		}()
	}
}

func (f *frontEnd) set(answer func(a *events.Approval) (choice, reason string)) {
	f.mu.Lock()
	f.answer = answer
	f.mu.Unlock()
}

func (f *frontEnd) of(typ events.Type) []events.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []events.Event
	for _, e := range f.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func TestBrokerCarriesApprovalsOnTheEventStream(t *testing.T) {
	fe := &frontEnd{}
	fe.broker = NewBroker(fe.Publish)
	g := NewGate(GateOptions{Approver: fe.broker, Workspace: t.TempDir(),
		SaveRule: func(string, string) error { return nil }})
	ctx := context.Background()

	fe.set(func(*events.Approval) (string, string) { return "allow_session", "" })
	if v := g.Authorize(ctx, bashInv("npm install")); !v.Allow {
		t.Fatal(v.Message)
	}
	if v := g.Authorize(ctx, bashInv("npm install left-pad")); !v.Allow {
		t.Fatal(v.Message)
	}
	reqs := fe.of(events.ApprovalRequest)
	if len(reqs) != 1 || reqs[0].Approval.Subject != "npm install" || reqs[0].Session != "s1" || reqs[0].Approval.ID == "" {
		t.Fatalf("requests %+v", reqs)
	}
	if got := strings.Join(reqs[0].Approval.Choices, ","); got != "allow,allow_session,allow_always,deny" {
		t.Fatalf("choices %s", got)
	}
	// Deny with a reason: the model is told why.
	fe.set(func(*events.Approval) (string, string) { return "deny", "use pnpm" })
	if v := g.Authorize(ctx, bashInv("yarn add x")); v.Allow || v.Message != "denied by the user: use pnpm" {
		t.Fatalf("deny: %+v", v)
	}
	// A dangerous request offers no standing answer; offering one is refused.
	fe.set(func(a *events.Approval) (string, string) {
		if strings.Join(a.Choices, ",") != "allow,deny" {
			t.Errorf("dangerous choices %v", a.Choices)
		}
		if err := fe.broker.Answer(a.ID, "allow_always", ""); err == nil {
			t.Error("allow_always accepted for a dangerous request")
		}
		return "allow", ""
	})
	if v := g.Authorize(ctx, bashInv("rm -rf build")); !v.Allow {
		t.Fatalf("dangerous once: %+v", v)
	}
	if res := fe.of(events.ApprovalResolved); len(res) != 3 || res[2].Approval.Choice != "allow" {
		t.Fatalf("resolved %+v", res)
	}
	if err := fe.broker.Answer("ap-99", "allow", ""); err == nil {
		t.Fatal("unknown id accepted")
	}
	if _, err := ParseAnswer("maybe"); err == nil {
		t.Fatal("ParseAnswer accepted maybe")
	}
}

func TestBrokerWithdrawsAndCloses(t *testing.T) {
	fe := &frontEnd{}
	fe.broker = NewBroker(fe.Publish)
	g := NewGate(GateOptions{Approver: fe.broker, Workspace: t.TempDir()})

	// Nobody answers; the call is cancelled: the request is withdrawn.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Verdict)
	go func() { done <- g.Authorize(ctx, bashInv("npm install")) }()
	waitFor(t, func() bool { return len(fe.broker.Pending()) == 1 })
	cancel()
	if v := <-done; v.Allow {
		t.Fatal("allowed after cancel")
	}
	res := fe.of(events.ApprovalResolved)
	if len(res) != 1 || res[0].Approval.Choice != "" || len(fe.broker.Pending()) != 0 {
		t.Fatalf("withdrawn: %+v", res)
	}

	// Close denies what waits and everything after it.
	go func() { done <- g.Authorize(context.Background(), bashInv("npm install a")) }()
	waitFor(t, func() bool { return len(fe.broker.Pending()) == 1 })
	fe.broker.Close("stdin closed")
	if v := <-done; v.Allow || v.Message != "denied by the user: stdin closed" {
		t.Fatalf("closed: %+v", v)
	}
	if v := g.Authorize(context.Background(), bashInv("npm install b")); v.Allow || !strings.Contains(v.Message, "stdin closed") {
		t.Fatalf("after close: %+v", v)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSuggestNarrowsInterpreters: "always" for an interpreter names the
// script, never the interpreter alone.
func TestSuggestNarrowsInterpreters(t *testing.T) {
	for cmd, want := range map[string]string{
		"python3 greet.py":          "Bash(python3 greet.py:*)",
		"python3 greet.py --name x": "Bash(python3 greet.py:*)",
		"node scripts/build.js":     "Bash(node scripts/build.js:*)",
		"sh test.sh":                "Bash(sh test.sh:*)",
		"python3 -m pytest":         "Bash(python3 -m pytest)",
		"go test ./...":             "Bash(go test:*)",
		"make":                      "Bash(make:*)",
	} {
		ap := &ScriptedApprover{Answers: []Answer{DenyAnswer}}
		g := NewGate(GateOptions{Policy: mustPolicy(t, "", nil, nil, nil), Approver: ap, Workspace: t.TempDir()})
		g.Authorize(context.Background(), bashInv(cmd))
		reqs := ap.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%q: %d requests", cmd, len(reqs))
		}
		if got := strings.Join(reqs[0].Rules, " "); got != want {
			t.Errorf("%q: always would save %q, want %q", cmd, got, want)
		}
		if rule, err := ParseRule(want); err != nil {
			t.Errorf("%q: %v", want, err)
		} else if strings.Contains(want, ":*") && !strings.HasPrefix(cmd, "go ") && !strings.HasPrefix(cmd, "make") {
			// The rule covers the call it was offered for and not another program.
			other := strings.Replace(cmd, ".", "x.", 1)
			if words := strings.Fields(other); rule.matchWords(words, false) {
				t.Errorf("%q also allows %q", want, other)
			}
		}
	}
}
