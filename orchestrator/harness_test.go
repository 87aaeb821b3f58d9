package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools"
)

// harness wires a coordinator to a scripted provider and records every
// request per session: Resolve is called once per session, so each
// session gets its own recording provider.
type harness struct {
	t      *testing.T
	ws     string
	state  string
	script *scripted.Provider
	rec    *events.Recorder
	coord  *Coordinator

	mu       sync.Mutex
	sessions []*recProvider

	inflight, peak atomic.Int64
}

type recProvider struct {
	h     *harness
	inner providers.Provider
	mu    sync.Mutex
	reqs  []providers.Request
}

func (p *recProvider) Name() string { return p.inner.Name() }

func (p *recProvider) Stream(ctx context.Context, req providers.Request) (<-chan providers.Chunk, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	n := p.h.inflight.Add(1)
	for {
		old := p.h.peak.Load()
		if n <= old || p.h.peak.CompareAndSwap(old, n) {
			break
		}
	}
	ch, err := p.inner.Stream(ctx, req)
	if err != nil {
		p.h.inflight.Add(-1)
		return nil, err
	}
	out := make(chan providers.Chunk)
	go func() {
		defer close(out)
		defer p.h.inflight.Add(-1)
		for c := range ch {
			out <- c
		}
	}()
	return out, nil
}

func (p *recProvider) requests() []providers.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providers.Request(nil), p.reqs...)
}

// firstUser is the session's first user message, to find sessions by.
func (p *recProvider) firstUser() string {
	rs := p.requests()
	if len(rs) == 0 {
		return ""
	}
	for _, m := range rs[0].Messages {
		if m.Role == providers.RoleUser {
			return m.Content
		}
	}
	return ""
}

func (p *recProvider) system() string {
	rs := p.requests()
	if len(rs) == 0 || len(rs[0].Messages) == 0 || rs[0].Messages[0].Role != providers.RoleSystem {
		return ""
	}
	return rs[0].Messages[0].Content
}

func (p *recProvider) toolNames() []string {
	rs := p.requests()
	if len(rs) == 0 {
		return nil
	}
	var out []string
	for _, s := range rs[0].Tools {
		out = append(out, s.Name)
	}
	return out
}

type harnessOpt func(*Runtime)

func newHarness(t *testing.T, turns []scripted.Turn, opts ...harnessOpt) *harness {
	t.Helper()
	ws := t.TempDir()
	h := &harness{t: t, ws: ws, state: filepath.Join(ws, ".reasonix"), rec: &events.Recorder{},
		script: scripted.NewFromScript(&scripted.Script{Turns: turns})}
	rt := Runtime{
		Workspace: ws,
		StateDir:  h.state,
		Resolve:   h.resolve,
		Tools:     tools.NewRegistry(readTool{}, writeTool{}, todoReadTool{}),
		Env:       tools.NewEnv(ws),
		Gate:      tools.AllowAll{},
		Sink:      h.rec,
		Settings:  Settings{MaxSteps: 20},
	}
	for _, o := range opts {
		o(&rt)
	}
	h.coord = New(rt)
	return h
}

func (h *harness) resolve(ref string) (providers.Provider, string, error) {
	model := ref
	if model == "" {
		model = "exec-model"
	}
	if strings.HasPrefix(model, "bad") {
		return nil, "", fmt.Errorf("unknown model %q", model)
	}
	p := &recProvider{h: h, inner: h.script}
	h.mu.Lock()
	h.sessions = append(h.sessions, p)
	h.mu.Unlock()
	return p, model, nil
}

