package agents

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/tools"
)

type recHooks struct {
	block  string
	before []string
	after  []string
}

func (h *recHooks) Before(_ context.Context, _, tool string, _ json.RawMessage) (bool, string) {
	h.before = append(h.before, tool)
	return tool == h.block, "no " + tool + " here"
}

func (h *recHooks) After(_ context.Context, _, tool string, _ json.RawMessage, res tools.Result) string {
	h.after = append(h.after, tool+":"+res.Content)
	return "formatted"
}

// PreToolUse runs before the gate and a block refuses the call without
// asking; PostToolUse sees the result and adds to it; compaction tells
// BeforeCompact.
func TestToolHooksAroundTheGate(t *testing.T) {
	prov := &fakeProvider{turns: []providers.Chunk{
		{ToolCalls: []providers.ToolCall{call("1", "write", `{}`), call("2", "read", `{}`)}},
		{Text: "ok"},
	}}
	reg := tools.NewRegistry(stubTool{name: "write"}, stubTool{name: "read", readOnly: true})
	h := &recHooks{block: "write"}
	asked := 0
	var trigger string
	s, err := New(Config{Provider: prov, Tools: reg, Hooks: h, ContextWindow: 100000,
		Gate:          countGate{&asked},
		BeforeCompact: func(_ context.Context, tr string) { trigger = tr }})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Send(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if asked != 1 {
		t.Errorf("gate asked %d times, want once (the blocked call never reaches it)", asked)
	}
	if !out.Calls[0].Denied || len(h.after) != 1 || h.after[0] != "read:read ok {}" {
		t.Errorf("calls %+v, after %v", out.Calls, h.after)
	}
	msgs := s.Messages()
	var results []string
	for _, m := range msgs {
		if m.Role == providers.RoleTool {
			results = append(results, m.Content)
		}
	}
	if !strings.Contains(results[0], "blocked by a PreToolUse hook: no write here") || !strings.Contains(results[1], "read ok {}\n\nPostToolUse hook: formatted") {
		t.Errorf("results %q", results)
	}
	_, _ = s.Compact(context.Background(), "")
	if trigger != "manual" {
		t.Errorf("BeforeCompact trigger %q", trigger)
	}
}

type countGate struct{ n *int }

func (g countGate) Authorize(context.Context, tools.Invocation) tools.Verdict {
	*g.n++
	return tools.Verdict{Allow: true}
}
