package acp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/tools"
	_ "github.com/reasonix/reasonix/tools/builtin" // the ask tool
)

// fakeEngine plans by asking the server's plan approver, as the
// coordinator does, and answers turns with text.
type fakeEngine struct {
	id   string
	srv  *Server
	plan events.Plan
	mu   sync.Mutex
	ran  []string
	// asks, when set, are the ask tool's arguments Send calls it with,
	// through questions as the coordinator does; each result is sent as
	// text.
	asks      []string
	questions *tools.Questions
}

func (f *fakeEngine) Send(ctx context.Context, text string) error {
	if len(f.asks) == 0 {
		f.srv.Publish(events.Event{Type: events.TextDelta, Session: f.id, Text: "echo: " + text})
		return nil
	}
	ask, _ := tools.Builtin("ask")
	env := &tools.Env{Session: f.id, Asker: f.questions, Publish: func(e events.Event) {
		e.Session, e.Role = f.id, "executor"
		f.srv.Publish(e)
	}}
	for _, a := range f.asks {
		res, err := ask.Execute(ctx, env, json.RawMessage(a))
		if err != nil {
			return err
		}
		f.srv.Publish(events.Event{Type: events.TextDelta, Session: f.id, Text: res.Content + "\n"})
	}
	return nil
}

func (f *fakeEngine) AnswerQuestion(id, answer string) error { return f.questions.Answer(id, answer) }
func (f *fakeEngine) DeclineQuestion(id string) error        { return f.questions.Decline(id) }

func (f *fakeEngine) Plan(ctx context.Context, text string) error {
	// The planner's session has no parent: its events still reach the
	// session that is planning.
	f.srv.Publish(events.Event{Type: events.PlanReady, Session: "planner-1", Plan: &f.plan})
	_, d, err := f.srv.PlanApprover().Approve(ctx, f.plan)
	if err != nil {
		return err
	}
	if d != events.PlanApprove {
		return events.ErrPlanRejected
	}
	f.mu.Lock()
	f.ran = append(f.ran, text)
	f.mu.Unlock()
	f.srv.Publish(events.Event{Type: events.TextDelta, Session: "executor-1", Text: "executed"})
	return nil
}

func (f *fakeEngine) Answer(string, string, string) error { return nil }
func (f *fakeEngine) Interrupt()                          {}
func (f *fakeEngine) SessionID() string                   { return f.id }
func (f *fakeEngine) Close()                              {}

type fakeHost struct {
	eng     *fakeEngine
	posture string
	// open, when set, is the engine Open returns instead of eng;
	// engines, when set, are returned one by one before it.
	open    Engine
	engines []Engine
	// broker, when set, takes the answers to questions of no session.
	broker *permission.Broker
	// ready, when set, is what Ready waits for.
	ready func(context.Context) error
}

func (h *fakeHost) Open() (Engine, error) {
	if len(h.engines) > 0 {
		e := h.engines[0]
		h.engines = h.engines[1:]
		return e, nil
	}
	if h.open != nil {
		return h.open, nil
	}
	return h.eng, nil
}
func (h *fakeHost) Resume(string) (Engine, error)      { return nil, errors.New("no such session") }
func (h *fakeHost) Sessions() ([]store.Summary, error) { return nil, nil }
func (h *fakeHost) Workspace() string                  { return "/work/space" }
func (h *fakeHost) Posture() string                    { return h.posture }
func (h *fakeHost) Answer(id, choice, reason string) error {
	if h.broker != nil {
		return h.broker.Answer(id, choice, reason)
	}
	return h.eng.Answer(id, choice, reason)
}
func (h *fakeHost) SetPosture(m string) error { h.posture = m; return nil }
func (h *fakeHost) Ready(ctx context.Context) error {
	if h.ready != nil {
		return h.ready(ctx)
	}
	return nil
}

// client is an editor: it records updates and answers plan questions
// with answer.
type client struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	// of names the session of each update.
	of     []sdk.SessionId
	asked  []sdk.RequestPermissionRequest
	answer string
	// cancel answers every request as cancelled.
	cancel bool
	// onAsk, when set, answers every request instead (outside c.mu).
	onAsk func(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error)
}

func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	if c.onAsk != nil {
		c.mu.Lock()
		c.asked = append(c.asked, p)
		c.mu.Unlock()
		return c.onAsk(ctx, p)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, p)
	if c.cancel {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(c.answer))}, nil
}

func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	c.of = append(c.of, n.SessionId)
	return nil
}

