package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/nodetest"
	"github.com/reasonix/reasonix/providers/scripted"
)

// acpSeen is what testdata/acp/client.mjs reports.
type acpSeen struct {
	Init struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
	} `json:"init"`
	SessionID string `json:"sessionId"`
	Modes     struct {
		CurrentModeID  string `json:"currentModeId"`
		AvailableModes []struct {
			ID string `json:"id"`
		} `json:"availableModes"`
	} `json:"modes"`
	Third      struct{ StopReason string } `json:"third"`
	Fourth     struct{ StopReason string } `json:"fourth"`
	First      struct{ StopReason string } `json:"first"`
	Second     struct{ StopReason string } `json:"second"`
	AfterFirst int                         `json:"afterFirst"`
	Updates    []struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	} `json:"updates"`
	Permissions []struct {
		SessionID string `json:"sessionId"`
		Options   []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
		ToolCall struct {
			ToolCallID string `json:"toolCallId"`
			Title      string `json:"title"`
		} `json:"toolCall"`
	} `json:"permissions"`
	Reads  []string `json:"reads"`
	Writes []struct {
		Path, Content, SessionID string
	} `json:"writes"`
	List struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Title     string `json:"title"`
		} `json:"sessions"`
	} `json:"list"`
	Stops     []string `json:"stops"`
	Withdrawn bool     `json:"withdrawn"`
	Exit      int      `json:"exit"`
	// Stderr is what reasonix acp (and the client) wrote to stderr.
	Stderr string `json:"-"`
}

// update is the part of a session update the test looks at.
type update struct {
	Kind       string `json:"sessionUpdate"`
	ToolCallID string `json:"toolCallId"`
	Status     string `json:"status"`
	ToolKind   string `json:"kind"`
	Title      string `json:"title"`
	Content    json.RawMessage
	Locations  []struct{ Path string }
	Text       string
}

func decodeUpdate(t *testing.T, raw json.RawMessage) update {
	t.Helper()
	var u update
	if err := json.Unmarshal(raw, &u); err != nil {
		t.Fatalf("update %s: %v", raw, err)
	}
	var c struct {
		Content struct{ Text string } `json:"content"`
	}
	if json.Unmarshal(raw, &c) == nil {
		u.Text = c.Content.Text
	}
	return u
}

