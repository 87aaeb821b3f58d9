package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

// blobTool exists only in this test: it writes the file named by its
// "target" argument and reads the one named by "template", names no
// built-in tool uses. Only its own description tells the gate so.
type blobTool struct{ fakeTool }

func (blobTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a struct{ Target, Template string }
	if err := json.Unmarshal(raw, &a); err != nil {
		return tools.Access{}, err
	}
	acc := tools.Access{Kind: tools.KindWrite, Writes: []string{a.Target}}
	if a.Template != "" {
		acc.Reads = []string{a.Template}
	}
	return acc, nil
}

// opaqueTool gives no description and claims to be read-only.
type opaqueTool struct{}

func (opaqueTool) Name() string            { return "mystery" }
func (opaqueTool) Description() string     { return "" }
func (opaqueTool) Schema() json.RawMessage { return json.RawMessage(`{}`) }
func (opaqueTool) ReadOnly() bool          { return true }
func (opaqueTool) Execute(context.Context, *tools.Env, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, nil
}

func TestGateReadsTheToolsOwnDescription(t *testing.T) {
	f := newFixture(t)
	c, err := NewConfiner(f.ws, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.MkdirAll(filepath.Join(f.ws, "secret"), 0o755))
	pol := mustPolicy(t, "", []string{"store_blob(notes/**)"}, nil, []string{"Edit(secret/**)", "Read(private/**)"})
	ap := &ScriptedApprover{Answers: []Answer{AllowOnce}}
	g := NewGate(GateOptions{Approver: ap, Workspace: f.ws, Policy: pol})
	env := &tools.Env{Root: f.ws, Guard: c}
	tool := blobTool{fakeTool{name: "store_blob"}}
	call := func(args string) tools.Verdict {
		return g.Authorize(context.Background(), tools.Invocation{Tool: tool, Args: json.RawMessage(args), Env: env})
	}

	// Confined: a target through a symlink out of the workspace, or a
	// template read from outside it, is refused before anyone is asked.
	if v := call(`{"target":"outlink/x"}`); v.Allow || !strings.Contains(v.Message, "outside the workspace") {
		t.Fatalf("escape through target: %+v", v)
	}
	if v := call(`{"target":"ok.txt","template":"../outside/secret"}`); v.Allow || !strings.Contains(v.Message, "outside the workspace") {
		t.Fatalf("escape through template: %+v", v)
	}
	// Matched by path rules of the Edit and Read families.
	if v := call(`{"target":"secret/k"}`); v.Allow || v.Message != "denied by rule Deny: Edit(secret/**)" {
		t.Fatalf("edit deny: %+v", v)
	}
	if v := call(`{"target":"ok.txt","template":"private/t"}`); v.Allow || v.Message != "denied by rule Deny: Read(private/**)" {
		t.Fatalf("read deny on a writer's input: %+v", v)
	}
	// A rule naming the tool by id matches its paths too.
	if v := call(`{"target":"notes/today.md"}`); !v.Allow || len(ap.Requests()) != 0 {
		t.Fatalf("tool-id allow rule: %+v, %d prompts", v, len(ap.Requests()))
	}
	// Anything else is a write the person is asked about, with the path.
	if v := call(`{"target":"ok.txt"}`); !v.Allow || len(ap.Requests()) != 1 {
		t.Fatalf("ordinary write: %+v, %d prompts", v, len(ap.Requests()))
	}
	if req := ap.Requests()[0]; req.Subject != "ok.txt" || len(req.Rules) != 1 || req.Rules[0] != "Edit(ok.txt)" {
		t.Fatalf("request %+v", req)
	}
	// Malformed arguments are refused with the tool's own error.
	if v := call(`{"target":`); v.Allow || !strings.Contains(v.Message, "invalid arguments for store_blob") {
		t.Fatalf("bad args: %+v", v)
	}
}

func TestGateAsksAboutAnUndescribedTool(t *testing.T) {
	ap := &ScriptedApprover{Answers: []Answer{DenyAnswer}}
	g := NewGate(GateOptions{Approver: ap, Workspace: t.TempDir()})
	tool := opaqueTool{}
	v := g.Authorize(context.Background(), tools.Invocation{Tool: tool, Args: json.RawMessage(`{"path":"x"}`)})
	if v.Allow || len(ap.Requests()) != 1 {
		t.Fatalf("undescribed tool: %+v, %d prompts", v, len(ap.Requests()))
	}
	// Plan mode refuses it like any writer.
	v = g.ForRole("planner", true).Authorize(context.Background(), tools.Invocation{Tool: tool, Args: json.RawMessage(`{}`)})
	if v.Allow || !strings.Contains(v.Message, "plan mode") {
		t.Fatalf("plan mode: %+v", v)
	}
}

func TestRoleViewMergesAnOverrideAndFailsClosed(t *testing.T) {
	ap := &ScriptedApprover{Answers: []Answer{DenyAnswer}}
	g := NewGate(GateOptions{Approver: ap, Workspace: t.TempDir(), Policy: mustPolicy(t, "auto", nil, nil, nil)})
	ctx := context.Background()
	write := tools.Invocation{Tool: writeTool, Args: pathArgs("a.go")}

	// Rules without a mode keep the run's posture (auto allows the write)
	// and add their own (the deny).
	view, err := g.RoleView("reviewer", false, "", nil, nil, []string{"Edit(secret/**)"})
	if err != nil {
		t.Fatal(err)
	}
	if v := view.Authorize(ctx, write); !v.Allow {
		t.Fatalf("posture lost: %+v", v)
	}
	if v := view.Authorize(ctx, tools.Invocation{Tool: writeTool, Args: pathArgs("secret/k")}); v.Allow {
		t.Fatal("override deny not applied")
	}
	// A mode in the override wins.
	view, _ = g.RoleView("careful", false, "ask", nil, nil, nil)
	if v := view.Authorize(ctx, write); v.Allow || len(ap.Requests()) != 1 {
		t.Fatalf("override mode: %+v", v)
	}
	// A broken override: an error, and a view that refuses every writer.
	view, err = g.RoleView("broken", false, "", []string{"Bash("}, nil, nil)
	if err == nil {
		t.Fatal("broken override accepted")
	}
	if v := view.Authorize(ctx, write); v.Allow || !strings.Contains(v.Message, "plan mode") {
		t.Fatalf("broken override: %+v", v)
	}
}

// An MCP server's tools are named by mcp__server, mcp__server__* or their
// exact name; other servers' tools are not.
func TestMCPServerRuleForms(t *testing.T) {
	for _, raw := range []string{"mcp__sentry", "mcp__sentry__*"} {
		r, err := ParseRule(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if !r.appliesTo("mcp__sentry__search_issues", "mcp__sentry__search_issues") {
			t.Errorf("%s does not match a sentry tool", raw)
		}
		if r.appliesTo("mcp__sentryx__search", "mcp__sentryx__search") || r.appliesTo("mcp__other__t", "mcp__other__t") {
			t.Errorf("%s matches another server", raw)
		}
		if r.String() != raw {
			t.Errorf("rule shows as %q, written %q", r.String(), raw)
		}
	}
	exact, err := ParseRule("mcp__sentry__search_issues")
	if err != nil {
		t.Fatal(err)
	}
	if !exact.appliesTo("mcp__sentry__search_issues", "mcp__sentry__search_issues") || exact.appliesTo("mcp__sentry__delete", "mcp__sentry__delete") {
		t.Error("an exact rule names one tool")
	}
	if _, err := ParseRule("mcp__sentry__search*"); err == nil {
		t.Error("a partial wildcard is not a rule form")
	}
}