func (c *client) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, u := range c.updates {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func (c *client) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errors.New("not offered")
}
func (c *client) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errors.New("not offered")
}
func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errors.New("not offered")
}
func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errors.New("not offered")
}
func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errors.New("not offered")
}
func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errors.New("not offered")
}
func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errors.New("not offered")
}

// connect serves a fake engine to an in-memory editor.
func connect(t *testing.T, c *client) (*sdk.ClientSideConnection, *fakeEngine) {
	t.Helper()
	srv := New("test")
	eng := &fakeEngine{id: "e-1", srv: srv, plan: events.Plan{Goal: "Rename the flag", Steps: []events.PlanStep{{ID: "s1", Title: "Rename it"}}},
		questions: tools.NewChoiceQuestions(srv.Publish)}
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, &fakeHost{eng: eng, posture: "ask"}, toAgentR, toClientW) }()
	conn := sdk.NewClientSideConnection(c, toAgentW, toClientR)
	t.Cleanup(func() {
		cancel()
		toAgentW.Close()
		if err := <-done; err != nil {
			t.Error(err)
		}
		toClientW.Close()
	})
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	return conn, eng
}

func TestPlanModeAsksTheEditor(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		answer, want string
		ran          int
	}{
		{"run", "executed", 1},
		{"reject", "The plan was rejected; nothing was changed.", 0},
	} {
		c := &client{answer: tc.answer}
		conn, eng := connect(t, c)
		s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "/work/space/sub", McpServers: []sdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: s.SessionId, ModeId: ModePlan}); err != nil {
			t.Fatal(err)
		}
		resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("rename --foo")}})
		if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("%s: prompt: %v %v", tc.answer, resp.StopReason, err)
		}
		if len(c.asked) != 1 || !strings.Contains(*c.asked[0].ToolCall.Title, "Rename the flag") || len(c.asked[0].Options) != 2 {
			t.Fatalf("%s: plan question = %+v", tc.answer, c.asked)
		}
		if got := c.text(); got != tc.want {
			t.Errorf("%s: answer text = %q, want %q", tc.answer, got, tc.want)
		}
		if len(eng.ran) != tc.ran {
			t.Errorf("%s: plan ran %d times, want %d", tc.answer, len(eng.ran), tc.ran)
		}
		var plan bool
		for _, u := range c.updates {
			plan = plan || u.Plan != nil && len(u.Plan.Entries) == 1 && u.Plan.Entries[0].Content == "s1: Rename it"
		}
		if !plan {
			t.Errorf("%s: the plan was not sent as a plan update", tc.answer)
		}
	}
}

func TestRefusesACwdOutsideTheWorkspace(t *testing.T) {
	conn, _ := connect(t, &client{})
	_, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: "/elsewhere", McpServers: []sdk.McpServer{}})
	if err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("err = %v, want a refusal naming the workspace", err)
	}
}

func TestPromptText(t *testing.T) {
	got := promptText([]sdk.ContentBlock{
		sdk.TextBlock("look at this"),
		sdk.ResourceLinkBlock("a.go", "file:///ws/pkg/a.go"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///ws/b.go", Text: "package b"}}),
		sdk.ImageBlock("AAAA", "image/png"),
	}, "/ws")
	for _, want := range []string{"look at this", "[referenced file: pkg/a.go]", "<file path=\"b.go\">\npackage b\n</file>", "image or audio clip was left out"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt text lacks %q:\n%s", want, got)
		}
	}
}

