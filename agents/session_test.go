package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/tools"
)

// fakeProvider replays canned assistant turns and records each request's
// wire bytes the way an HTTP provider would send them.
type fakeProvider struct {
	mu    sync.Mutex
	turns []providers.Chunk
	reqs  [][]byte
	errs  map[int]error
}

func (f *fakeProvider) Name() string { return "fake" }

func (f *fakeProvider) Stream(ctx context.Context, req providers.Request) (<-chan providers.Chunk, error) {
	f.mu.Lock()
	n := len(f.reqs)
	var b []byte
	for i, r := range req.Encoded {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	f.reqs = append(f.reqs, b)
	var turn providers.Chunk
	if n < len(f.turns) {
		turn = f.turns[n]
	} else {
		turn = providers.Chunk{Text: "done"}
	}
	f.mu.Unlock()
	ch := make(chan providers.Chunk, 2)
	turn.Usage = &providers.Usage{PromptTokens: 10, CompletionTokens: 2}
	ch <- turn
	if err := f.errs[n]; err != nil {
		ch <- providers.Chunk{Err: err}
	}
	close(ch)
	return ch, nil
}

type stubTool struct {
	name     string
	readOnly bool
	delay    time.Duration
	running  *int32
	peak     *int32
	calls    *[]string
	mu       *sync.Mutex
}

func (t stubTool) Name() string            { return t.name }
func (t stubTool) Description() string     { return "stub " + t.name }
func (t stubTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (t stubTool) ReadOnly() bool          { return t.readOnly }
func (t stubTool) Execute(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	if t.running != nil {
		n := atomic.AddInt32(t.running, 1)
		for {
			p := atomic.LoadInt32(t.peak)
			if n <= p || atomic.CompareAndSwapInt32(t.peak, p, n) {
				break
			}
		}
		defer atomic.AddInt32(t.running, -1)
	}
	if t.calls != nil {
		t.mu.Lock()
		*t.calls = append(*t.calls, t.name+string(args))
		t.mu.Unlock()
	}
	time.Sleep(t.delay)
	if strings.Contains(string(args), "fail") {
		return tools.Result{}, errors.New("asked to fail")
	}
	return tools.Result{Content: t.name + " ok " + string(args)}, nil
}

func call(id, name, args string) providers.ToolCall {
	return providers.ToolCall{ID: id, Type: "function", Function: providers.FunctionCall{Name: name, Arguments: args}}
}

func TestLoopParallelReadsOrderedWritesAndPrefix(t *testing.T) {
	var running, peak int32
	var order []string
	var mu sync.Mutex
	reg := tools.NewRegistry(
		stubTool{name: "look", readOnly: true, delay: 50 * time.Millisecond, running: &running, peak: &peak},
		stubTool{name: "write", calls: &order, mu: &mu},
	)
	fp := &fakeProvider{turns: []providers.Chunk{
		{Text: "checking", ToolCalls: []providers.ToolCall{
			call("a", "look", `{"n":1}`), call("b", "look", `{"n":2}`), call("c", "look", `{"n":3}`),
			call("d", "write", `{"n":4}`), call("e", "write", `{"n":5}`),
		}},
		{Reasoning: "think", ToolCalls: []providers.ToolCall{call("f", "nope", `{}`), call("g", "look", `{bad json`)}},
		{Text: "all done"},
	}}
	rec := &events.Recorder{}
	s, err := New(Config{ID: "s1", Role: "executor", Provider: fp, Model: "m", System: "sys", Tools: reg, Sink: rec})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := s.Send(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if peak < 3 {
		t.Errorf("read-only calls did not run in parallel: peak %d", peak)
	}
	if d := time.Since(start); d > 140*time.Millisecond {
		t.Errorf("three 50ms reads took %v; want parallel", d)
	}
	if strings.Join(order, ",") != `write{"n":4},write{"n":5}` {
		t.Errorf("writers out of order: %v", order)
	}
	if out.Text != "all done" || out.Stop != StopDone || out.Steps != 3 || len(out.Calls) != 7 {
		t.Fatalf("outcome = %+v", out)
	}
	if out.Usage.PromptTokens != 30 {
		t.Errorf("usage not accumulated: %+v", out.Usage)
	}
	// Tool results follow in call order.
	var ids []string
	for _, m := range s.Messages() {
		if m.Role == providers.RoleTool {
			ids = append(ids, m.ToolCallID)
		}
	}
	if strings.Join(ids, "") != "abcdefg" {
		t.Errorf("tool results order = %v", ids)
	}
	msgs := s.Messages()
	last := msgs[len(msgs)-2]
	if !strings.Contains(last.Content, "not valid JSON") {
		t.Errorf("malformed args not fed back: %q", last.Content)
	}
	if !strings.Contains(msgs[len(msgs)-3].Content, `unknown tool "nope"`) {
		t.Errorf("unknown tool not fed back: %q", msgs[len(msgs)-3].Content)
	}
	// Cache-stable prefix: every request starts with the previous one.
	for i := 1; i < len(fp.reqs); i++ {
		if !bytes.HasPrefix(fp.reqs[i], fp.reqs[i-1]) {
			t.Errorf("request %d does not extend request %d", i, i-1)
		}
	}
	// Reasoning is sent back only on the assistant message with tool calls.
	if !bytes.Contains(fp.reqs[2], []byte(`"reasoning_content":"think"`)) {
		t.Errorf("reasoning not round-tripped: %s", fp.reqs[2])
	}
	var starts, ends int
	for _, e := range rec.Events() {
		if e.Session != "s1" || e.Role != "executor" {
			t.Fatalf("event not tagged: %+v", e)
		}
		switch e.Type {
		case events.ToolStart:
			starts++
		case events.ToolEnd:
			ends++
		}
	}
	if starts != 7 || ends != 7 {
		t.Errorf("tool events start=%d end=%d", starts, ends)
	}
}

func TestBrokenStreamKeepsPartial(t *testing.T) {
	fp := &fakeProvider{turns: []providers.Chunk{{Text: "half an ans"}}, errs: map[int]error{0: errors.New("stream broken: unexpected EOF")}}
	s, _ := New(Config{Provider: fp})
	out, err := s.Send(context.Background(), "q")
	if err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Fatalf("err = %v", err)
	}
	if out.Text != "half an ans" {
		t.Errorf("partial text lost: %q", out.Text)
	}
	msgs := s.Messages()
	if msgs[len(msgs)-1].Content != "half an ans" {
		t.Errorf("partial answer not kept in history")
	}
}

type denyGate struct{}

func (denyGate) Authorize(_ context.Context, inv tools.Invocation) tools.Verdict {
	if inv.Tool.Name() == "write" {
		return tools.Verdict{Message: "denied by rule Deny: write"}
	}
	return tools.Verdict{Allow: true}
}

func TestGateRefusalReachesModelAndMaxSteps(t *testing.T) {
	var order []string
	var mu sync.Mutex
	reg := tools.NewRegistry(stubTool{name: "write", calls: &order, mu: &mu})
	loop := providers.Chunk{ToolCalls: []providers.ToolCall{call("x", "write", `{}`)}}
	fp := &fakeProvider{turns: []providers.Chunk{loop, loop, loop, loop}}
	s, _ := New(Config{Provider: fp, Tools: reg, Gate: denyGate{}, MaxSteps: 2})
	out, err := s.Send(context.Background(), "q")
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != StopMaxSteps || out.Steps != 2 {
		t.Errorf("outcome %+v", out)
	}
	if len(order) != 0 {
		t.Errorf("denied tool ran: %v", order)
	}
	if !out.Calls[0].Denied || !bytes.Contains(fp.reqs[1], []byte("denied by rule Deny: write")) {
		t.Errorf("refusal not visible to the model: %s", fp.reqs[1])
	}
}

func TestCancelledContextStops(t *testing.T) {
	reg := tools.NewRegistry(stubTool{name: "look", readOnly: true, delay: 200 * time.Millisecond})
	loop := providers.Chunk{ToolCalls: []providers.ToolCall{call("x", "look", `{}`)}}
	fp := &fakeProvider{turns: []providers.Chunk{loop, loop, loop}}
	s, _ := New(Config{Provider: fp, Tools: reg})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Send(ctx, "q")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if len(fp.reqs) != 1 {
		t.Errorf("kept requesting after cancel: %d", len(fp.reqs))
	}
}

// failingRecorder refuses assistant messages.
type failingRecorder struct{ err error }

func (r failingRecorder) Append(m providers.Message) error {
	if m.Role == providers.RoleAssistant {
		return r.err
	}
	return nil
}

// A transcript that cannot take the partial answer of a broken stream is
// reported beside the stream error, not dropped.
func TestBrokenStreamReportsTranscriptFailure(t *testing.T) {
	fp := &fakeProvider{turns: []providers.Chunk{{Text: "half"}}, errs: map[int]error{0: errors.New("stream broken")}}
	s, _ := New(Config{Provider: fp})
	s.cfg.Transcript = failingRecorder{errors.New("disk full")}
	_, err := s.Send(context.Background(), "q")
	if err == nil || !strings.Contains(err.Error(), "stream broken") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("transcript failure dropped: %v", err)
	}
}

// echoTool returns its arguments as its result, summary or error.
type echoTool struct{}

func (echoTool) Name() string            { return "echo" }
func (echoTool) Description() string     { return "echo" }
func (echoTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (echoTool) ReadOnly() bool          { return true }
func (echoTool) Execute(_ context.Context, _ *tools.Env, args json.RawMessage) (tools.Result, error) {
	if strings.Contains(string(args), "fail") {
		return tools.Result{}, errors.New("bad " + string(args))
	}
	return tools.Result{Content: "got " + string(args), Summary: "saw " + string(args)}, nil
}

func TestToolResultsAreRedacted(t *testing.T) {
	const key = "sk-session-secret-42"
	env := tools.NewEnv(t.TempDir())
	env.Secrets = tools.NewSecrets(nil, []string{key})
	fp := &fakeProvider{turns: []providers.Chunk{{ToolCalls: []providers.ToolCall{
		call("a", "echo", `{"k":"`+key+`"}`),
		call("b", "echo", `{"k":"`+key+`","fail":1}`),
	}}}}
	var mu sync.Mutex
	var ends []string
	sink := events.SinkFunc(func(e events.Event) {
		if e.Type == events.ToolEnd {
			mu.Lock()
			ends = append(ends, e.Tool.Result+" | "+e.Tool.Summary)
			mu.Unlock()
		}
	})
	s, err := New(Config{Provider: fp, Tools: tools.NewRegistry(echoTool{}), Env: env, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Send(context.Background(), "q"); err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range s.Messages() {
		if m.Role == providers.RoleTool {
			results = append(results, m.Content)
		}
	}
	if len(results) != 2 || len(ends) != 2 {
		t.Fatalf("results %q, ends %q", results, ends)
	}
	for _, r := range append(results, ends...) {
		if strings.Contains(r, key) || !strings.Contains(r, "[REDACTED]") {
			t.Errorf("result not redacted: %q", r)
		}
	}
	if !strings.Contains(strings.Join(ends, "\n"), "| saw {\"k\":\"[REDACTED]\"}") {
		t.Errorf("summary not redacted: %q", ends)
	}
	// The request after the calls carries no key in any tool result; the
	// model's own arguments are sent back as it wrote them.
	last := string(fp.reqs[1])
	if strings.Count(last, key) != 2 {
		t.Errorf("key outside the echoed arguments in the next request: %s", last)
	}
}

// personGate approves "write" as a person would and everything else as a
// rule would.
type personGate struct{}

func (personGate) Authorize(_ context.Context, inv tools.Invocation) tools.Verdict {
	return tools.Verdict{Allow: true, Person: inv.Tool.Name() == "write"}
}

type fakeGuard struct {
	watched  []string
	approved []bool
}

func (g *fakeGuard) Watch(session, role, tool string) func(tools.Verdict) string {
	g.watched = append(g.watched, tool)
	return func(v tools.Verdict) string {
		g.approved = append(g.approved, v.Person)
		if v.Person {
			return ""
		}
		return "Error: this call changed control file reasonix.toml, which needs a person's approval; the change was reverted"
	}
}

func TestGuardWatchesWritingCalls(t *testing.T) {
	reg := tools.NewRegistry(stubTool{name: "write"}, stubTool{name: "bash"}, stubTool{name: "read", readOnly: true})
	fp := &fakeProvider{turns: []providers.Chunk{{ToolCalls: []providers.ToolCall{
		call("a", "read", `{}`), call("b", "write", `{}`), call("c", "bash", `{}`)}}}}
	g := &fakeGuard{}
	s, _ := New(Config{Provider: fp, Tools: reg, Gate: personGate{}, Guard: g})
	out, err := s.Send(context.Background(), "q")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(g.watched, ",") != "write,bash" || len(g.approved) != 2 || !g.approved[0] || g.approved[1] {
		t.Fatalf("watched %v approved %v", g.watched, g.approved)
	}
	if out.Calls[1].IsError || !out.Calls[2].IsError {
		t.Fatalf("calls %+v", out.Calls)
	}
	want := `bash ok {}\n\nError: this call changed control file reasonix.toml`
	if !bytes.Contains(fp.reqs[1], []byte(want)) {
		t.Fatalf("the model was not told: %s", fp.reqs[1])
	}
}
