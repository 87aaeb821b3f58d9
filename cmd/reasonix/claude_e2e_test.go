package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers/scripted"
)

// A deny rule in a Claude Code project's .claude/settings.json is enforced:
// the model asks to read .env and is refused, and the secret never leaves.
func TestE2EClaudeSettingsDenyReadEnv(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": ".env"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "cat .env"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "cat < .env"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "grep -r DB_PASSWORD ."})}},
		scripted.Turn{Text: "I may not read it."},
	)
	e.write(".env", "DB_PASSWORD=hunter2-very-secret\n")
	e.write(".claude/settings.json", `{
  "permissions": {
    "allow": ["Bash(npm run lint)", "WebFetch(domain:docs.example.com)"],
    "deny": ["Read(./.env)", "Read(~/.ssh/**)", "mcp__github__*"]
  }
}
`)
	// --yolo: not even the most permissive posture lifts a deny.
	r := e.run("", "run", "--yolo", "what is in .env?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("requests = %d", len(reqs))
	}
	msgs := string(messagesOf(t, reqs[4]))
	if !strings.Contains(msgs, "denied by rule Deny: Read(./.env)") || !strings.Contains(msgs, "denied by rule Deny: Read(./.env) (the command reads .env)") {
		t.Errorf("the read and the cat were not refused by the settings rule:\n%s", msgs)
	}
	// An input redirection is a read. A recursive grep of a folder
	// holding .env runs where the sandbox hides .env from commands (it
	// cannot read it), and otherwise needs a person, whom a headless run
	// does not have.
	if !strings.Contains(msgs, "denied by rule Deny: Read(./.env) (the command reads \u003c .env)") &&
		!strings.Contains(msgs, "denied by rule Deny: Read(./.env) (the command reads < .env)") {
		t.Errorf("cat < .env was not refused:\n%s", msgs)
	}
	hides := strings.Contains(e.run("", "doctor").stdout, "each command starts with the matching files hidden")
	if refused := strings.Contains(msgs, "grep reads every file beneath ., including .env"); refused == hides {
		t.Errorf("grep -r refused %v, the sandbox hides .env %v:\n%s", refused, hides, msgs)
	}
	if strings.Contains(msgs, "hunter2") {
		t.Errorf("the secret reached the model")
	}
}

// A malformed settings file stops the run with its file, line and key.
func TestE2EClaudeSettingsMalformed(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "never sent"})
	e.write(".claude/settings.json", "{\n  \"permissions\": {\n    \"deny\": \"Read(./.env)\"\n  }\n}\n")
	r := e.run("", "run", "hi")
	want := filepath.Join(".claude", "settings.json") + `:3: key "permissions.deny": expected an array`
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr %q, want exit 2 and %q", r.code, r.stderr, want)
	}
}

const hookSettings = `{
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "touch session-started"}]}],
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "if grep -q curl; then echo 'curl is blocked here: use the package mirror' >&2; exit 2; fi"}]}
    ],
    "PostToolUse": [
      {"matcher": "Read", "hooks": [{"type": "command", "command": "cat > post-payload.json", "timeout": 10}]}
    ]
  }
}
`

func skipNoPOSIX(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the hook fixtures are POSIX shell commands")
	}
}

