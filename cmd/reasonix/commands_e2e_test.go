package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// lastUser is the newest user message of a request.
func lastUser(t *testing.T, body []byte) string {
	t.Helper()
	msgs := wireMessages(t, body)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	t.Fatalf("no user message in %s", body)
	return ""
}

func gitInit(t *testing.T, e *e2e) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: this test needs a git repository")
	}
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir, cmd.Env = e.repo, e.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// reviewCommand is a command file in Claude Code's layout and syntax.
const reviewCommand = `---
description: Review the working tree
argument-hint: [focus] [depth]
allowed-tools: Bash(git status:*), Bash(git diff:*)
---
Review the change with a focus on $1 (everything typed: $ARGUMENTS). Budget: $$5.
Depth: [$2]

Status:
!` + "`git status --short`" + `
`

// TestE2ECustomCommandInRun: /review from .claude/commands reaches the
// model rendered (its $1, an empty $2, $$, and the output of its !`git
// status` span), /git:commit from a nested folder works, an unknown /name
// is a usage error with the close names and never reaches the model, and
// a prompt that starts with a path is plain text.
func TestE2ECustomCommandInRun(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Match: "Review the change", Text: "Reviewed."},
		scripted.Turn{Match: "Commit what is staged", Text: "Committed."},
		scripted.Turn{Match: "usr/bin/env", Text: "A path, not a command."},
	)
	gitInit(t, e)
	e.write(".claude/commands/review.md", reviewCommand)
	e.write(".claude/commands/git/commit.md", "---\ndescription: Commit\n---\nCommit what is staged: $ARGUMENTS\n")
	e.write("untracked-file.txt", "new\n")

	r := e.run("", "run", "/review security")
	if r.code != 0 || !strings.Contains(r.stdout, "Reviewed.") {
		t.Fatalf("/review: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := lastUser(t, e.srv.Requests()[0])
	for _, want := range []string{
		"Review the change with a focus on security (everything typed: security). Budget: $5.",
		"Depth: []",
		"?? untracked-file.txt",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the rendered command lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "!`git status") || strings.Contains(got, "$1") || strings.Contains(got, "exit code: 0") {
		t.Errorf("the command was not expanded:\n%s", got)
	}

	if r := e.run("", "run", "/git:commit fix typo"); r.code != 0 || !strings.Contains(r.stdout, "Committed.") {
		t.Fatalf("/git:commit: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	before := len(e.srv.Requests())
	r = e.run("", "run", "/reveiw security")
	if r.code != 2 || !strings.Contains(r.stderr, "unknown command /reveiw") || !strings.Contains(r.stderr, "/review") {
		t.Errorf("unknown command: exit %d\n%s", r.code, r.stderr)
	}
	if n := len(e.srv.Requests()); n != before {
		t.Errorf("an unknown command reached the model (%d requests, want %d)", n, before)
	}

	if r := e.run("", "run", "/usr/bin/env is missing"); r.code != 0 || !strings.Contains(r.stdout, "A path, not a command.") {
		t.Errorf("a path prompt: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// doctor says the command files are used, not ignored.
	if r := e.run("", "doctor"); !strings.Contains(r.stdout, "2 command file(s): custom slash commands") {
		t.Errorf("doctor on the command files:\n%s", r.stdout)
	}

	// reasonix commands lists both, with where they come from.
	r = e.run("", "commands")
	for _, want := range []string{"/git:commit", "/review", "command (project)", ".claude/commands/review.md", "[focus] [depth]"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("reasonix commands lacks %q:\n%s\n%s", want, r.stdout, r.stderr)
		}
	}
}

// TestE2EAtReferences: @file#L1-3 inlines those lines, a folder comes as a
// listing without ignored entries, @alice stays text, and a file a Read
// deny rule covers is not inlined.
func TestE2EAtReferences(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "Seen."})
	e.write("src/a.go", "package a\n\nfunc One() {}\nfunc LINE4() {}\n")
	e.write("src/.gitignore", "*.tmp\n")
	e.write("src/scratch.tmp", "x")
	e.write(".env", "TOKEN=SECRET-VALUE\n")
	e.write("reasonix.toml", "[permissions]\ndeny = [\"Read(./.env)\"]\n")
	r := e.run("", "run", "explain @src/a.go#L1-3, list @src, tell @alice, and show @.env")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := lastUser(t, e.srv.Requests()[0])
	for _, want := range []string{
		"explain @src/a.go#L1-3, list @src, tell @alice, and show @.env",
		"<file path=\"src/a.go\" lines=\"1-3\">\npackage a\n\nfunc One() {}\n</file>",
		"<directory path=\"src\">\n.gitignore\na.go\n</directory>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the turn lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"LINE4", "scratch.tmp", "SECRET-VALUE"} {
		if strings.Contains(got, bad) {
			t.Errorf("the turn holds %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(r.stderr, "@.env is not inlined") || !strings.Contains(r.stderr, "Read(./.env)") {
		t.Errorf("no notice about the denied reference:\n%s", r.stderr)
	}
}

// TestE2EShellLines: "!ls" runs without a model call, and its command,
// exit code and output ride in the next turn of the conversation; in a
// one-shot run the output is printed and no request is made.
func TestE2EShellLines(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Match: "what did the listing show", Text: "Two files."})
	e.write("alpha.txt", "a")
	e.write("beta.txt", "b")

	r := e.run("", "run", "!ls")
	if r.code != 0 || !strings.Contains(r.stdout, "alpha.txt") || !strings.Contains(r.stdout, "beta.txt") {
		t.Errorf("run !ls: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Fatalf("!ls called the model (%d requests)", n)
	}
	// A dangerous command is refused without a person, and says so.
	if r := e.run("", "run", "!rm -rf alpha.txt"); r.code == 0 || !strings.Contains(r.stderr, "was not run") {
		t.Errorf("run !rm -rf: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "alpha.txt")); err != nil {
		t.Errorf("a dangerous ! line ran headless: %v", err)
	}

	c := startStream(t, e)
	c.send(userLine("!ls"))
	end := c.await("the shell call's end", func(m map[string]any) bool { return m["type"] == "tool_end" })
	if !strings.Contains(fmt.Sprint(end), "alpha.txt") {
		t.Errorf("tool_end of !ls: %v", end)
	}
	c.send(userLine("what did the listing show?"))
	c.await("the turn's end", turnDone)
	c.finish()
	reqs := e.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d, want 1 (the ! line calls no model)", len(reqs))
	}
	got := lastUser(t, reqs[0])
	for _, want := range []string{"`ls`", "alpha.txt", "beta.txt", "exit code: 0", "what did the listing show?"} {
		if !strings.Contains(got, want) {
			t.Errorf("the next turn lacks %q:\n%s", want, got)
		}
	}
	// The listing rides in the user turn, not in the system prompt.
	if sys := wireMessages(t, reqs[0])[0]; strings.Contains(sys.Content, "beta.txt") {
		t.Errorf("the listing went into the prefix")
	}
}

// TestE2EClaudeLoadingFixes: an agent in a nested folder of
// .claude/agents is found, a skill named "Agent Development" runs as
// /agent-development, and a user-level skill's bundled file is listed
// and readable by read_file once the skill is loaded.
func TestE2EClaudeLoadingFixes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	userHome := filepath.Join(root, "user")
	formsPath := filepath.Join(userHome, ".claude", "skills", "pdf", "forms.md")
	e := newE2E(t,
		scripted.Turn{Match: "AGENT-DEV-BODY", Text: "Developing."},
		scripted.Turn{Match: "PDF-BODY", ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": formsPath})}},
		scripted.Turn{Match: "FORMS-CONTENT", Text: "Filled."},
	)
	e.env = append(e.env, "HOME="+userHome) // the later HOME wins
	for p, body := range map[string]string{
		formsPath: "FORMS-CONTENT: how to fill a form\n",
		filepath.Join(userHome, ".claude", "skills", "pdf", "SKILL.md"): "---\nname: pdf\ndescription: Work with PDFs.\n---\nPDF-BODY: read forms.md first.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.write(".claude/agents/cl/code-explorer.md", "---\nname: code-explorer\ndescription: Explores code.\n---\nNESTED-AGENT-PROMPT\n")
	e.write(".claude/skills/agent-development/SKILL.md", "---\nname: Agent Development\ndescription: Build agents.\n---\nAGENT-DEV-BODY for $ARGUMENTS\n")

	r := e.run("", "context", "--role", "code-explorer")
	if r.code != 0 || !strings.Contains(r.stdout, filepath.Join(".claude", "agents", "cl", "code-explorer.md")) {
		t.Errorf("nested agent: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r = e.run("", "run", "/agent-development a linter")
	if r.code != 0 || !strings.Contains(r.stdout, "Developing.") {
		t.Fatalf("/agent-development: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := lastUser(t, e.srv.Requests()[0]); !strings.Contains(got, "AGENT-DEV-BODY for a linter") {
		t.Errorf("the skill's body: %s", got)
	}

	r = e.run("", "run", "/pdf fill the form")
	if r.code != 0 || !strings.Contains(r.stdout, "Filled.") {
		t.Fatalf("/pdf: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	if got := lastUser(t, reqs[1]); !strings.Contains(got, "- forms.md") {
		t.Errorf("/pdf does not list its bundled files:\n%s", got)
	}
	msgs := wireMessages(t, reqs[2])
	if last := msgs[len(msgs)-1]; last.Role != "tool" || !strings.Contains(last.Content, "FORMS-CONTENT") {
		t.Errorf("read_file of the bundled file: %+v", last)
	}

	var list []struct{ Name, Source string }
	r = e.run("", "commands", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("commands --json: %v\n%s", err, r.stdout)
	}
	want := map[string]string{"agent-development": "skill (project)", "pdf": "skill (user)"}
	for _, c := range list {
		if w, ok := want[c.Name]; ok && w == c.Source {
			delete(want, c.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("commands --json lacks %v: %s", want, r.stdout)
	}
}

// TestTUICustomCommandAndShellLine: in the interactive mode a custom
// command typed in the composer runs rendered, "!ls" shows its output
// without a model call, and the listing rides in the next turn.
func TestTUICustomCommandAndShellLine(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{Match: "Summarise TUI-FOCUS please", Text: "Summary done."},
		scripted.Turn{Match: "after the listing", Text: "Listing seen."},
	)
	e.write(".claude/commands/sum.md", "---\ndescription: Summarise\n---\nSummarise $1 please.\n")
	e.write("gamma-file.txt", "g")
	tt := startTUI(t, e, "chat")
	tt.typeLine("/sum TUI-FOCUS")
	tt.waitFor("Summary done.", "│ ready")
	tt.typeLine("!ls")
	tt.waitFor("gamma-file.txt")
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("!ls made a request (%d requests)", n)
	}
	tt.typeLine("after the listing")
	tt.waitFor("Listing seen.")
	reqs := e.srv.Requests()
	if got := lastUser(t, reqs[len(reqs)-1]); !strings.Contains(got, "gamma-file.txt") || !strings.HasSuffix(got, "after the listing") {
		t.Errorf("the turn after !ls:\n%s", got)
	}
	tt.quit()
}

// TestE2ECommandAllowedToolsForItsTurnOnly: a command's allowed-tools let
// the model's touch run without a question during the command's turn; the
// same call in the next turn asks again, and a dangerous command inside
// the command's turn still asks.
func TestE2ECommandAllowedToolsForItsTurnOnly(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Match: "Make the marker files", ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "touch in-turn.txt"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "rm -rf in-turn.txt"})}},
		scripted.Turn{Text: "Made it."},
		scripted.Turn{Match: "one more", ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "touch after-turn.txt"})}},
		scripted.Turn{Text: "Done."},
	)
	e.write(".claude/commands/mark.md", "---\nallowed-tools: Bash(touch:*), Bash(rm:*), WebSearch\n---\nMake the marker files.\n")
	c := startStream(t, e)
	c.send(userLine("/mark"))
	req := c.await("the question about rm -rf", typed("approval_request"))
	if !strings.Contains(fmt.Sprint(req["command"]), "rm -rf") {
		t.Fatalf("the first question is about %v, not the dangerous rm (touch should have run unasked)", req["command"])
	}
	c.send(map[string]any{"type": "approval", "id": req["id"], "decision": "deny"})
	c.await("the command's turn end", turnDone)
	if _, err := os.Stat(filepath.Join(e.repo, "in-turn.txt")); err != nil {
		t.Errorf("the pre-approved touch did not run: %v", err)
	}
	c.send(userLine("one more"))
	req = c.await("the question in the next turn", typed("approval_request"))
	if !strings.Contains(fmt.Sprint(req["command"]), "touch after-turn.txt") {
		t.Errorf("the next turn asked about %v", req["command"])
	}
	c.send(map[string]any{"type": "approval", "id": req["id"], "decision": "allow"})
	c.await("the next turn's end", turnDone)
	c.stdin.Close()
	for range c.lines {
	}
	<-c.exit
	found := false
	for _, m := range c.seen {
		if m["type"] == "notice" && strings.Contains(fmt.Sprint(m["text"]), "WebSearch") {
			found = true
		}
	}
	if !found {
		t.Error("no notice about the allowed-tools rule Reasonix cannot use (WebSearch)")
	}
}