// TestAskToolQuestionsAsPermissionRequests: the ask tool's question with
// choices reaches the editor as a permission request whose options are
// the choices (and a skip) on a call naming the question; the option
// picked is the model's answer, a cancelled request or a skip leaves the
// model to assume, and a question without choices is not put at all.
func TestAskToolQuestionsAsPermissionRequests(t *testing.T) {
	ctx := context.Background()
	withChoices := `{"question":"Which colour?","choices":["blue","green","blue"]}`
	for _, tc := range []struct {
		name, ask, answer string
		cancel            bool
		asked             int
		want              string
	}{
		{"picked", withChoices, "green", false, 1, "The user answered: green"},
		{"cancelled", withChoices, "", true, 1, "No one to ask in this run: no person can answer. Proceed on a stated assumption"},
		{"skipped", withChoices, SkipOption, false, 1, "The user answered: " + events.QuestionSkipped},
		{"never offered", withChoices, "red", false, 1, "No one to ask in this run"},
		{"no choices", `{"question":"What should it be called?"}`, "green", false, 0, "No one to ask in this run"},
	} {
		c := &client{answer: tc.answer, cancel: tc.cancel}
		conn, eng := connect(t, c)
		eng.asks = []string{tc.ask}
		s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "/work/space", McpServers: []sdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("paint it")}})
		if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("%s: prompt: %v %v", tc.name, resp.StopReason, err)
		}
		if got := c.text(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: the model got %q, want %q…", tc.name, got, tc.want)
		}
		c.mu.Lock()
		asked := append([]sdk.RequestPermissionRequest(nil), c.asked...)
		c.mu.Unlock()
		if len(asked) != tc.asked {
			t.Fatalf("%s: %d permission requests, want %d", tc.name, len(asked), tc.asked)
		}
		if tc.asked == 0 {
			continue
		}
		p := asked[0]
		var ids, names []string
		for _, o := range p.Options {
			ids, names = append(ids, string(o.OptionId)), append(names, o.Name)
		}
		if strings.Join(ids, ",") != "blue,green,"+SkipOption || names[0] != "blue" || names[1] != "green" {
			t.Errorf("%s: options %v %v, want the choices once each and a skip", tc.name, ids, names)
		}
		if p.SessionId != s.SessionId || p.ToolCall.Title == nil || *p.ToolCall.Title != "Question: Which colour?" {
			t.Errorf("%s: request %+v", tc.name, p)
		}
		// The question is a call in the editor's list, started before
		// the request and completed once it is over.
		var started, completed bool
		c.mu.Lock()
		for _, u := range c.updates {
			if u.ToolCall != nil && u.ToolCall.ToolCallId == p.ToolCall.ToolCallId {
				started = true
			}
			if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == p.ToolCall.ToolCallId &&
				u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted {
				completed = true
			}
		}
		c.mu.Unlock()
		if !started || !completed {
			t.Errorf("%s: question call started %v, completed %v", tc.name, started, completed)
		}
	}
}

// A question of no session asked before any session opens (an untrusted
// project MCP server's trust question at start-up) is held and put to the
// editor at the first prompt, as a tool call of its own, and the
// editor's choice answers it before the prompt's turn runs; one
// withdrawn while held is never asked.
func TestSessionlessQuestionWaitsForAPrompt(t *testing.T) {
	ctx := context.Background()
	c := &client{answer: "allow"}
	conn, eng := connect(t, c)
	srv := eng.srv
	broker := permission.NewBroker(srv.Publish)
	srv.host.(*fakeHost).broker = broker
	gone, withdraw := context.WithCancel(ctx)
	withdrawn := make(chan error, 1)
	go func() {
		_, err := broker.Approve(gone, permission.Request{Tool: "mcp server old", Subject: "old-server"})
		withdrawn <- err
	}()
	replies := make(chan permission.Reply, 1)
	go func() {
		r, _ := broker.Approve(ctx, permission.Request{Tool: "mcp server docs", Subject: "docs-server --stdio",
			Choices: []permission.Answer{permission.AllowOnce, permission.AllowAlways, permission.DenyAnswer}})
		replies <- r
	}()
	held := func() int {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.held)
	}
	for held() < 2 {
		time.Sleep(time.Millisecond)
	}
	withdraw()
	if err := <-withdrawn; err == nil {
		t.Fatal("the withdrawn question was answered")
	}
	if n := held(); n != 1 {
		t.Fatalf("%d questions held after one was withdrawn, want 1", n)
	}
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "/work/space", McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	// The prompt's turn runs once what the question decided has settled
	// (Ready, here: once it is answered).
	answered := make(chan permission.Reply, 1)
	srv.host.(*fakeHost).ready = func(ctx context.Context) error {
		select {
		case r := <-replies:
			answered <- r
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-answered:
		if r.Answer != permission.AllowOnce {
			t.Errorf("answer %q, want allow", r.Answer)
		}
	default:
		t.Fatal("the prompt did not wait for the held question's answer")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.asked) != 1 || c.asked[0].SessionId != s.SessionId || !strings.Contains(*c.asked[0].ToolCall.Title, "docs-server") {
		t.Fatalf("permission requests: %+v", c.asked)
	}
	id := c.asked[0].ToolCall.ToolCallId
	var started bool
	for _, u := range c.updates {
		started = started || u.ToolCall != nil && u.ToolCall.ToolCallId == id
	}
	if !started {
		t.Errorf("the question has no tool call of its own (%s)", id)
	}
}