// A trusted project's PreToolUse hook blocks a curl command with its
// reason sent to the model, and its PostToolUse hook gets the payload.
func TestE2EHooksBlockAndPayload(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "curl -s https://example.invalid/x.tgz -o x.tgz"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "notes.md"})}},
		scripted.Turn{Text: "done"},
	)
	e.write("notes.md", "the notes\n")
	e.write(".claude/settings.json", hookSettings)
	r := e.run("", "run", "--hooks-trust", "--output-format", "stream-json", "fetch the tarball")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if msgs := messagesOf(t, reqs[1]); !bytes.Contains(msgs, []byte("curl is blocked here: use the package mirror")) {
		t.Errorf("the model did not see the hook's reason:\n%s", msgs)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "x.tgz")); err == nil {
		t.Error("the blocked command ran")
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(e.read("post-payload.json")), &p); err != nil {
		t.Fatalf("payload: %v", err)
	}
	in, _ := p["tool_input"].(map[string]any)
	resp, _ := p["tool_response"].(map[string]any)
	if p["hook_event_name"] != "PostToolUse" || p["tool_name"] != "Read" || p["reasonix_tool"] != "read_file" ||
		in["path"] != "notes.md" || !strings.Contains(resp["content"].(string), "the notes") || p["session_id"] == "" {
		t.Errorf("payload %v", p)
	}
	if cwd, _ := filepath.EvalSymlinks(p["cwd"].(string)); cwd != mustEval(t, e.repo) {
		t.Errorf("cwd %v", p["cwd"])
	}
	e.read("session-started")
	// Every hook outcome is on the event stream.
	var outcomes []string
	for _, line := range strings.Split(r.stdout, "\n") {
		var ev struct {
			Type string `json:"type"`
			Hook struct {
				Event, Outcome string
			} `json:"hook"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "hook" {
			outcomes = append(outcomes, ev.Hook.Event+":"+ev.Hook.Outcome)
		}
	}
	if got := strings.Join(outcomes, ","); got != "SessionStart:ok,PreToolUse:blocked,PostToolUse:ok" {
		t.Errorf("hook events %q", got)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// An untrusted project's hooks do not run in a headless run without
// --hooks-trust; the user's own hooks do.
func TestE2EUntrustedProjectHooksDoNotRun(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "notes.md"})}},
		scripted.Turn{Text: "done"},
	)
	e.write("notes.md", "the notes\n")
	e.write(".claude/settings.json", hookSettings)
	e.write("reasonix.toml", "[[hooks]]\nevent = \"UserPromptSubmit\"\ncommand = \"touch toml-hook-ran\"\n")
	userMarker := filepath.Join(e.home, "user-hook-ran")
	userSettings := filepath.Join(filepath.Dir(e.repo), ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(userSettings), 0o755)
	os.WriteFile(userSettings, []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch '`+userMarker+`'"}]}]}}`), 0o644)
	r := e.run("", "run", "read the notes")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, f := range []string{"session-started", "post-payload.json", "toml-hook-ran"} {
		if _, err := os.Stat(filepath.Join(e.repo, f)); err == nil {
			t.Errorf("untrusted project hook ran (%s)", f)
		}
	}
	if !strings.Contains(r.stderr, "project hook(s) not run") {
		t.Errorf("no notice about the skipped hooks:\n%s", r.stderr)
	}
	if _, err := os.Stat(userMarker); err != nil {
		t.Errorf("the user's own Stop hook did not run: %v", err)
	}
}

// doctor names every Claude Code and OpenCode file it finds and what it did
// with it, the ignored ones included, and lists the hooks with their trust.
func TestE2EDoctorReportsForeignFiles(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "unused"})
	e.write(".claude/settings.json", `{"permissions": {"allow": ["WebSearch(domain:go.dev)"], "deny": ["Read(./.env)"], "defaultMode": "bypassPermissions"},
 "env": {"X": "1"}, "hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "gofmt -w ."}]}],
 "Notification": [{"hooks": [{"type": "command", "command": "say hi"}]}]}}`)
	e.write("CLAUDE.md", "be nice\n")
	e.write(".claude/commands/git/commit.md", "---\ndescription: commit\n---\ncommit $ARGUMENTS\n")
	e.write(".claude/agents/cl/code-explorer.md", "---\nname: code-explorer\ndescription: explores\n---\nexplore\n")
	e.write("opencode.json", `{"agent": {"review": {"prompt": "x"}}}`)
	e.write(".opencode/agent/review.md", "---\ndescription: r\n---\nreview\n")
	e.write("CLAUDE.local.md", "mine\n")
	e.write(".claude/rules/testing.md", "test first\n")
	e.write("services/api/CLAUDE.md", "api rules\n")
	e.write("node_modules/pkg/CLAUDE.md", "a dependency's\n")
	r := e.run("", "doctor")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		filepath.Join(".claude", "settings.json") + "\n    permissions: 0 allow, 0 ask, 1 deny rule(s) merged",
		"defaultMode IGNORED: bypassPermissions is honoured only in ~/.claude/settings.json",
		"KEPT BUT INERT (no such tool in Reasonix): WebSearch(domain:go.dev) (line 1)",
		`IGNORED: key "env"; hooks for Notification (Reasonix does not run that event)`,
		"CLAUDE.md\n    rules file",
		"1 agent file(s): subagents",
		"1 command file(s): custom slash commands",
		"opencode.json\n    IGNORED: OpenCode's config is not read",
		"IGNORED: 1 OpenCode agent file(s)",
		"hooks:      1 loaded; project hooks NOT trusted yet",
		"[project] PostToolUse [Edit|Write]: gofmt -w .",
		"CLAUDE.local.md\n    rules file",
		filepath.Join(".claude", "rules") + "\n    1 rules file(s): part of every session's system prompt",
		"rules files in subfolders (services/api/CLAUDE.md): read when a file tool first reaches their folder",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, r.stdout)
		}
	}
	// And the rules a session gets.
	r = e.run("", "context")
	for _, want := range []string{"CLAUDE.local.md", filepath.Join(".claude", "rules", "testing.md")} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("context lacks %q:\n%s", want, r.stdout)
		}
	}
}

