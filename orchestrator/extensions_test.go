package orchestrator

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools"
)

// extTool is a read-only remote tool as the MCP adapter names them.
type extTool struct{ name string }

func (t extTool) Name() string        { return t.name }
func (t extTool) Description() string { return "a remote tool" }
func (t extTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (t extTool) ReadOnly() bool { return true }
func (t extTool) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Kind: tools.KindRead, SessionOnly: true}, nil
}
func (t extTool) Execute(context.Context, *tools.Env, json.RawMessage) (tools.Result, error) {
	return tools.Result{Content: "ok"}, nil
}

// liveExtensions is a server whose tool list changes during the test.
type liveExtensions struct {
	mu      sync.Mutex
	names   []string
	pending string
}

func (x *liveExtensions) set(names ...string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.names, x.pending = names, "MCP server srv now offers: "+strings.Join(names, ", ")
}

func (x *liveExtensions) Tools() []tools.Tool {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []tools.Tool
	for _, n := range x.names {
		out = append(out, extTool{n})
	}
	return out
}

func (x *liveExtensions) Changes() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	p := x.pending
	x.pending = ""
	return p
}

func (x *liveExtensions) Resources(context.Context, string) (string, []string) { return "", nil }

func toolNamesIn(r providers.Request) []string {
	var out []string
	for _, s := range r.Tools {
		out = append(out, s.Name)
	}
	return out
}

// TestCompactionRefreshesExtensionTools: a server's new tool is announced
// in the next turn and not offered mid-session (the cached prefix holds);
// a compaction, which throws the prefix away anyway, brings the session's
// tools up to date, and the announcement is not repeated after it.
func TestCompactionRefreshesExtensionTools(t *testing.T) {
	var sp *sizedProvider
	ext := &liveExtensions{names: []string{"mcp__srv__old"}}
	h := newHarness(t, []scripted.Turn{
		{Match: "FIRST", Text: "first answer"},
		{Match: "SECOND", Text: "second answer"},
		{Match: "THIRD", Text: "third answer"},
	}, func(rt *Runtime) {
		rt.Resolve = func(string) (providers.Provider, string, error) { return sp, "small-model", nil }
		rt.Extensions = ext
	})
	sp = &sizedProvider{t: t, inner: h.script, window: 100000}
	hub := &events.Hub{}
	rec := &events.Recorder{}
	hub.Subscribe(rec)
	h.coord.rt.Sink = hub
	eng, err := NewEngine(h.coord, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	if err := eng.Send(ctx, "FIRST turn"); err != nil {
		t.Fatal(err)
	}
	ext.set("mcp__srv__old", "mcp__srv__new")
	if err := eng.Send(ctx, "SECOND turn"); err != nil {
		t.Fatal(err)
	}
	// Another change, then the compaction takes the list as it is now.
	ext.set("mcp__srv__old", "mcp__srv__new", "mcp__srv__newer")
	if err := eng.Compact(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if err := eng.Send(ctx, "THIRD turn"); err != nil {
		t.Fatal(err)
	}
	if len(sp.reqs) != 3 {
		t.Fatalf("%d requests", len(sp.reqs))
	}
	first, second, third := toolNamesIn(sp.reqs[0]), toolNamesIn(sp.reqs[1]), toolNamesIn(sp.reqs[2])
	if !slices.Contains(first, "mcp__srv__old") || slices.Contains(first, "mcp__srv__new") {
		t.Errorf("first request's tools %v", first)
	}
	if !slices.Equal(first, second) {
		t.Errorf("the tools changed without a compaction:\n%v\n%v", first, second)
	}
	if !strings.Contains(string(joinEncoded(sp.reqs[1])), "<tool-changes>") {
		t.Errorf("the second turn does not announce the new tool")
	}
	if !slices.Contains(third, "mcp__srv__new") || !slices.Contains(third, "mcp__srv__newer") || !slices.Contains(third, "read_file") {
		t.Errorf("after the compaction the tools are %v; want the new remote tool beside the built-ins", third)
	}
	if last := sp.reqs[2].Messages[len(sp.reqs[2].Messages)-1]; strings.Contains(last.Content, "<tool-changes>") {
		t.Errorf("a change the compaction took in was still announced")
	}
	noticed := false
	for _, e := range rec.Events() {
		noticed = noticed || (e.Type == events.Notice && strings.Contains(e.Text, "added mcp__srv__new"))
	}
	if !noticed {
		t.Errorf("no notice of the refreshed tool list")
	}
}

// TestLateToolsReopenTheConversationUnderItsID: a server that comes up
// before the conversation's first turn has its tools in that turn's
// request, and the conversation keeps its id: its events, its file and
// the front end's name for it (an editor's session) stay one. One with a
// note waiting for its next turn is not reopened: the note would be
// lost.
func TestLateToolsReopenTheConversationUnderItsID(t *testing.T) {
	for _, noted := range []bool{false, true} {
		ext := &liveExtensions{}
		h := newHarness(t, []scripted.Turn{{Match: "FIRST", Text: "first answer"}}, func(rt *Runtime) { rt.Extensions = ext })
		rec := &events.Recorder{}
		h.coord.rt.Sink = rec
		eng, err := NewEngine(h.coord, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		id := eng.SessionID()
		if noted {
			eng.conversation().Note("NOTED: the build passed")
		}
		ext.set("mcp__srv__late")
		if err := eng.Send(context.Background(), "FIRST turn"); err != nil {
			t.Fatal(err)
		}
		eng.Close()
		if got := eng.SessionID(); got != id {
			t.Errorf("noted %v: the conversation is %s after the turn, was %s", noted, got, id)
		}
		reqs := h.session("FIRST").requests()
		if len(reqs) != 1 {
			t.Fatalf("noted %v: %d requests", noted, len(reqs))
		}
		names, last := toolNamesIn(reqs[0]), reqs[0].Messages[len(reqs[0].Messages)-1].Content
		if noted {
			if slices.Contains(names, "mcp__srv__late") || !strings.Contains(last, "NOTED: the build passed") {
				t.Errorf("a conversation with a note was reopened: tools %v, turn %q", names, last)
			}
			continue
		}
		if !slices.Contains(names, "mcp__srv__late") {
			t.Errorf("the first request lacks the late tool: %v", names)
		}
		var text bool
		for _, e := range rec.Events() {
			text = text || e.Type == events.TextDelta && e.Session == id
		}
		if !text {
			t.Errorf("the turn's text was not published as session %s", id)
		}
		if _, err := os.Stat(filepath.Join(h.state, "sessions", id+".jsonl")); err != nil {
			t.Errorf("the conversation's file: %v", err)
		}
	}
}