// busyEngine's turn runs until it is interrupted or told to end.
type busyEngine struct {
	fakeEngine
	mu   sync.Mutex
	stop context.CancelFunc
	end  chan struct{}
}

func newBusy(id string) *busyEngine {
	return &busyEngine{fakeEngine: fakeEngine{id: id}, end: make(chan struct{}, 1)}
}

func (b *busyEngine) Send(ctx context.Context, _ string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.mu.Lock()
	b.stop = cancel
	b.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-b.end:
		return nil
	}
}

func (b *busyEngine) Interrupt() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		b.stop()
	}
}

// TestSessionlessQuestionFollowsTheRunningPrompts: with two prompts
// running, a question of no session goes to the one that started first;
// cancelling that prompt passes the question on to the other (not a
// denial), where the editor's allow answers it; one whose session closes
// with no other prompt running is held and asked again (as a new tool
// call) in the next prompt; and one whose prompt's turn ends unanswered
// is held too.
func TestSessionlessQuestionFollowsTheRunningPrompts(t *testing.T) {
	ctx := context.Background()
	c := &client{}
	conn, eng := connect(t, c)
	srv := eng.srv
	host := srv.host.(*fakeHost)
	host.broker = permission.NewBroker(srv.Publish)
	a, b, third := newBusy("e-a"), newBusy("e-b"), newBusy("e-c")
	host.engines = []Engine{a, b, third}
	// The editor answers allow, except where a question should stay
	// open (its request then waits until it is withdrawn).
	var mu sync.Mutex
	open := map[string]bool{}
	keepOpen := func(session, title string, on bool) {
		mu.Lock()
		defer mu.Unlock()
		open[session+" "+title] = on
	}
	c.onAsk = func(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
		mu.Lock()
		wait := open[string(p.SessionId)+" "+*p.ToolCall.Title]
		mu.Unlock()
		if wait {
			<-ctx.Done()
			return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
		}
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow")}, nil
	}
	asked := func(n int) []sdk.RequestPermissionRequest {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			c.mu.Lock()
			got := append([]sdk.RequestPermissionRequest(nil), c.asked...)
			c.mu.Unlock()
			if len(got) >= n {
				return got
			}
		}
		t.Fatalf("the editor was not asked %d times", n)
		return nil
	}
	held := func() int {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.held)
	}
	running := func(id sdk.SessionId, e *busyEngine) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			e.mu.Lock()
			on := e.stop != nil
			e.mu.Unlock()
			if on {
				return
			}
		}
		t.Fatalf("the turn of %s did not start", id)
	}
	type result struct {
		stop sdk.StopReason
		err  error
	}
	prompt := func(id sdk.SessionId, e *busyEngine) chan result {
		done := make(chan result, 1)
		go func() {
			r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("work")}})
			done <- result{r.StopReason, err}
		}()
		running(id, e)
		return done
	}
	question := func(qctx context.Context, name string) chan permission.Reply {
		replies := make(chan permission.Reply, 1)
		go func() {
			r, err := host.broker.Approve(qctx, permission.Request{Tool: "mcp server " + name, Subject: name + "-server",
				Choices: []permission.Answer{permission.AllowOnce, permission.AllowAlways, permission.DenyAnswer}})
			if err != nil {
				r.Answer = "withdrawn"
			}
			replies <- r
		}()
		return replies
	}
	newSession := func() sdk.SessionId {
		s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "/work/space", McpServers: []sdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		return s.SessionId
	}
	sa, sb, sc := newSession(), newSession(), newSession()

	// Two prompts run; the question goes to the one that started first.
	doneA := prompt(sa, a)
	doneB := prompt(sb, b)
	keepOpen(string(sa), "mcp server one: one-server", true)
	one := question(ctx, "one")
	if p := asked(1)[0]; p.SessionId != sa {
		t.Fatalf("the question went to %s, want %s (its prompt started first)", p.SessionId, sa)
	}
	// Cancelling that prompt passes it on; allowed there.
	if err := conn.Cancel(ctx, sdk.CancelNotification{SessionId: sa}); err != nil {
		t.Fatal(err)
	}
	if r := <-doneA; r.err != nil || r.stop != sdk.StopReasonCancelled {
		t.Fatalf("cancelled prompt: %v %v", r.stop, r.err)
	}
	if p := asked(2)[1]; p.SessionId != sb || *p.ToolCall.Title != "mcp server one: one-server" {
		t.Fatalf("after the cancel the question went to %s (%s), want %s", p.SessionId, *p.ToolCall.Title, sb)
	}
	if r := <-one; r.Answer != permission.AllowOnce {
		t.Fatalf("the passed-on question was answered %q, want allow", r.Answer)
	}

	// The only running prompt's session closes: held, then asked in the
	// next prompt as a new call.
	keepOpen(string(sb), "mcp server two: two-server", true)
	two := question(ctx, "two")
	if p := asked(3)[2]; p.SessionId != sb {
		t.Fatalf("the second question went to %s, want %s", p.SessionId, sb)
	}
	if _, err := conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: sb}); err != nil {
		t.Fatal(err)
	}
	<-doneB
	if n := held(); n != 1 {
		t.Fatalf("%d questions held after the session closed, want 1", n)
	}
	select {
	case r := <-two:
		t.Fatalf("the question was answered %q when its session closed", r.Answer)
	default:
	}
	doneC := prompt(sc, third)
	p := asked(4)[3]
	if p.SessionId != sc || *p.ToolCall.Title != "mcp server two: two-server" {
		t.Fatalf("the held question went to %s (%s), want %s", p.SessionId, *p.ToolCall.Title, sc)
	}
	if r := <-two; r.Answer != permission.AllowOnce {
		t.Fatalf("the held question was answered %q, want allow", r.Answer)
	}
	if first := asked(3)[2].ToolCall.ToolCallId; p.ToolCall.ToolCallId == first {
		t.Errorf("asked again under the same call %s", first)
	}

	// A prompt whose turn ends with the question unanswered: held.
	keepOpen(string(sc), "mcp server three: three-server", true)
	qctx, withdraw := context.WithCancel(ctx)
	defer withdraw()
	three := question(qctx, "three")
	if p := asked(5)[4]; p.SessionId != sc {
		t.Fatalf("the third question went to %s, want %s", p.SessionId, sc)
	}
	third.end <- struct{}{}
	if r := <-doneC; r.err != nil || r.stop != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", r.stop, r.err)
	}
	if n := held(); n != 1 {
		t.Fatalf("%d questions held after the prompt ended, want 1", n)
	}
	withdraw()
	if r := <-three; r.Answer != "withdrawn" {
		t.Fatalf("the question left open was answered %q", r.Answer)
	}
	if n := held(); n != 0 {
		t.Errorf("%d questions held after the last was withdrawn", n)
	}

	// Each call ended in the prompt that showed it: failed where the
	// question moved on, completed where it was allowed.
	all := asked(5)
	want := []struct {
		at     sdk.SessionId
		status sdk.ToolCallStatus
	}{{sa, sdk.ToolCallStatusFailed}, {sb, sdk.ToolCallStatusCompleted}, {sb, sdk.ToolCallStatusFailed},
		{sc, sdk.ToolCallStatusCompleted}, {sc, sdk.ToolCallStatusFailed}}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, w := range want {
		id := all[i].ToolCall.ToolCallId
		var got []sdk.ToolCallStatus
		for j, u := range c.updates {
			if c.of[j] == w.at && u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == id && u.ToolCallUpdate.Status != nil {
				got = append(got, *u.ToolCallUpdate.Status)
			}
		}
		if len(got) != 1 || got[0] != w.status {
			t.Errorf("request %d (%s in %s): call statuses %v, want [%s]", i, id, w.at, got, w.status)
		}
	}
}

// TestUnroutedNotices: notices and errors that belong to no open session
// go to the front end's Unrouted function; other events of no session
// (text, tool calls) do not.
func TestUnroutedNotices(t *testing.T) {
	srv := New("test")
	var got []string
	srv.Unrouted(func(e events.Event) { got = append(got, string(e.Type)+":"+e.Text+e.Error) })
	srv.Publish(events.Event{Type: events.Notice, Text: "MCP server x is running (1 tools)"})
	srv.Publish(events.Event{Type: events.Notice, Session: "no-such-session", Text: "resume: skipped a line"})
	srv.Publish(events.Event{Type: events.Error, Error: "boom"})
	srv.Publish(events.Event{Type: events.TextDelta, Text: "not a notice"})
	srv.Publish(events.Event{Type: events.ToolStart, Tool: &events.Tool{CallID: "c1", Name: "ls"}})
	want := []string{"notice:MCP server x is running (1 tools)", "notice:resume: skipped a line", "error:boom"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("unrouted = %q, want %q", got, want)
	}
}