// The user's own [[hooks]] (config.toml in the Reasonix home) run without
// a trust question: UserPromptSubmit's output joins the user turn (never
// the cached prefix), and a Stop hook that exits 2 sends the session back
// to work with its reason, once, since it checks stop_hook_active.
func TestE2EUserHooksPromptContextAndStop(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t, scripted.Turn{Text: "first answer"}, scripted.Turn{Text: "tests pass now"})
	cfg := `[[hooks]]
event = "UserPromptSubmit"
command = "echo 'ticket: ABC-123'"

[[hooks]]
event = "Stop"
command = "if grep -q '\"stop_hook_active\":true'; then exit 0; fi; echo 'run the tests before you stop' >&2; exit 2"
timeout = 10
`
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "run", "fix the bug")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d, want 2 (the Stop hook sends the session back once)", len(reqs))
	}
	var first []struct{ Role, Content string }
	json.Unmarshal(messagesOf(t, reqs[0]), &first)
	if first[0].Role != "system" || strings.Contains(first[0].Content, "ABC-123") {
		t.Errorf("the hook's context reached the system prompt")
	}
	if last := first[len(first)-1]; last.Role != "user" || !strings.Contains(last.Content, "fix the bug") || !strings.Contains(last.Content, "ticket: ABC-123") {
		t.Errorf("user turn %q lacks the hook's context", last.Content)
	}
	if !bytes.Contains(messagesOf(t, reqs[1]), []byte("run the tests before you stop")) {
		t.Errorf("the Stop hook's reason did not reach the model")
	}
	if !strings.Contains(r.stdout, "tests pass now") {
		t.Errorf("final answer %q", r.stdout)
	}
	assertPrefixStable(t, reqs)
}

// Trusting a project's hooks goes through the approval stream; "always"
// is remembered for that exact hook set, and a changed set is not trusted.
func TestE2EHookTrustAskedOnTheStreamAndRemembered(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t, scripted.Turn{Text: "one"}, scripted.Turn{Text: "two"}, scripted.Turn{Text: "three"})
	settings := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch started"}]}]}}`
	e.write(".claude/settings.json", settings)
	c := startStream(t, e)
	c.send(userLine("hello"))
	req := c.await("the trust question", typed("approval_request"))
	if req["tool"] != "hooks" || !strings.Contains(fmt.Sprint(req["command"]), "SessionStart: touch started") {
		t.Fatalf("trust request %v", req)
	}
	if got := fmt.Sprint(req["choices"]); got != "[allow allow_always deny]" {
		t.Errorf("choices %s", got)
	}
	c.send(map[string]any{"type": "approval", "id": req["id"], "decision": "allow_always"})
	c.await("the turn's end", turnDone)
	c.stdin.Close()
	e.read("started")
	if _, err := os.Stat(filepath.Join(e.home, "trusted-hooks.json")); err != nil {
		t.Fatalf("trust not remembered: %v", err)
	}

	// Remembered: a headless run now runs them without the flag.
	os.Remove(filepath.Join(e.repo, "started"))
	if r := e.run("", "run", "again"); r.code != 0 || strings.Contains(r.stderr, "not run") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	e.read("started")

	// Changed: not trusted any more.
	os.Remove(filepath.Join(e.repo, "started"))
	e.write(".claude/settings.json", strings.Replace(settings, "touch started", "touch started; touch more", 1))
	r := e.run("", "run", "and again")
	if _, err := os.Stat(filepath.Join(e.repo, "started")); err == nil || !strings.Contains(r.stderr, "project hook(s) not run") {
		t.Errorf("a changed hook set ran without being trusted (exit %d)\n%s", r.code, r.stderr)
	}
}