// used returns the sessions that sent at least one request.
func (h *harness) used() []*recProvider {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*recProvider
	for _, p := range h.sessions {
		if len(p.requests()) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// session finds the session whose first user message contains s.
func (h *harness) session(s string) *recProvider {
	h.t.Helper()
	var hit *recProvider
	for _, p := range h.used() {
		if strings.Contains(p.firstUser(), s) {
			if hit != nil {
				h.t.Fatalf("two sessions start with %q", s)
			}
			hit = p
		}
	}
	if hit == nil {
		h.t.Fatalf("no session starts with %q", s)
	}
	return hit
}

// checkPrefixes asserts that in every session each request begins, byte
// for byte, with the previous one, and that tools and model never change.
func (h *harness) checkPrefixes() {
	h.t.Helper()
	checked := 0
	for _, p := range h.used() {
		rs := p.requests()
		for i := 1; i < len(rs); i++ {
			prev, cur := joinEncoded(rs[i-1]), joinEncoded(rs[i])
			if !bytes.HasPrefix(cur, prev) {
				h.t.Errorf("session %q: request %d does not extend request %d\nprev: %s\ncur:  %s", text.Clip(p.firstUser(), 40), i, i-1, text.Clip(string(prev), 400), text.Clip(string(cur), 400))
			}
			if !bytes.Equal(rs[i].EncodedTools, rs[i-1].EncodedTools) || rs[i].Model != rs[i-1].Model {
				h.t.Errorf("session %q: request %d changed tools or model", text.Clip(p.firstUser(), 40), i)
			}
			checked++
		}
	}
	if checked == 0 {
		h.t.Errorf("no session sent two requests; the prefix check checked nothing")
	}
}

func joinEncoded(r providers.Request) []byte {
	if len(r.Encoded) != len(r.Messages) {
		panic("request without encoded messages")
	}
	return bytes.Join(asBytes(r.Encoded), []byte{','})
}

func asBytes(raw []json.RawMessage) [][]byte {
	out := make([][]byte, len(raw))
	for i, r := range raw {
		out[i] = r
	}
	return out
}

func (h *harness) events(typ events.Type) []events.Event {
	var out []events.Event
	for _, e := range h.rec.Events() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func (h *harness) transcript(id string) store.Header {
	h.t.Helper()
	l, err := store.Load(filepath.Join(h.state, "sessions", id+".jsonl"))
	if err != nil {
		h.t.Fatalf("read transcript %s: %v", id, err)
	}
	return l.Header
}

// lastToolResults returns the tool messages of the session's last request.
func (p *recProvider) lastToolResults() []string {
	rs := p.requests()
	var out []string
	for _, m := range rs[len(rs)-1].Messages {
		if m.Role == providers.RoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

func call(name string, args any) scripted.Call {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return scripted.Call{Name: name, Arguments: string(b)}
}

func usage(n int) *providers.Usage { return &providers.Usage{PromptTokens: n, CompletionTokens: 1} }

// readTool, writeTool and todoReadTool are small real tools: they touch
// the temp workspace and the session state the way the built-ins do.
type readTool struct{}

func (readTool) Name() string        { return "read_file" }
func (readTool) Description() string { return "read a file" }
func (readTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
}
func (readTool) ReadOnly() bool { return true }
func (readTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a struct{ Path string }
	err := json.Unmarshal(raw, &a)
	return tools.Access{Kind: tools.KindRead, Reads: []string{a.Path}}, err
}
func (readTool) Execute(_ context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a struct{ Path string }
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return tools.Result{}, err
	}
	p, err := env.Resolve(a.Path, false)
	if err != nil {
		return tools.Result{}, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: string(b)}, nil
}

type writeTool struct{}

func (writeTool) Name() string        { return "write_file" }
func (writeTool) Description() string { return "write a file" }
func (writeTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`)
}
func (writeTool) ReadOnly() bool { return false }
func (writeTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a struct{ Path string }
	err := json.Unmarshal(raw, &a)
	return tools.Access{Kind: tools.KindWrite, Writes: []string{a.Path}}, err
}
func (writeTool) Execute(_ context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a struct{ Path, Content string }
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return tools.Result{}, err
	}
	p, err := env.Resolve(a.Path, true)
	if err != nil {
		return tools.Result{}, err
	}
	if err := os.WriteFile(p, []byte(a.Content), 0o644); err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: "wrote " + a.Path, Summary: "wrote " + a.Path}, nil
}

type todoReadTool struct{}

func (todoReadTool) Name() string            { return "todo_read" }
func (todoReadTool) Description() string     { return "read the todo list" }
func (todoReadTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (todoReadTool) ReadOnly() bool          { return true }
func (todoReadTool) Execute(_ context.Context, env *tools.Env, _ json.RawMessage) (tools.Result, error) {
	todos := env.Todos()
	b, _ := json.Marshal(todos)
	return tools.Result{Content: string(b)}, nil
}

// denyGate refuses task calls for some agents, the way a Task(agent)
// deny rule does, and records what it saw.
type denyGate struct {
	deny map[string]bool
	mu   sync.Mutex
	seen []string
}

func (g *denyGate) Authorize(_ context.Context, inv tools.Invocation) tools.Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	if inv.Access.Kind != tools.KindDelegate || inv.Access.Agent == "" {
		return tools.Verdict{Allow: true}
	}
	agent := inv.Access.Agent
	g.seen = append(g.seen, agent)
	if g.deny[agent] {
		return tools.Verdict{Message: "denied by rule Task(" + agent + ")"}
	}
	return tools.Verdict{Allow: true}
}
