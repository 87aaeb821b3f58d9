package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

func skipNoShell(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hook tests use POSIX shell commands")
	}
}

func TestExitCodesAndJSON(t *testing.T) {
	skipNoShell(t)
	ws := t.TempDir()
	rec := &events.Recorder{}
	r := New(Options{Workspace: ws, Publish: rec.Publish, Hooks: []Hook{
		{Event: PreToolUse, Matcher: "Bash", Command: `grep -q curl && { echo "no network, use the cache" >&2; exit 2; }; exit 0`},
		{Event: PreToolUse, Matcher: "Edit|Write", Command: `echo '{"decision":"block","reason":"generated file"}'`},
		{Event: PreToolUse, Matcher: "read_file", Command: `exit 1`},
		{Event: UserPromptSubmit, Command: `echo "branch: main"`},
	}})
	in := json.RawMessage(`{"command":"curl example.com"}`)
	if o := r.Run(context.Background(), PreToolUse, "bash", Payload{ToolInput: in}); !o.Block || o.Reason != "no network, use the cache" {
		t.Errorf("curl: %+v", o)
	}
	if o := r.Run(context.Background(), PreToolUse, "bash", Payload{ToolInput: json.RawMessage(`{"command":"ls"}`)}); o.Block {
		t.Errorf("ls blocked: %+v", o)
	}
	for _, tool := range []string{"write_file", "edit_file", "patch"} {
		if o := r.Run(context.Background(), PreToolUse, tool, Payload{}); !o.Block || o.Reason != "generated file" {
			t.Errorf("%s: %+v", tool, o)
		}
	}
	if o := r.Run(context.Background(), PreToolUse, "read_file", Payload{}); o.Block {
		t.Errorf("exit 1 blocked: %+v", o)
	}
	if o := r.Run(context.Background(), UserPromptSubmit, "", Payload{Prompt: "hi"}); o.Context != "branch: main" {
		t.Errorf("prompt context %+v", o)
	}
	var outcomes []string
	for _, e := range rec.Events() {
		if e.Type == events.HookRun {
			outcomes = append(outcomes, e.Hook.Outcome)
		}
	}
	if got := strings.Join(outcomes, ","); got != "blocked,ok,blocked,blocked,blocked,warning,ok" {
		t.Errorf("outcomes %s", got)
	}
}

func TestPayloadEnvAndTimeout(t *testing.T) {
	skipNoShell(t)
	ws := t.TempDir()
	out := filepath.Join(ws, "payload.json")
	t.Setenv("MY_PROVIDER_KEY", "sk-secret-value-123")
	r := New(Options{Workspace: ws, Secrets: tools.NewSecrets([]string{"MY_PROVIDER_KEY"}, nil), Hooks: []Hook{
		{Event: PostToolUse, Command: `cat > payload.json; env > env.txt`},
		{Event: Stop, Command: `sleep 30 & sleep 30`, Timeout: 300 * time.Millisecond},
	}})
	r.Run(context.Background(), PostToolUse, "edit_file", Payload{SessionID: "s1", ToolInput: json.RawMessage(`{"path":"a.go"}`), ToolResponse: "ok"})
	var p map[string]any
	data, _ := os.ReadFile(out)
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("payload %q: %v", data, err)
	}
	if p["tool_name"] != "Edit" || p["hook_event_name"] != "PostToolUse" || p["session_id"] != "s1" || p["cwd"] != ws || p["tool_response"] != "ok" {
		t.Errorf("payload %v", p)
	}
	env, _ := os.ReadFile(filepath.Join(ws, "env.txt"))
	if strings.Contains(string(env), "sk-secret-value-123") || !strings.Contains(string(env), "CLAUDE_PROJECT_DIR="+ws) {
		t.Errorf("hook environment not scrubbed or lacks CLAUDE_PROJECT_DIR")
	}
	start := time.Now()
	r.Run(context.Background(), Stop, "", Payload{})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout took %s: the process group was not killed", d)
	}
}