// A settings.json Read deny for a path outside the workspace is the
// sandbox's too: a command that reaches the file by a path the gate
// cannot see (built when the line runs) is refused by the kernel, even
// under --yolo, and doctor lists the path in the read deny list.
func TestE2EClaudeSettingsDenyReadIsSandboxed(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox's read deny list is Landlock's (Linux)")
	}
	if enforced, _, detail := permission.SandboxStatus(permission.SandboxOptions{}); !enforced {
		t.Skipf("Landlock not enforced here: %s", detail)
	}
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": `k=prod; cat ~/secrets/$k.key; echo status=$?`})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": `cat ~/notes/plan.txt`})}},
		scripted.Turn{Text: "done"},
	)
	root := filepath.Dir(e.repo) // the run's HOME
	for rel, body := range map[string]string{"secrets/prod.key": "TOKEN=very-secret-31337\n", "notes/plan.txt": "plain notes\n"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.write(".claude/settings.json", `{"permissions": {"deny": ["Read(~/secrets/**)", "Read(./.env)"]}}`)
	r := e.run("", "run", "--yolo", "read the key")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d", len(reqs))
	}
	msgs := string(messagesOf(t, reqs[2]))
	if strings.Contains(msgs, "very-secret-31337") {
		t.Fatalf("the secret reached the model:\n%s", msgs)
	}
	if !strings.Contains(msgs, "ermission denied") || !strings.Contains(msgs, "status=1") {
		t.Errorf("the sandbox did not refuse the read:\n%s", msgs)
	}
	if !strings.Contains(msgs, "plain notes") {
		t.Errorf("a file beside the denied folder was not readable:\n%s", msgs)
	}
	d := e.run("", "doctor")
	if !strings.Contains(d.stdout, filepath.Join(root, "secrets")) {
		t.Errorf("doctor does not list the denied folder:\n%s", d.stdout)
	}
	if !strings.Contains(d.stdout, "read rules: Read(./.env): ") {
		t.Errorf("doctor does not say what becomes of the Read rule inside the workspace:\n%s", d.stdout)
	}
}

// SubagentStop hooks run when a task subagent ends (not Stop, which is
// the conversation's), and PreCompact hooks before a compaction, with
// Claude Code's payloads: hook_event_name, session_id, stop_hook_active,
// trigger.
func TestE2ESubagentStopAndPreCompactHooks(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("task", map[string]any{"agent": "explore", "description": "look", "prompt": "look at AREA-1"})}},
		scripted.Turn{Match: "look at AREA-1", Text: "finding 1"},
		scripted.Turn{Text: "first done"},
		scripted.Turn{Text: "second done"},
		scripted.Turn{Match: "Transcript to digest", Text: "digest: looked at AREA-1."},
	)
	cfg := fmt.Sprintf("[[providers]]\nname = \"small\"\nkind = \"openai\"\nbase_url = %q\napi_key = \"k\"\nmodel = \"small-model\"\ncontext_window = 64000\n\n", e.srv.URL()) + `[[hooks]]
event = "SubagentStop"
command = "cat >> subagent-stop.jsonl; echo >> subagent-stop.jsonl"

[[hooks]]
event = "Stop"
command = "cat >> stop.jsonl; echo >> stop.jsonl"

[[hooks]]
event = "PreCompact"
command = "cat > precompact.json"
`
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "run", "--model", "small", "explore the code"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	sub := strings.Split(strings.TrimSpace(e.read("subagent-stop.jsonl")), "\n")
	stop := strings.Split(strings.TrimSpace(e.read("stop.jsonl")), "\n")
	if len(sub) != 1 || len(stop) != 1 {
		t.Fatalf("SubagentStop ran %d time(s), Stop %d, want 1 each:\n%s\n%s", len(sub), len(stop), sub, stop)
	}
	var subP, stopP map[string]any
	if err := json.Unmarshal([]byte(sub[0]), &subP); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(stop[0]), &stopP); err != nil {
		t.Fatal(err)
	}
	if subP["hook_event_name"] != "SubagentStop" || subP["stop_hook_active"] != false || stopP["hook_event_name"] != "Stop" {
		t.Errorf("payloads: %v / %v", subP, stopP)
	}
	if subP["session_id"] == stopP["session_id"] || subP["session_id"] == "" {
		t.Errorf("the subagent's payload names the conversation's session %v", subP["session_id"])
	}

	if r := e.run("", "run", "--model", "small", "--continue", "go on"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	c := e.run("", "compact", "--model", "small")
	if c.code != 0 || !strings.Contains(c.stdout, "compacted") {
		t.Fatalf("compact: exit %d\n%s\n%s", c.code, c.stdout, c.stderr)
	}
	var pre map[string]any
	if err := json.Unmarshal([]byte(e.read("precompact.json")), &pre); err != nil {
		t.Fatal(err)
	}
	if pre["hook_event_name"] != "PreCompact" || pre["trigger"] != "manual" || pre["session_id"] != stopP["session_id"] {
		t.Errorf("PreCompact payload %v (conversation %v)", pre, stopP["session_id"])
	}
}