// TestE2ECommandsListsMCPPrompts: reasonix commands lists a trusted MCP
// server's prompts beside custom commands, with their source.
func TestE2ECommandsListsMCPPrompts(t *testing.T) {
	t.Parallel()
	plugin := pluginExample(t)
	e := newE2E(t)
	e.writeUserConfig(fmt.Sprintf("[[plugins]]\nname = \"example\"\ncommand = %q\n", plugin))
	e.write(".reasonix/commands/mine.md", "---\ndescription: Mine\n---\nMine.\n")
	r := e.run("", "commands")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"/mcp__example__review", "mcp:example", "/mine", "command (project)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("reasonix commands lacks %q:\n%s\n%s", want, r.stdout, r.stderr)
		}
	}
}

// TestE2EClaudeCommandWithInvalidYAML: a Claude Code command file whose
// frontmatter is not valid YAML (a blank line before it, an unquoted
// colon, a capitalised key) still runs with its keys (its model answers);
// the line that sets no key is a notice naming the file and line, and the
// model gets the body alone, never the frontmatter block.
func TestE2EClaudeCommandWithInvalidYAML(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Match: "Touch the marker", Text: "Touched."})
	e.writeUserConfig(fmt.Sprintf("[[providers]]\nname = \"sim\"\nbase_url = %q\nmodels = [\"test-model\", \"other-model\"]\n", e.srv.URL()))
	e.write(".claude/commands/mark.md", "\n---\ndescription: Mark: touch the marker\nAllowed: nothing\nmodel: sim/other-model\n---\nTouch the marker $1.\n")
	r := e.run("", "run", "/mark now")
	if r.code != 0 || !strings.Contains(r.stdout, "Touched.") {
		t.Fatalf("/mark: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, filepath.Join(".claude", "commands", "mark.md")+": line 4: \"Allowed: nothing\" was left out") {
		t.Errorf("no notice naming the file and line:\n%s", r.stderr)
	}
	req := wireReq(t, e.srv.Requests()[0])
	if req.Model != "other-model" {
		t.Errorf("the command's model was not read: the request went to %q", req.Model)
	}
	if got := lastUser(t, e.srv.Requests()[0]); got != "Touch the marker now." {
		t.Errorf("the model got %q, want the body alone", got)
	}
	r = e.run("", "commands")
	if !strings.Contains(r.stdout, "Mark: touch the marker") {
		t.Errorf("reasonix commands lacks the description:\n%s", r.stdout)
	}
}

// TestE2EInitCommand: /init, which Claude Code, Codex, OpenCode and Crush
// users type first, asks the model to write AGENTS.md, and a project's
// own init command wins.
func TestE2EInitCommand(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "AGENTS.md", "content": "# Rules\nRun make test.\n"})}},
		scripted.Turn{Text: "Wrote AGENTS.md."},
		scripted.Turn{Text: "custom init ran"},
	)
	r := e.run("", "run", "/init stress the test commands")
	if r.code != 0 || e.read("AGENTS.md") != "# Rules\nRun make test.\n" {
		t.Fatalf("/init: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	first := firstUserOf(t, e.srv.Requests()[0])
	if !strings.Contains(first, "write its rules file, AGENTS.md") || !strings.Contains(first, "The user adds: stress the test commands") {
		t.Errorf("/init sent %q", first)
	}
	e.write(".claude/commands/init.md", "MY-OWN-INIT $ARGUMENTS\n")
	if r := e.run("", "run", "/init"); r.code != 0 {
		t.Fatalf("custom /init: exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if got := firstUserOf(t, reqs[len(reqs)-1]); !strings.HasPrefix(got, "MY-OWN-INIT") {
		t.Errorf("a project's init command did not win: %q", got)
	}
}
