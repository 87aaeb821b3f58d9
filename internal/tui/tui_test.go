package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools"
)

// harness runs an App on a simulation screen against a coordinator whose
// model replays turns.
type harness struct {
	t      *testing.T
	app    *App
	broker *permission.Broker
	sim    tcell.SimulationScreen
	model  *scripted.Provider
	ran    chan error
}

func start(t *testing.T, opts Options, turns ...scripted.Turn) *harness {
	t.Helper()
	return startWith(t, opts, nil, turns...)
}

// startWith is start with the runtime adjusted by edit (nil: none).
func startWith(t *testing.T, opts Options, edit func(rt *orchestrator.Runtime, hub *events.Hub), turns ...scripted.Turn) *harness {
	t.Helper()
	return startLang(t, "", opts, edit, turns...)
}

// startLang is startWith with the UI's language set to lang.
func startLang(t *testing.T, lang string, opts Options, edit func(rt *orchestrator.Runtime, hub *events.Hub), turns ...scripted.Turn) *harness {
	t.Helper()
	h := &harness{t: t, sim: tcell.NewSimulationScreen("UTF-8"), ran: make(chan error, 1)}
	h.model = scripted.NewFromScript(&scripted.Script{Turns: turns})
	opts.Screen = h.sim
	if opts.Frame == 0 {
		opts.Frame = time.Millisecond
	}
	h.app = New(opts)
	h.app.SetLanguage(lang)
	hub := &events.Hub{}
	h.broker = permission.NewBroker(hub.Publish)
	rt := orchestrator.Runtime{
		Workspace: t.TempDir(),
		Resolve: func(string) (providers.Provider, string, error) {
			return h.model, "sim-model", nil
		},
		Gate: tools.AllowAll{},
		Sink: events.Serial(hub),
	}
	if edit != nil {
		edit(&rt, hub)
	}
	coord := orchestrator.New(rt)
	eng, err := orchestrator.NewEngine(coord, hub, h.broker)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { h.ran <- h.app.Run(ctx, eng) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.ran:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
	h.waitFor("Reasonix")
	return h
}

// text is the screen as lines of runes. It reads the cells on the UI
// goroutine, which draws into them.
func (h *harness) text() string {
	var b strings.Builder
	h.app.app.QueueUpdate(func() { h.read(&b) })
	return b.String()
}

func (h *harness) read(b *strings.Builder) {
	cells, w, _ := h.sim.GetContents()
	for i, c := range cells {
		if len(c.Runes) > 0 {
			b.WriteRune(c.Runes[0])
		} else {
			b.WriteByte(' ')
		}
		if (i+1)%w == 0 {
			b.WriteByte('\n')
		}
	}
}

func (h *harness) waitFor(want ...string) string {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := h.text()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("screen never showed %q:\n%s", missing, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
}

func (h *harness) key(k tcell.Key) { h.sim.InjectKey(k, 0, tcell.ModNone) }

func (h *harness) rune(r rune) { h.sim.InjectKey(tcell.KeyRune, r, tcell.ModNone) }

func tool(id, name, subject string, args any) *events.Tool {
	b, _ := json.Marshal(args)
	return &events.Tool{CallID: id, Name: name, Args: b, Subject: subject}
}

func TestEventsRender(t *testing.T) {
	h := start(t, Options{})
	p := h.app.Publish
	p(events.Event{Type: events.SessionStart, Session: "e-1", Role: "executor", Text: "sim-model"})
	p(events.Event{Type: events.ReasoningDelta, Session: "e-1", Text: "Let me think "})
	p(events.Event{Type: events.ReasoningDelta, Session: "e-1", Text: "about it."})
	// A tag split across deltas must not style the transcript.
	p(events.Event{Type: events.TextDelta, Session: "e-1", Text: "Colours like [red"})
	p(events.Event{Type: events.TextDelta, Session: "e-1", Text: "] stay text.\n"})
	start := tool("c1", "read_file", "a.txt", map[string]any{"path": "a.txt"})
	p(events.Event{Type: events.ToolStart, Session: "e-1", Tool: start})
	end := *start
	end.Summary = "read a.txt (3 lines)"
	p(events.Event{Type: events.ToolEnd, Session: "e-1", Tool: &end})
	bad := tool("c2", "bash", "false", map[string]any{"command": "false"})
	bad.IsError, bad.Result = true, "Error: exit status 1\nmore"
	p(events.Event{Type: events.ToolEnd, Session: "e-1", Tool: bad})
	w := events.Event{Session: "x-abcdef12", Role: "explore", Parent: "e-1"}
	w.Type, w.Text = events.SessionStart, "sim-model"
	p(w)
	w.Type, w.Text = events.TextDelta, "worker prose is not the answer"
	p(w)
	w.Type, w.Text, w.Tool = events.ToolEnd, "", &events.Tool{CallID: "c3", Name: "grep", Args: json.RawMessage(`{"pattern":"TODO"}`), Subject: "TODO", Summary: "2 matches"}
	p(w)
	w.Type, w.Tool = events.Done, nil
	p(w)
	p(events.Event{Type: events.TodoUpdate, Session: "e-1", Todos: []events.Todo{
		{Content: "write the parser", Status: "completed"},
		{Content: "test it", ActiveForm: "testing it", Status: "in_progress"},
		{Content: "ship", Status: "pending"},
	}})
	p(events.Event{Type: events.Notice, Text: "a notice"})
	p(events.Event{Type: events.Error, Error: "a failure"})
	p(events.Event{Type: events.UsageUpdate, Usage: &providers.Usage{PromptTokens: 1200, CacheHitTokens: 1000, CompletionTokens: 34}})
	s := h.waitFor(
		"▸ thought for", "(5 words)",
		"Colours like [red] stay text.",
		"✓ read_file a.txt · read a.txt (3 lines)",
		"✗ bash false · exit status 1",
		"▸ [explore abcdef12] done", "1 call",
		"[x] write the parser", "[~] testing it", "[ ] ship",
		"note: a notice", "error: a failure",
		"sim-model", "tokens 1.2k in (1.0k cached) 34 out",
	)
	if strings.Contains(s, "worker prose") {
		t.Errorf("a worker's text reached the transcript:\n%s", s)
	}
	if l := lineWith(s, "✗ bash false"); strings.Contains(l, "more") {
		t.Errorf("an error's later lines reached its tool line:\n%s", s)
	}
	if strings.Contains(s, "Let me think") || strings.Contains(s, "grep TODO") {
		t.Errorf("collapsed blocks show their insides:\n%s", s)
	}
	// Ctrl-T expands the reasoning and the worker's block in place.
	h.key(tcell.KeyCtrlT)
	s = h.waitFor("▾ thought for", "Let me think about it.", "▾ [explore abcdef12] done", "✓ grep TODO · 2 matches")
	if strings.Index(s, "Let me think") > strings.Index(s, "Colours like") {
		t.Errorf("the expanded reasoning moved below the answer:\n%s", s)
	}
}

// TestApprovalKeysFitNarrowScreens: on a narrow terminal the approval's
// key line drops the spelled-out digits and puts deny first, so a cut
// never hides it; on a wide one it spells them out.
func TestApprovalKeysFitNarrowScreens(t *testing.T) {
	h := start(t, Options{})
	req := permission.Request{Tool: "edit_file", Subject: "a.go", Reason: "fix", Impact: "changes 1 file(s)",
		Choices: []permission.Answer{permission.AllowOnce, permission.AllowSession, permission.AllowAlways, permission.DenyAnswer}}
	got := make(chan permission.Answer, 1)
	go func() {
		r, _ := h.broker.Approve(context.Background(), req)
		got <- r.Answer
	}()
	for _, c := range []struct {
		w, h       int
		want, gone string
	}{
		{60, 20, "n/Esc deny y once s session a always", "allow once"},
		{120, 35, "y/1 allow once  s/2 this session  a/3 always  n/4/Esc deny", "y once"},
		{50, 20, "n/Esc deny", "allow once"},
		// Cut on the narrowest terminal, the line keeps the way to say no.
		{40, 10, "n/Esc deny y once", "allow once"},
	} {
		h.sim.SetSize(c.w, c.h)
		h.postEvent(tcell.NewEventResize(c.w, c.h))
		if s := h.waitFor(c.want); strings.Contains(s, c.gone) {
			t.Errorf("at %dx%d the key line shows %q:\n%s", c.w, c.h, c.gone, s)
		}
	}
	h.rune('n')
	if a := <-got; a != permission.DenyAnswer {
		t.Errorf("n answered %v", a)
	}
}

// TestApprovalFieldsWrapUnderTheirValue: a reason too long for one row
// of the overlay continues under the value, not under the label, at 80
// columns and again after a resize.
func TestApprovalFieldsWrapUnderTheirValue(t *testing.T) {
	h := start(t, Options{})
	req := permission.Request{Tool: "bash", Command: "make test",
		Reason: "run the whole test suite once more, because the previous run failed in the parser package and the fix needs checking",
		Impact: "runs a shell command", Choices: []permission.Answer{permission.AllowOnce, permission.DenyAnswer}}
	got := make(chan permission.Answer, 1)
	go func() {
		r, _ := h.broker.Approve(context.Background(), req)
		got <- r.Answer
	}()
	check := func(w, hgt int) {
		t.Helper()
		h.sim.SetSize(w, hgt)
		h.postEvent(tcell.NewEventResize(w, hgt))
		s := h.waitFor("approve bash?", "needs checking")
		rows := strings.Split(s, "\n")
		for i, r := range rows {
			j := strings.Index(r, "reason   ")
			if j < 0 {
				continue
			}
			value := j + len("reason   ")
			next := rows[i+1]
			k := strings.IndexFunc(next[strings.Index(next, "║")+len("║"):], func(r rune) bool { return r != ' ' })
			if k < 0 || strings.Index(next, "║")+len("║")+k != value {
				t.Errorf("at %dx%d the reason's second row does not start under its value:\n%s\n%s", w, hgt, r, next)
			}
			return
		}
		t.Fatalf("no reason row:\n%s", s)
	}
	check(80, 24)
	check(100, 30)
	h.rune('n')
	<-got
}

// TestApprovalDiffScrolls: a diff taller than the screen keeps the
// overlay's keys in sight; Down and PgDn scroll the diff to its end, and
// the answer keys still answer.
func TestApprovalDiffScrolls(t *testing.T) {
	h := start(t, Options{})
	h.sim.SetSize(80, 24)
	h.postEvent(tcell.NewEventResize(80, 24))
	var diff strings.Builder
	diff.WriteString("--- a/big.go\n+++ b/big.go\n@@ -1,0 +1,60 @@\n")
	for i := range 60 {
		fmt.Fprintf(&diff, "+added line %02d\n", i+1)
	}
	req := permission.Request{Tool: "edit_file", Subject: "big.go", Reason: "grow the file", Impact: "changes 1 file(s): +60 -0",
		Preview: []tools.Preview{{Path: "big.go", Operation: "update", Diff: diff.String(), Added: 60}},
		Choices: []permission.Answer{permission.AllowOnce, permission.DenyAnswer}}
	got := make(chan permission.Answer, 1)
	go func() {
		r, _ := h.broker.Approve(context.Background(), req)
		got <- r.Answer
	}()
	s := h.waitFor("approve edit_file?", "+added line 01", "y/1 allow once", "n/4/Esc deny")
	if strings.Contains(s, "added line 60") {
		t.Fatalf("the whole diff fits; the test needs a taller one:\n%s", s)
	}
	for range 3 {
		h.key(tcell.KeyPgDn)
	}
	for range 20 {
		h.key(tcell.KeyDown)
	}
	s = h.waitFor("+added line 60", "y/1 allow once")
	if strings.Contains(s, "added line 01") {
		t.Errorf("the diff did not scroll:\n%s", s)
	}
	h.rune('y')
	select {
	case a := <-got:
		if a != permission.AllowOnce {
			t.Errorf("y answered %v", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("y did not answer after scrolling")
	}
}

func TestApprovalOverlayAnswers(t *testing.T) {
	h := start(t, Options{})
	req := permission.Request{Tool: "edit_file", Subject: "a.go", Reason: "fix the bug", Impact: "changes 1 file(s): +1 -1",
		Preview: []tools.Preview{{Path: "a.go", Operation: "update", Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-old line\n+new line\n", Added: 1, Removed: 1}},
		Rules:   []string{"Edit(a.go)"},
		Choices: []permission.Answer{permission.AllowOnce, permission.AllowSession, permission.AllowAlways, permission.DenyAnswer}}
	cases := []struct {
		key  tcell.Key
		r    rune
		want permission.Answer
	}{
		{tcell.KeyRune, 'y', permission.AllowOnce}, {tcell.KeyRune, '1', permission.AllowOnce},
		{tcell.KeyRune, 's', permission.AllowSession}, {tcell.KeyRune, '2', permission.AllowSession},
		{tcell.KeyRune, 'a', permission.AllowAlways}, {tcell.KeyRune, '3', permission.AllowAlways},
		{tcell.KeyRune, 'n', permission.DenyAnswer}, {tcell.KeyRune, '4', permission.DenyAnswer},
		{tcell.KeyEscape, 0, permission.DenyAnswer},
	}
	for _, c := range cases {
		got := make(chan permission.Answer, 1)
		go func() {
			r, err := h.broker.Approve(context.Background(), req)
			if err != nil {
				t.Errorf("approve: %v", err)
			}
			got <- r.Answer
		}()
		s := h.waitFor("approve edit_file?", "-old line", "+new line", "fix the bug", "a/3 always", "saves Edit(a.go)")
		if strings.Contains(s, "DANGEROUS") {
			t.Fatalf("ordinary request shown as dangerous:\n%s", s)
		}
		h.sim.InjectKey(c.key, c.r, tcell.ModNone)
		select {
		case a := <-got:
			if a != c.want {
				t.Errorf("key %q/%v answered %v, want %v", c.r, c.key, a, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("key %q/%v was not answered", c.r, c.key)
		}
		waitGone(t, h, "approve edit_file?")
	}

	// Dangerous: no always-allow, and 'a' answers nothing.
	danger := permission.Request{Tool: "bash", Command: "rm -rf build", Subject: "rm -rf build", Impact: "runs a shell command", Dangerous: true,
		Choices: []permission.Answer{permission.AllowOnce, permission.DenyAnswer}}
	got := make(chan permission.Answer, 1)
	go func() {
		r, _ := h.broker.Approve(context.Background(), danger)
		got <- r.Answer
	}()
	s := h.waitFor("DANGEROUS", "rm -rf build", "n/4/Esc deny")
	if strings.Contains(s, "a/3 always") || strings.Contains(s, "this session") {
		t.Errorf("a standing answer offered for a dangerous request:\n%s", s)
	}
	h.rune('a')
	h.rune('s')
	select {
	case a := <-got:
		t.Fatalf("'a' or 's' answered a dangerous request with %v", a)
	case <-time.After(100 * time.Millisecond):
	}
	h.rune('y')
	if a := <-got; a != permission.AllowOnce {
		t.Errorf("dangerous y = %v", a)
	}

	// A cancelled context closes the overlay and returns the error.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := h.broker.Approve(ctx, req)
		errc <- err
	}()
	h.waitFor("approve edit_file?")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled approval: %v", err)
	}
	waitGone(t, h, "approve edit_file?")
}

func waitGone(t *testing.T, h *harness, s string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for strings.Contains(h.text(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("%q still on screen:\n%s", s, h.text())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPlanOverlayDecisions(t *testing.T) {
	plan, err := orchestrator.ParsePlan([]byte(`{"goal":"add x","steps":[{"id":"s1","title":"write x.go"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	edited := plan
	edited.Steps = []orchestrator.PlanStep{{ID: "s1", Title: "write y.go"}}
	var edits int
	h := start(t, Options{EditPlan: func(_ context.Context, draft []byte) (orchestrator.Plan, []byte, error) {
		edits++
		switch edits {
		case 1:
			return orchestrator.Plan{}, []byte("{broken"), errors.New("edited plan: decode plan: unexpected EOF")
		case 2:
			if string(draft) != "{broken" {
				t.Errorf("second edit did not start from the broken draft: %q", draft)
			}
			return plan, plan.JSON(), nil
		}
		return edited, edited.JSON(), nil
	}})
	approver := h.app.PlanApprover()
	decide := func(keys ...rune) (orchestrator.Plan, orchestrator.PlanDecision) {
		t.Helper()
		type res struct {
			p orchestrator.Plan
			d orchestrator.PlanDecision
		}
		got := make(chan res, 1)
		go func() {
			p, d, err := approver.Approve(context.Background(), plan)
			if err != nil {
				t.Errorf("plan approve: %v", err)
			}
			got <- res{p, d}
		}()
		h.waitFor("run this plan?", "write x.go", "a approve")
		for _, k := range keys {
			if k == 0x1b {
				h.key(tcell.KeyEscape)
			} else {
				h.rune(k)
			}
		}
		select {
		case r := <-got:
			waitGone(t, h, "run this plan?")
			return r.p, r.d
		case <-time.After(5 * time.Second):
			t.Fatalf("keys %q decided nothing:\n%s", keys, h.text())
		}
		return plan, -1
	}
	if _, d := decide('a'); d != orchestrator.PlanApprove {
		t.Errorf("a = %v", d)
	}
	if _, d := decide('r'); d != orchestrator.PlanReject {
		t.Errorf("r = %v", d)
	}
	if _, d := decide(0x1b); d != orchestrator.PlanReject {
		t.Errorf("Esc = %v", d)
	}
	// e (invalid edit: the overlay stays and says why), e (unchanged:
	// says so), e (a real change: runs the edited plan).
	type res struct {
		p orchestrator.Plan
		d orchestrator.PlanDecision
	}
	got := make(chan res, 1)
	go func() {
		p, d, _ := approver.Approve(context.Background(), plan)
		got <- res{p, d}
	}()
	h.waitFor("run this plan?")
	h.rune('e')
	h.waitFor("unexpected EOF")
	h.rune('e')
	h.waitFor("the plan was not changed")
	h.rune('e')
	r := <-got
	if r.d != orchestrator.PlanEdit || r.p.Steps[0].Title != "write y.go" {
		t.Errorf("edit = %v %+v", r.d, r.p)
	}
}

// TestChatTurnCommandsAndQuit drives the composer: a chat turn reaches the
// model and its answer streams in, commands answer, and Ctrl-C twice on an
// idle composer ends Run with no error.
func TestChatTurnCommandsAndQuit(t *testing.T) {
	h := start(t, Options{}, scripted.Turn{Text: "Hello from the model.", ChunkSize: 3})
	h.typeText("hi there")
	h.key(tcell.KeyEnter)
	h.waitFor("› hi there", "Hello from the model.", "ready")
	if reqs := h.model.Requests(); len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	h.typeText("/help")
	h.key(tcell.KeyEnter)
	h.waitFor("/quit             leave", "Ctrl-C       interrupt the running turn")
	h.typeText("/bogus")
	h.key(tcell.KeyEnter)
	h.waitFor("unknown command /bogus")
	h.typeText("/goal")
	h.key(tcell.KeyEnter)
	h.waitFor("no goal; /goal TEXT sets one")
	h.key(tcell.KeyCtrlC)
	h.waitFor("press Ctrl-C again")
	h.key(tcell.KeyCtrlC)
	select {
	case err := <-h.ran:
		if err != nil {
			t.Errorf("quit: %v", err)
		}
		h.ran <- nil // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("two Ctrl-Cs did not quit")
	}
}

// TestClearAsksFirst: /clear asks before starting a new conversation; no
// keeps the transcript, yes clears it. /new does not ask.
func TestClearAsksFirst(t *testing.T) {
	h := start(t, Options{}, scripted.Turn{Text: "KEEP-ME answer"})
	h.typeText("hello")
	h.key(tcell.KeyEnter)
	h.waitFor("KEEP-ME answer", "ready")
	h.typeText("/clear")
	h.key(tcell.KeyEnter)
	h.waitFor("Start a new conversation?")
	h.rune('n')
	waitGone(t, h, "Start a new conversation?")
	if !strings.Contains(h.text(), "KEEP-ME answer") {
		t.Fatal("answering no cleared the transcript")
	}
	h.typeText("/clear")
	h.key(tcell.KeyEnter)
	h.waitFor("Start a new conversation?")
	h.rune('y')
	h.waitFor("new conversation")
	waitGone(t, h, "KEEP-ME answer")
	h.typeText("/new")
	h.key(tcell.KeyEnter)
	if s := h.waitFor("new conversation"); strings.Contains(s, "Start a new conversation?") {
		t.Error("/new asked")
	}
}

// TestPlanStepsRender: each running plan step has its line and its place
// in the status line; workers' prose stays out of the transcript; their
// tool lines and approvals name the step.
func TestPlanStepsRender(t *testing.T) {
	h := start(t, Options{})
	p := h.app.Publish
	h.app.post(func() { h.app.cancel, h.app.workStart = func() {}, time.Now() }) // a turn is in flight
	for _, id := range []string{"s1", "s2"} {
		p(events.Event{Type: events.StepUpdate, Step: id, StepResult: &events.StepResult{Step: id, Title: "write " + id, Status: events.StepRunning}})
	}
	p(events.Event{Type: events.TextDelta, Session: "e-1", Step: "s1", Text: "worker prose"})
	p(events.Event{Type: events.ToolEnd, Session: "e-1", Step: "s1", Tool: &events.Tool{CallID: "c1", Name: "write_file", Args: json.RawMessage(`{"path":"a.go"}`), Subject: "a.go", Summary: "wrote a.go"}})
	h.waitFor("[step s1] write s1 · running", "[step s2] write s2 · running", "2 step(s)")
	p(events.Event{Type: events.StepUpdate, Step: "s1", StepResult: &events.StepResult{Step: "s1", Status: events.StepDone, Summary: "wrote it", Files: []string{"a.go"}}})
	p(events.Event{Type: events.StepUpdate, Step: "s2", StepResult: &events.StepResult{Step: "s2", Status: events.StepFailed, Summary: "no such API"}})
	s := h.waitFor("▸ [step s1: write s1] done: wrote it (a.go)", "▸ [step s2: write s2] failed: no such API")
	if strings.Contains(s, "worker prose") {
		t.Errorf("a plan worker's prose reached the transcript:\n%s", s)
	}
	if strings.Contains(s, "step(s)") {
		t.Errorf("finished steps still shown as running:\n%s", s)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.broker.Approve(context.Background(), permission.Request{Tool: "bash", Command: "go test", Step: "s3",
			Choices: []permission.Answer{permission.AllowOnce, permission.DenyAnswer}})
	}()
	h.waitFor("approve bash?", "step     s3")
	h.rune('n')
	<-done
	// A worker's question says which step asks.
	p(events.Event{Type: events.QuestionRequest, Session: "e-3", Role: "executor", Step: "s3", Question: &events.Question{ID: "q-9", Text: "Which table?"}})
	h.waitFor("step s3 asks:", "Which table?")
	p(events.Event{Type: events.QuestionResolved, Session: "e-3", Step: "s3", Question: &events.Question{ID: "q-9"}})
	waitGone(t, h, "Which table?")
	h.app.post(func() { h.app.cancel = nil })
}

// TestCompactAndContext: /context and /compact reach the engine (the
// scripted model has no known window, which a compaction by hand does not
// need; with no earlier work it says there is nothing to fold);
// a compaction event is a transcript line and sets the status line's
// context percentage, as a usage event with a window does.
func TestCompactAndContext(t *testing.T) {
	h := start(t, Options{})
	h.typeText("/context")
	h.key(tcell.KeyEnter)
	h.waitFor("the window is unknown (context_window = 0)", "system", "history")
	h.typeText("/compact the parser")
	h.key(tcell.KeyEnter)
	h.waitFor("nothing to compact: the conversation has no earlier work to fold")
	h.app.Publish(events.Event{Type: events.UsageUpdate, Session: "e-1", Usage: &providers.Usage{PromptTokens: 600},
		Context: &events.ContextInfo{Used: 600, Limit: 1000, Percent: 60}})
	h.waitFor("context 600/1.0k (60%)")
	h.app.Publish(events.Event{Type: events.Compacted, Session: "e-1", Text: "compacted the context: ~900 → ~300 tokens of 1000",
		Context: &events.ContextInfo{Used: 300, Limit: 1000, Percent: 30, Before: 900, After: 300, Folded: 8}})
	h.waitFor("compacted: compacted the context: ~900 → ~300 tokens of 1000", "context 300/1.0k (30%)")
}

// An unknown /name names the closest commands; a path is a message.
func TestUnknownCommandSuggestsAndPathsAreText(t *testing.T) {
	h := start(t, Options{}, scripted.Turn{Match: "usr/bin/env", Text: "Sent as a message."})
	h.typeText("/hepl")
	h.key(tcell.KeyEnter)
	h.waitFor("unknown command /hepl; did you mean /help?")
	h.typeText("/usr/bin/env is missing")
	h.key(tcell.KeyEnter)
	h.waitFor("Sent as a message.")
}

// lineWith is the first line of s containing want.
func lineWith(s, want string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, want) {
			return l
		}
	}
	return ""
}

// askTool asks what the model puts in its arguments, through the Asker.
type askTool struct{}

func (askTool) Name() string            { return "ask" }
func (askTool) Description() string     { return "ask the user" }
func (askTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (askTool) ReadOnly() bool          { return true }
func (askTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var q events.Question
	json.Unmarshal(raw, &q)
	a, err := env.Asker.Ask(ctx, env, q)
	return tools.Result{Content: "The user answered: " + a}, err
}

// TestQuestionOverlay: the ask tool's question opens an overlay with its
// choices; a number picks one and the model gets it.
func TestQuestionOverlay(t *testing.T) {
	h := startWith(t, Options{}, func(rt *orchestrator.Runtime, hub *events.Hub) {
		rt.Tools = tools.NewRegistry(askTool{})
		rt.Env = tools.NewEnv(rt.Workspace)
		rt.Env.Asker = tools.NewQuestions(hub.Publish)
	},
		scripted.Turn{ToolCalls: []scripted.Call{{Name: "ask", Arguments: `{"text":"Which colour?","choices":["blue","green, the darker shade the brand guide lists for buttons and links on light backgrounds"]}`}}},
		scripted.Turn{Text: "Going with the answer."},
	)
	h.typeText("style it")
	h.key(tcell.KeyEnter)
	s := h.waitFor("question", "Which colour?", "1 blue", "2 green", "answer:")
	// The long choice continues under its text (80 columns), not under
	// its number.
	rows := strings.Split(s, "\n")
	for i, r := range rows {
		if j := strings.Index(r, "2 green"); j >= 0 {
			next := rows[i+1]
			if k := strings.Index(next, "║"); k < 0 || strings.TrimSpace(next[k+len("║"):j+2]) != "" || next[j+2] == ' ' {
				t.Errorf("the long choice's second row is not under its text:\n%s\n%s", r, next)
			}
		}
	}
	h.typeText("2")
	h.key(tcell.KeyEnter)
	h.waitFor("Going with the answer.")
	waitGone(t, h, "Which colour?")
	reqs := h.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Content != "The user answered: green, the darker shade the brand guide lists for buttons and links on light backgrounds" {
		t.Errorf("the model got %q", last.Content)
	}
}