// The person's settings file's additionalDirectories open a folder beside
// the workspace to the file tools (the shared folder's file is read); a
// folder only the project's settings file lists, which comes with the
// repository, is refused, as its bypassPermissions is.
func TestE2EClaudeSettingsAdditionalDirectories(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "../shared/notes.txt"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "../other/notes.txt"})}},
		scripted.Turn{Text: "done"},
	)
	root := filepath.Dir(e.repo)
	for _, d := range []string{"shared", "other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "notes.txt"), []byte("NOTES-OF-"+d+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The person's own settings file (HOME is the folder holding the
	// repository); a project's may not open folders outside it.
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte(`{"permissions": {"additionalDirectories": ["`+filepath.Join(root, "shared")+`"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write(".claude/settings.json", `{"permissions": {"additionalDirectories": ["../other"]}}`)
	r := e.run("", "run", "--auto", "read the notes")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	msgs := string(messagesOf(t, e.srv.Requests()[2]))
	if !strings.Contains(msgs, "NOTES-OF-shared") {
		t.Errorf("the additional directory was not readable:\n%s", msgs)
	}
	if strings.Contains(msgs, "NOTES-OF-other") {
		t.Errorf("a folder only the project's settings file listed was readable:\n%s", msgs)
	}
	if d := e.run("", "doctor"); !strings.Contains(d.stdout, "additionalDirectories outside the workspace IGNORED") {
		t.Errorf("doctor does not say the project's folder is ignored:\n%s", d.stdout)
	}
}

// A Read(./.env) deny inside the workspace holds against commands the
// gate cannot read: the sandbox starts them with every .env hidden (a
// mount namespace), so a path built when the line runs, an interpreter or
// a recursive grep reads nothing, under --yolo, while the rest of the
// workspace, and files the command writes, read as usual.
func TestE2EClaudeSettingsDenyReadEnvHiddenFromCommands(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("hiding files from commands needs Linux mount namespaces")
	}
	if enforced, _, detail := permission.SandboxStatus(permission.SandboxOptions{}); !enforced {
		t.Skipf("Landlock not enforced here: %s", detail)
	}
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": `k=env; cat .$k; cat app/.$k; echo made > new.txt; cat new.txt src/a.txt; echo status=$?`})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": `python3 -c "import os; print([open(os.path.join(d, f)).read() for d, _, fs in os.walk('.') for f in fs if f.endswith('nv')])"; echo found-done`})}},
		// Ways around the hiding: unmount it, or reach the file through
		// another process's view of the file system.
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": `sh probe.sh; echo probe-done`})}},
		scripted.Turn{Text: "done"},
	)
	e.write("probe.sh", "f=.e; f=${f}nv\numount $f 2>/dev/null\ncat $f /proc/$PPID/cwd/$f /proc/$PPID/root$PWD/$f /proc/1/root$PWD/$f\necho overwritten > $f\n")
	e.write(".env", "DB_PASSWORD=hunter2-very-secret\n")
	e.write("app/.env", "NESTED_SECRET=swordfish-42\n")
	e.write("src/a.txt", "plain source\n")
	e.write(".claude/settings.json", `{"permissions": {"deny": ["Read(./.env)"]}}`)
	// Whether user namespaces can be made here is the binary's to probe
	// (this test binary is not the helper); doctor says.
	d := e.run("", "doctor")
	if strings.Contains(d.stdout, "the sandbox cannot hide it here") {
		t.Skipf("the sandbox cannot hide files here:\n%s", d.stdout)
	}
	for _, want := range []string{"each command starts with the matching files hidden", filepath.Join(e.repo, ".env"), filepath.Join(e.repo, "app", ".env")} {
		if !strings.Contains(d.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, d.stdout)
		}
	}
	r := e.run("", "run", "--yolo", "what is in .env?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d\n%s", len(reqs), r.stderr)
	}
	msgs := string(messagesOf(t, reqs[3]))
	if strings.Contains(msgs, "hunter2") || strings.Contains(msgs, "swordfish") {
		t.Fatalf("a secret reached the model:\n%s", msgs)
	}
	for _, want := range []string{"made", "plain source", "status=0", "found-done", "probe-done", "Read-only file system"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("the command's own files did not read as usual (%q missing):\n%s", want, msgs)
		}
	}
	if e.read(".env") != "DB_PASSWORD=hunter2-very-secret\n" {
		t.Errorf(".env changed on disk")
	}
}

// TestE2EHookToolInputHasClaudeFilePath: hook scripts written for Claude
// Code read the file of a Read, Write or Edit call as
// .tool_input.file_path (an absolute path), as a formatter hook does with
// `jq -r .tool_input.file_path`; the payload carries it beside Reasonix's
// own path.
func TestE2EHookToolInputHasClaudeFilePath(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "src/a.go", "content": "package a\n"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "src/a.go", "old_string": "package a", "new_string": "package b"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("multi_edit", map[string]any{"path": "src/a.go", "edits": []map[string]any{{"old_string": "package b", "new_string": "package c"}}})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("move_file", map[string]any{"source": "src/a.go", "destination": "src/c.go"})}},
		scripted.Turn{Text: "done"},
	)
	e.write(".claude/settings.json", `{"hooks": {"PostToolUse": [{"matcher": "Write|Edit|MultiEdit",
		"hooks": [{"type": "command", "command": "cat >> post-payloads.jsonl; echo >> post-payloads.jsonl"}]}]}}`)
	if r := e.run("", "run", "--hooks-trust", "write it"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(e.read("post-payloads.jsonl")), "\n") {
		var p struct {
			ToolName  string `json:"tool_name"`
			ToolInput struct {
				FilePath string `json:"file_path"`
			} `json:"tool_input"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("payload %q: %v", line, err)
		}
		got = append(got, p.ToolName+" "+p.ToolInput.FilePath)
	}
	src := filepath.Join(e.repo, "src")
	want := []string{"Write " + filepath.Join(src, "a.go"), "Edit " + filepath.Join(src, "a.go"),
		"MultiEdit " + filepath.Join(src, "a.go"), "Edit " + filepath.Join(src, "c.go")}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("hooks saw tool_name and file_path\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestE2EClaudeWildcardBashRules: Claude Code's rules with a wildcard
// inside (Bash(git * main), Bash(* --force)) load and decide: the run
// used to stop at the settings file with "a wildcard is only allowed at
// the end".
func TestE2EClaudeWildcardBashRules(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("bash", map[string]any{"command": "echo pushed origin main"}),
			call("bash", map[string]any{"command": "echo x --force"}),
			call("bash", map[string]any{"command": "echo fine"}),
		}},
		scripted.Turn{Text: "done"},
	)
	e.write(".claude/settings.json", `{"permissions": {"ask": ["Bash(echo * main)"], "deny": ["Bash(* --force)"]}}`)
	r := e.run("", "run", "go")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var got []string
	for _, m := range wireMessages(t, e.srv.Requests()[1]) {
		if m.Role == "tool" {
			got = append(got, m.Content)
		}
	}
	if len(got) != 3 || !strings.Contains(got[0], "Bash(echo * main)") || !strings.Contains(got[1], "denied by rule Deny: Bash(* --force)") ||
		!strings.Contains(got[2], "fine") {
		t.Errorf("results %q", got)
	}
	if d := e.run("", "doctor"); !strings.Contains(d.stdout, "1 ask, 1 deny rule(s) merged") {
		t.Errorf("doctor:\n%s", d.stdout)
	}
}