func runACPClient(t *testing.T, e *e2e, mode string, extra ...string) acpSeen {
	t.Helper()
	mods := nodetest.Module(t, "@agentclientprotocol/sdk")
	// An ES module resolves packages from its own folder upwards, so the
	// client runs from a copy beside the installed node_modules.
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "acp", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mods, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "client.mjs")
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, mode)
	cmd.Env = append(append([]string{}, e.env...), "REASONIX_BIN="+binPath, "ACP_CWD="+e.repo)
	cmd.Env = append(cmd.Env, extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("client: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	var seen acpSeen
	if err := json.Unmarshal(out.Bytes(), &seen); err != nil {
		t.Fatalf("client output: %v\n%s\nstderr: %s", err, out.String(), errb.String())
	}
	if seen.Exit != 0 {
		t.Errorf("reasonix acp exited %d\nstderr: %s", seen.Exit, errb.String())
	}
	seen.Stderr = errb.String()
	return seen
}

// TestE2EACPEditorSession drives `reasonix acp` from a client built on the
// official TypeScript ACP SDK: a turn that reads and edits a file with the
// edit approved in the editor, a second turn cancelled at its permission
// request, the session listed, resumed in `reasonix run`, and loaded back
// into a new editor connection.
func TestE2EACPEditorSession(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "Let me look.", ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "greet.go"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.go", "old_string": `"hello"`, "new_string": `"hello, world"`})}},
		scripted.Turn{Text: "Changed the **greeting**.", ChunkSize: 4},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "rm -f build.out && echo removed"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "auto.txt", "content": "written in auto\n"})}},
		scripted.Turn{Text: "Wrote it."},
		scripted.Turn{ToolCalls: []scripted.Call{call("ask", map[string]any{"question": "Which colour?", "choices": []string{"blue", "green"}})}},
		scripted.Turn{Match: "The user answered: green", ToolCalls: []scripted.Call{call("ask", map[string]any{"question": "What should the class be called?"})}},
		scripted.Turn{Match: "No one to ask in this run", Text: "Painted it green. Assumption: the class is btn-green."},
		scripted.Turn{Text: "You asked me to change the greeting."},
	)
	e.write("greet.go", "package main\n\nconst greeting = \"hello\"\n")
	e.write("build.out", "artifact\n")
	seen := runACPClient(t, e, "turns")

	if seen.Init.ProtocolVersion != 1 || !seen.Init.AgentCapabilities.LoadSession {
		t.Errorf("initialize: %+v", seen.Init)
	}
	if seen.SessionID == "" || len(seen.Modes.AvailableModes) != 4 || seen.Modes.CurrentModeID != "ask" {
		t.Fatalf("session/new: id %q modes %+v", seen.SessionID, seen.Modes)
	}
	if seen.First.StopReason != "end_turn" {
		t.Errorf("first prompt stop reason %q, want end_turn", seen.First.StopReason)
	}
	if seen.Second.StopReason != "cancelled" {
		t.Errorf("second prompt stop reason %q, want cancelled", seen.Second.StopReason)
	}
	// The edit worked on the editor's buffer (its unsaved change kept),
	// landed on disk and was handed to the editor.
	if got := e.read("greet.go"); !strings.Contains(got, `"hello, world" // unsaved buffer`) {
		t.Errorf("the approved edit did not land on the editor's buffer: %q", got)
	}
	if len(seen.Writes) != 2 || seen.Writes[0].Path != filepath.Join(e.repo, "greet.go") ||
		!strings.Contains(seen.Writes[0].Content, `"hello, world" // unsaved buffer`) || seen.Writes[0].SessionID != seen.SessionID {
		t.Errorf("fs/write_text_file requests: %+v", seen.Writes)
	}
	if reqs := e.srv.Requests(); len(reqs) < 2 || !bytes.Contains(reqs[1], []byte("unsaved buffer")) {
		t.Errorf("read_file did not return the editor's buffer to the model")
	}
	if !contains(seen.Reads, filepath.Join(e.repo, "greet.go")) {
		t.Errorf("fs/read_text_file requests: %v", seen.Reads)
	}
	// After the switch to auto the write ran without a question (two
	// questions in all, checked below).
	if got := e.read("auto.txt"); seen.Third.StopReason != "end_turn" || got != "written in auto\n" {
		t.Errorf("auto mode: stop %q, auto.txt %q", seen.Third.StopReason, got)
	}
	if got := e.read("build.out"); got != "artifact\n" {
		t.Errorf("the cancelled command ran: build.out = %q", got)
	}

	// The first turn's updates: the answer streamed, a read and an edit
	// with a location and a diff, both completed.
	var text strings.Builder
	var read, edit bool
	for i, u := range seen.Updates[:seen.AfterFirst] {
		if u.SessionID != seen.SessionID {
			t.Errorf("update %d for session %q", i, u.SessionID)
		}
		d := decodeUpdate(t, u.Update)
		switch d.Kind {
		case "agent_message_chunk":
			text.WriteString(d.Text)
		case "tool_call":
			if d.ToolKind == "read" && len(d.Locations) == 1 && d.Locations[0].Path == filepath.Join(e.repo, "greet.go") {
				read = true
			}
		case "tool_call_update":
			if d.Status == "completed" && bytes.Contains(d.Content, []byte(`"type":"diff"`)) &&
				bytes.Contains(d.Content, []byte(`hello, world`)) && bytes.Contains(d.Content, []byte(`"oldText"`)) {
				edit = true
			}
		}
	}
	if !strings.Contains(text.String(), "Let me look.") || !strings.Contains(text.String(), "Changed the **greeting**.") {
		t.Errorf("agent message chunks = %q", text.String())
	}
	if !read || !edit {
		t.Errorf("read tool call with location: %v; completed edit with a diff: %v\nupdates: %s", read, edit, dumpUpdates(seen))
	}

	// Three questions: the edit (allowed) and the command (cancelled), each
	// naming its tool call and offering the gate's choices, then the ask
	// tool's question with choices (the one without put to no one).
	if len(seen.Permissions) != 3 {
		t.Fatalf("permission requests = %d, want 3: %+v", len(seen.Permissions), seen.Permissions)
	}
	if q := seen.Permissions[2]; q.ToolCall.Title != "Question: Which colour?" || len(q.Options) != 3 ||
		q.Options[0].OptionID != "blue" || q.Options[1].OptionID != "green" || seen.Fourth.StopReason != "end_turn" {
		t.Errorf("the ask tool's question: %+v, prompt stop %q", q, seen.Fourth.StopReason)
	}
	if reqs := e.srv.Requests(); len(reqs) < 9 || !bytes.Contains(reqs[7], []byte("The user answered: green")) ||
		!bytes.Contains(reqs[8], []byte("No one to ask in this run")) {
		t.Errorf("the model did not get the editor's pick, then the assumption text")
	}
	for i, p := range seen.Permissions[:2] {
		var ids []string
		for _, o := range p.Options {
			ids = append(ids, o.OptionID)
		}
		if p.SessionID != seen.SessionID || p.ToolCall.ToolCallID == "" || !contains(ids, "allow") || !contains(ids, "deny") {
			t.Errorf("permission %d: %+v", i, p)
		}
	}
	if !strings.Contains(seen.Permissions[0].ToolCall.Title, "greet.go") || !strings.Contains(seen.Permissions[1].ToolCall.Title, "rm -f build.out") {
		t.Errorf("permission titles: %q, %q", seen.Permissions[0].ToolCall.Title, seen.Permissions[1].ToolCall.Title)
	}

	// The editor's session is a Reasonix session: listed, and resumed in
	// the terminal with its history.
	found := false
	for _, s := range seen.List.Sessions {
		found = found || s.SessionID == seen.SessionID
	}
	if !found {
		t.Errorf("session/list does not name %s: %+v", seen.SessionID, seen.List)
	}
	r := e.run("", "run", "--resume", seen.SessionID, "what did I ask you first?")
	if r.code != 0 || !strings.Contains(r.stdout, "You asked me to change the greeting.") {
		t.Fatalf("resume in run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	last := reqs[len(reqs)-1]
	if !bytes.Contains(last, []byte("make the greeting say hello, world")) || !bytes.Contains(last, []byte("unsaved editor text")) {
		t.Errorf("the resumed run lost the editor's turn: %.600s", messagesOf(t, last))
	}

	// And back into an editor: session/load replays the conversation.
	loaded := runACPClient(t, e, "load", "ACP_SESSION="+seen.SessionID)
	var user, answer bool
	for _, u := range loaded.Updates {
		d := decodeUpdate(t, u.Update)
		user = user || d.Kind == "user_message_chunk" && strings.Contains(d.Text, "what did I ask you first?")
		answer = answer || d.Kind == "agent_message_chunk" && strings.Contains(d.Text, "You asked me to change the greeting.")
	}
	if !user || !answer {
		t.Errorf("session/load replay: user turn %v, answer %v\n%s", user, answer, dumpUpdates(loaded))
	}
}

// TestE2EACPCancelWithdrawsPermission: an editor that cancels the prompt
// at its permission request but leaves the request open (and would later
// answer allow) gets the prompt's cancelled stop reason at once, sees the
// request cancelled on the wire ($/cancel_request), and the command never
// runs; the session takes the next prompt.
func TestE2EACPCancelWithdrawsPermission(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "rm -f build.out && echo removed"})}},
		scripted.Turn{Text: "Nothing was removed."},
	)
	e.write("build.out", "artifact\n")
	seen := runACPClient(t, e, "dangling")
	if seen.First.StopReason != "cancelled" {
		t.Errorf("cancelled prompt stop reason %q, want cancelled", seen.First.StopReason)
	}
	if !seen.Withdrawn {
		t.Errorf("the permission request was left open after session/cancel")
	}
	if len(seen.Permissions) != 1 {
		t.Errorf("permission requests = %d, want 1", len(seen.Permissions))
	}
	if got := e.read("build.out"); got != "artifact\n" {
		t.Errorf("the cancelled command ran: build.out = %q", got)
	}
	if seen.Second.StopReason != "end_turn" {
		t.Errorf("next prompt stop reason %q, want end_turn\n%s", seen.Second.StopReason, dumpUpdates(seen))
	}
}