func TestProjectHooksNeedTrust(t *testing.T) {
	skipNoShell(t)
	ws, home := t.TempDir(), t.TempDir()
	hs := []Hook{{Event: SessionStart, Command: "touch ran", Project: true}}
	asked := 0
	r := New(Options{Workspace: ws, Hooks: hs, Trust: func(context.Context, []Hook) bool { asked++; return false }})
	r.Run(context.Background(), SessionStart, "", Payload{})
	r.Run(context.Background(), SessionStart, "", Payload{})
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil || asked != 1 {
		t.Errorf("untrusted hook ran, or asked %d times", asked)
	}
	trusted := func(hs []Hook) bool {
		t.Helper()
		ok, err := Trusted(home, ws, hs)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if trusted(hs) {
		t.Fatal("trusted before anyone said so")
	}
	if err := RememberTrust(home, ws, hs); err != nil {
		t.Fatal(err)
	}
	if !trusted(hs) {
		t.Error("trust not remembered")
	}
	changed := []Hook{{Event: SessionStart, Command: "touch ran; curl evil", Project: true}}
	if trusted(changed) {
		t.Error("a changed hook set is still trusted")
	}
	// A trust file that does not parse trusts nothing, says where it
	// breaks, and is not written over.
	bad := []byte("{\"x\": \"y\",}\n")
	if err := os.WriteFile(filepath.Join(home, TrustFile), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := Trusted(home, ws, hs); ok || err == nil || !strings.Contains(err.Error(), TrustFile+":1:") {
		t.Errorf("corrupt: %v, %v", ok, err)
	}
	if err := RememberTrust(home, ws, hs); err == nil {
		t.Error("trust recorded over a corrupt file")
	}
	if got, _ := os.ReadFile(filepath.Join(home, TrustFile)); string(got) != string(bad) {
		t.Errorf("the trust file changed: %s", got)
	}
}

// Parallel tool calls reach the trust question together: one person is
// asked once, and everyone gets that answer.
func TestTrustAskedOnceUnderConcurrency(t *testing.T) {
	skipNoShell(t)
	var mu sync.Mutex
	asked := 0
	r := New(Options{Workspace: t.TempDir(), Hooks: []Hook{{Event: PreToolUse, Command: "exit 2", Project: true}},
		Trust: func(context.Context, []Hook) bool {
			mu.Lock()
			asked++
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			return true
		}})
	var wg sync.WaitGroup
	blocked := make([]bool, 8)
	for i := range blocked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			blocked[i] = r.Run(context.Background(), PreToolUse, "read_file", Payload{}).Block
		}()
	}
	wg.Wait()
	if asked != 1 {
		t.Errorf("asked %d times", asked)
	}
	for i, b := range blocked {
		if !b {
			t.Errorf("call %d was not blocked by the trusted hook", i)
		}
	}
}

// TestPowerShellMatcher: a hook written for Claude Code's PowerShell tool
// matches the bash tool when it runs PowerShell, and only then.
func TestPowerShellMatcher(t *testing.T) {
	skipNoShell(t)
	hs := []Hook{{Event: PreToolUse, Matcher: "PowerShell", Command: `echo "no" >&2; exit 2`}}
	on := New(Options{Workspace: t.TempDir(), Hooks: hs, PowerShell: true})
	if o := on.Run(context.Background(), PreToolUse, "bash", Payload{ToolInput: json.RawMessage(`{"command":"Get-Date"}`)}); !o.Block {
		t.Errorf("PowerShell matcher did not match the PowerShell bash tool: %+v", o)
	}
	off := New(Options{Workspace: t.TempDir(), Hooks: hs})
	if o := off.Run(context.Background(), PreToolUse, "bash", Payload{ToolInput: json.RawMessage(`{"command":"ls"}`)}); o.Block {
		t.Errorf("PowerShell matcher matched a bash tool running bash: %+v", o)
	}
}