// A call a deny rule refuses still goes through the PreToolUse hook
// first, as Claude Code orders them (hooks, then deny rules, then ask
// rules, then the mode): the hook sees it, and the gate refuses it all
// the same, an "allow" from the hook included.
func TestE2EPreToolUseHookRunsBeforeADenyRule(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "rm -f keep.txt"})}},
		scripted.Turn{Text: "done"},
	)
	e.write("keep.txt", "kept\n")
	e.write(".claude/settings.json", `{
  "permissions": {"deny": ["Bash(rm:*)"]},
  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
    "command": "cat >> pre.log; echo >> pre.log; echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"allow\"}}'"}]}]}
}`)
	r := e.run("", "run", "--hooks-trust", "--yolo", "--output-format", "stream-json", "clean up")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if log, err := os.ReadFile(filepath.Join(e.repo, "pre.log")); err != nil || !strings.Contains(string(log), "rm -f keep.txt") {
		t.Errorf("the PreToolUse hook did not see the denied call: %q %v", log, err)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "keep.txt")); err != nil {
		t.Error("the denied command ran")
	}
	msgs := wireMessages(t, e.srv.Requests()[1])
	if res := msgs[len(msgs)-1]; res.Role != "tool" || !strings.Contains(res.Content, "Bash(rm:*)") || strings.Contains(res.Content, "PreToolUse") {
		t.Errorf("the result should name the deny rule, not the hook: %+v", res)
	}
}