func dumpUpdates(s acpSeen) string {
	var b strings.Builder
	for _, u := range s.Updates {
		b.Write(u.Update)
		b.WriteByte('\n')
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestE2EACPHooksTrust: the trust question for an untrusted project's
// hooks belongs to no session; the first prompt that would run a hook
// puts it to the editor in that prompt's session, as a tool call of its
// own, and the editor's allow runs the hook, so the prompt ends instead
// of waiting for an answer no one is asked for.
func TestE2EACPHooksTrust(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t, scripted.Turn{Text: "Hooked."})
	e.write(".claude/settings.json", `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]}}`)
	seen := runACPClient(t, e, "prompts", "ACP_PROMPTS=say hi", "ACP_ANSWER=allow")
	if len(seen.Stops) != 1 || seen.Stops[0] != "end_turn" {
		t.Errorf("stop reasons %v, want [end_turn]\n%s", seen.Stops, dumpUpdates(seen))
	}
	if len(seen.Permissions) != 1 {
		t.Fatalf("permission requests = %d, want 1 (the hooks' trust)\n%s", len(seen.Permissions), dumpUpdates(seen))
	}
	p := seen.Permissions[0]
	if p.SessionID != seen.SessionID || !strings.HasPrefix(p.ToolCall.Title, "hooks: run this project's hooks") {
		t.Errorf("trust request: %+v (session %s)", p, seen.SessionID)
	}
	var started bool
	for _, u := range seen.Updates {
		d := decodeUpdate(t, u.Update)
		started = started || d.Kind == "tool_call" && d.ToolCallID == p.ToolCall.ToolCallID
	}
	if !started {
		t.Errorf("the trust question has no tool call of its own (%s)\n%s", p.ToolCall.ToolCallID, dumpUpdates(seen))
	}
	if _, err := os.Stat(filepath.Join(e.repo, "hook-ran")); err != nil {
		t.Errorf("the trusted hook did not run: %v", err)
	}
}

// TestE2EACPProjectMCPTrust: an untrusted server of the project's
// .mcp.json is asked about in the editor, in the first prompt, as a
// permission request on a tool call of its own. Allowed, the server
// starts and that session's request (the first after the answer)
// offers its tools, the session keeps its id and gets its answer; denied,
// the server never starts and its tools are not offered. Either way the
// notice that says so belongs to no session: it goes to stderr, the
// editor's log, as one plain line, and into no session's updates.
func TestE2EACPProjectMCPTrust(t *testing.T) {
	t.Parallel()
	plugin := pluginExample(t)
	for _, answer := range []string{"allow", "deny"} {
		e := newE2E(t, scripted.Turn{Text: "Ready for work."}, scripted.Turn{Text: "Still here."})
		e.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {"repo-tools": {"command": %q}}}`, plugin))
		seen := runACPClient(t, e, "prompts", "ACP_PROMPTS=say hi\nand again", "ACP_ANSWER="+answer)
		if len(seen.Stops) != 2 || seen.Stops[0] != "end_turn" || seen.Stops[1] != "end_turn" {
			t.Errorf("%s: stop reasons %v, want [end_turn end_turn]\n%s", answer, seen.Stops, dumpUpdates(seen))
		}
		if len(seen.Permissions) != 1 {
			t.Fatalf("%s: permission requests = %d, want 1 (the server's trust)\n%s", answer, len(seen.Permissions), dumpUpdates(seen))
		}
		p := seen.Permissions[0]
		var ids []string
		for _, o := range p.Options {
			ids = append(ids, o.OptionID)
		}
		if p.SessionID != seen.SessionID || p.ToolCall.Title != "mcp server repo-tools: "+plugin ||
			strings.Join(ids, ",") != "allow,allow_always,deny" {
			t.Errorf("%s: trust request %+v (session %s)", answer, p, seen.SessionID)
		}
		var started bool
		var status, text string
		for _, u := range seen.Updates {
			d := decodeUpdate(t, u.Update)
			started = started || d.Kind == "tool_call" && d.ToolCallID == p.ToolCall.ToolCallID
			if d.Kind == "tool_call_update" && d.ToolCallID == p.ToolCall.ToolCallID {
				status = d.Status
			}
			if d.Kind == "agent_message_chunk" {
				text += d.Text
			}
		}
		if want := map[string]string{"allow": "completed", "deny": "failed"}[answer]; !started || status != want {
			t.Errorf("%s: the trust call started %v, ended %q (want %s)\n%s", answer, started, status, want, dumpUpdates(seen))
		}
		if text != "Ready for work.Still here." {
			t.Errorf("%s: the editor got the answers %q", answer, text)
		}
		reqs := e.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%s: %d model requests, want 2", answer, len(reqs))
		}
		for i, r := range reqs {
			if offered := hasName(toolNames(t, r), "mcp__repo-tools__echo"); offered != (answer == "allow") {
				t.Errorf("%s: request %d offers the server's tools: %v", answer, i, offered)
			}
		}
		if _, err := os.Stat(filepath.Join(e.repo, ".reasonix", "sessions", seen.SessionID+".jsonl")); err != nil {
			t.Errorf("%s: the session's file: %v", answer, err)
		}
		_, err := os.Stat(filepath.Join(e.home, "logs", "mcp", "repo-tools.log"))
		if started := err == nil; started != (answer == "allow") {
			t.Errorf("%s: the server started: %v", answer, started)
		}
		if _, err := os.Stat(filepath.Join(e.home, "mcp-trust.json")); err == nil {
			t.Errorf("%s: trust was recorded for an answer for this run only", answer)
		}
		want := map[string]string{"allow": "reasonix: MCP server repo-tools is running (",
			"deny": "reasonix: MCP server repo-tools stays off (not trusted); `reasonix mcp list` shows it\n"}[answer]
		if !strings.Contains("\n"+seen.Stderr, "\n"+want) {
			t.Errorf("%s: stderr has no line %q:\n%s", answer, want, seen.Stderr)
		}
		if strings.Contains(dumpUpdates(seen), "repo-tools is running") || strings.Contains(dumpUpdates(seen), "stays off") {
			t.Errorf("%s: the notice of no session went to a session:\n%s", answer, dumpUpdates(seen))
		}
	}
}

// TestE2EACPMCPTrustFlag: `reasonix acp --mcp-trust` starts the project's
// .mcp.json servers without asking; once the server is up, a prompt's
// request offers its tools.
func TestE2EACPMCPTrustFlag(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t, scripted.Turn{Text: "Trusted by flag."})
	// The editor sends its prompt once the server has listed its
	// resources.
	seenByServer := writeTeedPlugin(t, e)
	seen := runACPClient(t, e, "prompts", "ACP_ARGS=--mcp-trust", "ACP_PROMPTS=say hi",
		"ACP_WAIT_FILE="+seenByServer, "ACP_WAIT_TEXT=example://greeting")
	if len(seen.Stops) != 1 || seen.Stops[0] != "end_turn" {
		t.Errorf("stop reasons %v, want [end_turn]\n%s", seen.Stops, dumpUpdates(seen))
	}
	if len(seen.Permissions) != 0 {
		t.Errorf("asked %d times with --mcp-trust: %+v", len(seen.Permissions), seen.Permissions)
	}
	if reqs := e.srv.Requests(); len(reqs) != 1 || !hasName(toolNames(t, reqs[0]), "mcp__repo-tools__echo") {
		t.Errorf("the request does not offer the server's tools (%d requests)", len(reqs))
	}
	if _, err := os.Stat(filepath.Join(e.home, "mcp-trust.json")); err == nil {
		t.Error("--mcp-trust recorded trust")
	}
}