// A deny rule without a specifier (Bash, mcp__server) refuses every call
// of its tools, and Claude Code leaves such a tool out of what the model
// is offered, before hooks or rules are consulted: no call, no
// PreToolUse hook. A scoped deny rule keeps the tool offered.
func TestE2EBareDenyRuleWithholdsTheTool(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "touch made.txt"})}},
		scripted.Turn{Text: "done"},
	)
	e.write(".claude/settings.json", `{
  "permissions": {"deny": ["Bash", "WebFetch(domain:example.com)"]},
  "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "cat >> pre.log; echo >> pre.log"}]}]}
}`)
	r := e.run("", "run", "--hooks-trust", "--yolo", "make a file")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if names := toolNames(t, reqs[0]); hasName(names, "bash") || !hasName(names, "web_fetch") || !hasName(names, "read_file") {
		t.Errorf("offered tools %v: want bash left out, web_fetch (a scoped rule) and the rest kept", names)
	}
	if log, err := os.ReadFile(filepath.Join(e.repo, "pre.log")); err == nil {
		t.Errorf("a PreToolUse hook ran for a tool the model was not offered: %s", log)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "made.txt")); err == nil {
		t.Error("the withheld tool ran")
	}
	r = e.run("", "context", "--json")
	if r.code != 0 || strings.Contains(r.stdout, `"bash"`) {
		t.Errorf("context lists the withheld tool: exit %d\n%.3000s", r.code, r.stdout)
	}
}

// A bare deny rule naming one Claude Code tool withholds that tool alone,
// as in Claude Code: Grep in reasonix.toml and Write in
// .claude/settings.json leave out grep and write_file, not every reader
// and writer; a bare Read still withholds them all.
func TestE2EBareClaudeToolDenyWithholdsThatToolOnly(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "notes.txt"})}},
		scripted.Turn{Text: "done"},
	)
	e.write("notes.txt", "marker-7f3a\n")
	e.write("reasonix.toml", "[permissions]\ndeny = [\"Grep\"]\n")
	e.write(".claude/settings.json", `{"permissions": {"deny": ["Write", "NotebookEdit"]}}`)
	r := e.run("", "run", "read notes.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	names := toolNames(t, reqs[0])
	for _, gone := range []string{"grep", "write_file"} {
		if hasName(names, gone) {
			t.Errorf("offered tools %v: %s should be withheld", names, gone)
		}
	}
	for _, kept := range []string{"read_file", "ls", "glob", "edit_file", "multi_edit"} {
		if !hasName(names, kept) {
			t.Errorf("offered tools %v: %s withheld by a rule that names another tool", names, kept)
		}
	}
	if msgs := string(messagesOf(t, reqs[1])); !strings.Contains(msgs, "marker-7f3a") {
		t.Errorf("read_file did not run under a Grep deny:\n%s", msgs)
	}

	if r = e.run("", "context", "--json"); !strings.Contains(r.stdout, `"read_file"`) || strings.Contains(r.stdout, `"grep"`) {
		t.Errorf("context under a Grep deny should list read_file and not grep: exit %d\n%.3000s", r.code, r.stdout)
	}
	e.write("reasonix.toml", "[permissions]\ndeny = [\"Read\"]\n")
	r = e.run("", "context", "--json")
	if r.code != 0 {
		t.Fatalf("context: exit %d\n%s", r.code, r.stderr)
	}
	for _, gone := range []string{`"read_file"`, `"grep"`, `"glob"`, `"ls"`} {
		if strings.Contains(r.stdout, gone) {
			t.Errorf("a bare Read deny kept %s offered:\n%.3000s", gone, r.stdout)
		}
	}
}
