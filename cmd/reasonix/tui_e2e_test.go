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
	"time"

	"github.com/rivo/uniseg"

	"github.com/reasonix/reasonix/providers/scripted"
)

// tuiTerm is the real binary's interactive mode running in a detached tmux
// session of 120x40: keys go in with send-keys, the screen comes back with
// capture-pane, as a person would see it.
type tuiTerm struct {
	t    *testing.T
	e    *e2e
	sock string
}

// startTUI runs `reasonix ARGS...` in the e2e repository inside tmux. The
// wrapper script records whether the terminal settings were restored and
// the exit code, then keeps the pane open so both can be read.
func startTUI(t *testing.T, e *e2e, args ...string) *tuiTerm {
	t.Helper()
	return startTerm(t, e, "Reasonix", args...)
}

// startTerm runs the binary with args in a tmux terminal and waits for
// first on its screen.
func startTerm(t *testing.T, e *e2e, first string, args ...string) *tuiTerm {
	t.Helper()
	return startTermConf(t, e, "", first, args...)
}

// startTUIConf is startTUI with tmux configured by conf (tmux commands,
// one a line) before the binary starts.
func startTUIConf(t *testing.T, e *e2e, conf string, args ...string) *tuiTerm {
	t.Helper()
	return startTermConf(t, e, conf, "Reasonix", args...)
}

// startTermConf is startTerm with tmux configured by conf.
func startTermConf(t *testing.T, e *e2e, conf, first string, args ...string) *tuiTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it): the terminal end-to-end tests need it")
	}
	dir := t.TempDir()
	tt := &tuiTerm{t: t, e: e, sock: filepath.Join(dir, "tmux.sock")}
	var env strings.Builder
	for _, kv := range e.env {
		fmt.Fprintf(&env, " %s", shellQuote(kv))
	}
	var argv strings.Builder
	for _, a := range args {
		fmt.Fprintf(&argv, " %s", shellQuote(a))
	}
	script := fmt.Sprintf(`#!/bin/sh
cd %s || exit 1
before=$(stty -g)
env -i TERM="$TERM"%s %s%s
code=$?
after=$(stty -g)
if [ "$before" = "$after" ]; then echo "TTY RESTORED"; else echo "TTY CHANGED"; fi
echo "EXIT CODE $code"
sleep 600
`, shellQuote(e.repo), env.String(), shellQuote(binPath), argv.String())
	run := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(run, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	confPath := os.DevNull
	if conf != "" {
		confPath = filepath.Join(dir, "tmux.conf")
		if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tt.tmux("-f", confPath, "new-session", "-d", "-x", "120", "-y", "40", "-s", "rx", run)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", tt.sock, "kill-server").Run() })
	tt.waitFor(first)
	return tt
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (tt *tuiTerm) tmux(args ...string) string {
	tt.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tt.sock}, args...)...).CombinedOutput()
	if err != nil {
		tt.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is what the pane shows now.
func (tt *tuiTerm) screen() string { return tt.tmux("capture-pane", "-p", "-t", "rx") }

// typeLine types text literally and presses Enter.
func (tt *tuiTerm) typeLine(text string) {
	tt.t.Helper()
	tt.tmux("send-keys", "-t", "rx", "-l", text)
	tt.keys("Enter")
}

// keys sends tmux key names (Enter, C-c, Escape, y).
func (tt *tuiTerm) keys(k ...string) {
	tt.t.Helper()
	tt.tmux(append([]string{"send-keys", "-t", "rx"}, k...)...)
}

// waitFor polls the screen until it shows every want, and returns it.
func (tt *tuiTerm) waitFor(want ...string) string {
	tt.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := tt.screen()
		ok := true
		for _, w := range want {
			if !strings.Contains(s, w) {
				ok = false
				break
			}
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("screen never showed %q; it shows:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// quit leaves with /quit and checks the exit code and the terminal.
func (tt *tuiTerm) quit() {
	tt.t.Helper()
	tt.typeLine("/quit")
	tt.waitFor("EXIT CODE 0", "TTY RESTORED")
}

// TestTUIChatReadsAFileAndAnswers: a typed prompt reaches the model, the
// read_file call shows as one tool line and the scripted answer streams in;
// /quit exits 0 with the terminal restored. It starts with no arguments,
// as a person would.
func TestTUIChatReadsAFileAndAnswers(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "notes.txt"})}},
		scripted.Turn{Text: "The notes say: remember the milk.", ChunkSize: 4},
	)
	e.write("notes.txt", "remember the milk\n")
	tt := startTUI(t, e)
	tt.typeLine("what do my notes say?")
	s := tt.waitFor("› what do my notes say?", "✓ read_file notes.txt", "The notes say: remember the milk.")
	if !strings.Contains(s, "test-model") {
		t.Errorf("status line lacks the model:\n%s", s)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 || !bytes.Contains(reqs[1], []byte("remember the milk")) {
		t.Errorf("the file's content did not reach the model: %d requests", len(reqs))
	}
	tt.quit()
}

// TestTUIApprovalOverlay: in ask mode an edit shows the approval overlay;
// y lets it through, and in another run n refuses it and the refusal is
// what the model reads; a saves the narrowest rule in the project's
// reasonix.toml and says so.
func TestTUIApprovalOverlay(t *testing.T) {
	edit := scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.txt", "old_string": "hello", "new_string": "hello, world"})}}
	for _, tc := range []struct {
		key, want string
		changed   bool
	}{{"y", "✓ edit_file greet.txt", true}, {"n", "✗ edit_file greet.txt", false}, {"a", "saved Edit(greet.txt) to this project's reasonix.toml", true}} {
		t.Run(tc.key, func(t *testing.T) {
			e := newE2E(t, edit, scripted.Turn{Text: "Finished the greeting."})
			e.write("greet.txt", "hello\n")
			tt := startTUI(t, e, "chat")
			tt.typeLine("greet the world")
			s := tt.waitFor("approve edit_file?", "greet.txt", "+hello, world", "y/1 allow once", "a/3 always")
			if strings.Contains(s, "DANGEROUS") {
				t.Errorf("an ordinary write is marked dangerous:\n%s", s)
			}
			tt.keys(tc.key)
			s = tt.waitFor(tc.want, "Finished the greeting.")
			if strings.Contains(s, "approve edit_file?") {
				t.Errorf("the overlay stayed open:\n%s", s)
			}
			got := e.read("greet.txt")
			if (got == "hello, world\n") != tc.changed {
				t.Errorf("after %q the file is %q", tc.key, got)
			}
			reqs := e.srv.Requests()
			if !tc.changed && !bytes.Contains(reqs[len(reqs)-1], []byte("denied by the user")) {
				t.Errorf("the refusal did not reach the model: %s", messagesOf(t, reqs[len(reqs)-1]))
			}
			cfg, _ := os.ReadFile(filepath.Join(e.repo, "reasonix.toml"))
			if (tc.key == "a") != strings.Contains(string(cfg), `"Edit(greet.txt)"`) {
				t.Errorf("after %q the project's reasonix.toml is:\n%s", tc.key, cfg)
			}
			tt.quit()
		})
	}
}

// TestTUIGoal: /goal runs goal turns in the conversation until the model
// reports done; the goal rides in the user turn, the status line shows
// it, and /goal clear forgets the saved state.
func TestTUIGoal(t *testing.T) {
	e := newE2E(t, goalStatus("continue", "half way"), goalStatus("done", "shipped it"), goalStatus("done", "at once"))
	tt := startTUI(t, e, "chat")
	tt.typeLine("/goal ship it")
	tt.waitFor("goal done (2 turns)", "goal done after 2 turns")
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d, want 2", len(reqs))
	}
	var body struct {
		Messages []struct{ Role, Content string }
	}
	if err := json.Unmarshal(reqs[0], &body); err != nil {
		t.Fatal(err)
	}
	last := body.Messages[len(body.Messages)-1]
	if last.Role != "user" || !strings.Contains(last.Content, "ship it") {
		t.Errorf("the goal did not ride in the user turn: %+v", last)
	}
	if strings.Contains(body.Messages[0].Content, "ship it") {
		t.Errorf("the goal leaked into the system prompt")
	}
	if g := savedGoal(t, e); g == nil || g.Status != "done" {
		t.Fatalf("goal state not saved in the session: %+v", g)
	}
	tt.typeLine("/goal")
	tt.waitFor("status done after 2 of at most")
	tt.typeLine("/goal clear")
	tt.waitFor("goal cleared")
	if g := savedGoal(t, e); g != nil {
		t.Errorf("goal still saved after /goal clear: %+v", g)
	}
	// One turn is one turn, not "1 turns".
	tt.typeLine("/goal do it at once")
	tt.waitFor("goal done (1 turn)", "goal done after 1 turn (")
	tt.quit()
}

// farewellPlanUnchecked is farewellPlan without a validation command, which
// would ask the person before it runs.
func farewellPlanUnchecked() map[string]any {
	p := map[string]any{}
	for k, v := range farewellPlan {
		if k != "validation" {
			p[k] = v
		}
	}
	return p
}

// TestTUIPlanApprove: /plan shows the plan in an overlay; a approves it and
// the executor runs it (the write window covers the plan's file).
func TestTUIPlanApprove(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("submit_plan", farewellPlanUnchecked())}},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.go", "old_string": "hello", "new_string": "hello, farewell"})}},
		scripted.Turn{Text: "Executed the plan."},
		scripted.Turn{Text: "Checked step two."},
	)
	e.write("greet.go", greetSource)
	tt := startTUI(t, e, "chat")
	tt.typeLine("/plan add x")
	tt.waitFor("run this plan?", "Add farewell to greet.go", "a approve", "plan mode")
	tt.keys("a")
	// Each step is a block: its outcome collapsed to one line, its calls
	// shown by Ctrl-T.
	s := tt.waitFor("▸ [planner] done", "▸ [step s1: Add farewell to greet.go] done: Executed the plan. (greet.go)", "▸ [step s2: Check it] done: Checked step two.")
	if strings.Contains(s, "edit_file greet.go") {
		t.Errorf("a collapsed step block shows its calls:\n%s", s)
	}
	tt.keys("C-t")
	tt.waitFor("▾ [step s1: Add farewell to greet.go] done", "✓ edit_file greet.go", "+1 −1")
	if got := e.read("greet.go"); !strings.Contains(got, "hello, farewell") {
		t.Errorf("plan not executed: %q", got)
	}
	tt.quit()
}

// TestTUIPlanReject: r drops the plan and changes nothing.
func TestTUIPlanReject(t *testing.T) {
	e := newE2E(t, scripted.Turn{ToolCalls: []scripted.Call{call("submit_plan", farewellPlan)}})
	e.write("greet.go", greetSource)
	tt := startTUI(t, e, "chat")
	tt.typeLine("/plan add x")
	tt.waitFor("run this plan?")
	tt.keys("r")
	tt.waitFor("plan rejected; nothing was changed")
	if got := e.read("greet.go"); got != greetSource {
		t.Errorf("rejected plan changed the file: %q", got)
	}
	tt.quit()
}

// TestTUICtrlCCancelsTheTurn: Ctrl-C during a slow stream cancels the turn
// and returns to the composer; the next prompt works in the same
// conversation.
func TestTUICtrlCCancelsTheTurn(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{Text: strings.Repeat("slowly streaming ", 40), ChunkSize: 8, ChunkDelayMS: 100},
		scripted.Turn{Text: "Second answer arrived."},
	)
	tt := startTUI(t, e, "chat")
	tt.typeLine("take your time")
	tt.waitFor("slowly streaming", "working…")
	tt.keys("C-c")
	s := tt.waitFor("interrupted", "ready")
	if strings.Count(s, "slowly streaming") >= 40 {
		t.Errorf("the turn was not cut short:\n%s", s)
	}
	tt.typeLine("try again")
	// Wait for the turn to end (the status says ready), not just for its
	// text: a Ctrl-C while the session is still writing its state would
	// cancel that, not arm the quit.
	tt.waitFor("Second answer arrived.", "│ ready")
	reqs := e.srv.Requests()
	if len(reqs) != 2 || !bytes.Contains(reqs[1], []byte("try again")) || !bytes.Contains(reqs[1], []byte("take your time")) {
		t.Errorf("the second turn did not continue the conversation: %d requests", len(reqs))
	}
	// Idle: Ctrl-C twice quits, with exit code 0 and the terminal restored.
	tt.keys("C-c")
	tt.waitFor("press Ctrl-C again")
	tt.keys("C-c")
	tt.waitFor("EXIT CODE 0", "TTY RESTORED")
}

// TestTUIComposerAndUnknownCommand: Ctrl-J makes a newline instead of
// sending, and an unknown slash command says so.
func TestTUIComposerAndUnknownCommand(t *testing.T) {
	e := newE2E(t, scripted.Turn{Text: "Got both lines."})
	tt := startTUI(t, e, "chat")
	tt.typeLine("/nosuch")
	tt.waitFor("unknown command /nosuch")
	tt.tmux("send-keys", "-t", "rx", "-l", "first line")
	tt.keys("C-j")
	tt.tmux("send-keys", "-t", "rx", "-l", "second line")
	time.Sleep(100 * time.Millisecond)
	if n := len(e.srv.Requests()); n != 0 {
		t.Fatalf("Ctrl-J sent the message: %d requests", n)
	}
	tt.keys("Enter")
	tt.waitFor("Got both lines.")
	if reqs := e.srv.Requests(); len(reqs) != 1 || !bytes.Contains(reqs[0], []byte(`first line\nsecond line`)) {
		t.Errorf("multi-line prompt not sent as one turn")
	}
	tt.quit()
}

// TestTUIPlanEditInEditor: e suspends the UI, the plan JSON opens in
// $EDITOR on the real terminal, and the edited plan is what runs.
func TestTUIPlanEditInEditor(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("submit_plan", farewellPlanUnchecked())}},
		scripted.Turn{Text: "Executed the edited plan."},
		scripted.Turn{Text: "Checked step two."},
	)
	e.write("greet.go", greetSource)
	e.env = append(e.env, "EDITOR="+editorScript(t, `sed -i.bak 's/Add farewell to greet.go/Add GOODBYE to greet.go/' "$1"`))
	tt := startTUI(t, e, "chat")
	tt.typeLine("/plan add x")
	tt.waitFor("run this plan?", "Add farewell to greet.go")
	tt.keys("e")
	tt.waitFor("1. Add GOODBYE to greet.go", "Executed the edited plan.", "Checked step two.")
	reqs := e.srv.Requests()
	if len(reqs) != 3 || !bytes.Contains(reqs[1], []byte("Add GOODBYE to greet.go")) {
		t.Errorf("the executor did not get the edited plan")
	}
	if !strings.Contains(savedPlan(t, e), "Add GOODBYE") {
		t.Errorf("edited plan not re-saved")
	}
	tt.quit()
}

// TestChatNeedsATerminal: without a terminal, no arguments still print the
// usage with exit code 2, and chat says why it cannot start.
func TestChatNeedsATerminal(t *testing.T) {
	e := newE2E(t)
	if r := e.run(""); r.code != 2 || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("no arguments without a terminal: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run("", "chat"); r.code != 2 || !strings.Contains(r.stderr, "needs a terminal") {
		t.Errorf("chat without a terminal: exit %d\n%s", r.code, r.stderr)
	}
}

// TestTUIDangerousApproval: a dangerous command carries the banner, and
// always-allow is neither offered nor accepted.
func TestTUIDangerousApproval(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "rm old.txt"})}},
		scripted.Turn{Text: "Removed it."},
	)
	e.write("old.txt", "x\n")
	tt := startTUI(t, e, "chat")
	tt.typeLine("remove old.txt")
	s := tt.waitFor("approve bash?", "DANGEROUS", "rm old.txt", "n/4/Esc deny")
	if strings.Contains(s, "a/3 always") {
		t.Errorf("always-allow offered for a dangerous command:\n%s", s)
	}
	tt.keys("a")
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(e.repo, "old.txt")); err != nil {
		t.Fatalf("'a' let a dangerous command run: %v", err)
	}
	tt.keys("y")
	tt.waitFor("✓ bash rm old.txt", "Removed it.")
	if _, err := os.Stat(filepath.Join(e.repo, "old.txt")); !os.IsNotExist(err) {
		t.Errorf("the approved command did not run: %v", err)
	}
	tt.quit()
}

// TestTUIResumeAndContinue: /resume picks an earlier conversation, shows
// its transcript and the next turn goes on in it; `chat --continue` opens
// on the newest one.
func TestTUIResumeAndContinue(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{Text: "EARLIER ANSWER"},
		scripted.Turn{Text: "LATER ANSWER"},
		scripted.Turn{Text: "THIRD ANSWER"},
	)
	if r := e.run("", "run", "EARLIER PROMPT about parsing"); r.code != 0 {
		t.Fatalf("first run: %d %s", r.code, r.stderr)
	}
	tt := startTUI(t, e, "chat")
	tt.typeLine("/resume")
	tt.waitFor("resume a conversation", "EARLIER PROMPT about parsing", "1 turn(s)")
	tt.keys("Enter")
	tt.waitFor("› EARLIER PROMPT about parsing", "EARLIER ANSWER", "resumed session")
	tt.typeLine("and now the rest")
	tt.waitFor("LATER ANSWER")
	reqs := e.srv.Requests()
	msgs := wireMessages(t, reqs[len(reqs)-1])
	if len(msgs) != 4 || msgs[1].Content != "EARLIER PROMPT about parsing" || msgs[2].Content != "EARLIER ANSWER" {
		t.Errorf("the resumed turn did not carry the earlier conversation: %+v", msgs)
	}
	tt.quit()

	// The conversation went on in the same file; chat --continue opens it.
	files, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
	if len(files) != 2 { // the resumed one and the fresh one /resume replaced
		t.Logf("session files: %v", files)
	}
	tt = startTUI(t, e, "chat", "--continue")
	tt.waitFor("› and now the rest", "LATER ANSWER")
	tt.typeLine("third")
	tt.waitFor("THIRD ANSWER")
	msgs = wireMessages(t, e.srv.Requests()[2])
	if len(msgs) != 6 || msgs[3].Content != "and now the rest" {
		t.Errorf("chat --continue did not go on with the conversation: %+v", msgs)
	}
	tt.quit()
}

// TestTUIRewind: /rewind picks a turn; the file the turn wrote is gone,
// the conversation is back before it, and /rewind undo restores both.
func TestTUIRewind(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "notes.md", "content": "written by turn one\n"})}},
		scripted.Turn{Text: "Wrote the notes."},
	)
	tt := startTUI(t, e, "chat", "--yolo")
	tt.typeLine("WRITE THE NOTES please")
	tt.waitFor("Wrote the notes.", "│ ready")
	if e.read("notes.md") != "written by turn one\n" {
		t.Fatal("the turn did not write the file")
	}
	tt.typeLine("/rewind")
	tt.waitFor("rewind to just before", "WRITE THE NOTES please")
	tt.keys("Enter")
	tt.waitFor("rewound to just before turn 1 of 1", "removed notes.md")
	if _, err := os.Stat(filepath.Join(e.repo, "notes.md")); err == nil {
		t.Error("notes.md survived /rewind")
	}
	s := tt.screen()
	if strings.Contains(s, "Wrote the notes.") {
		t.Errorf("the rewound turn is still in the transcript:\n%s", s)
	}
	tt.keys("C-u") // the rewound prompt came back to the composer; clear it
	tt.typeLine("/rewind undo")
	tt.waitFor("undid the rewind to turn 1", "Wrote the notes.")
	if e.read("notes.md") != "written by turn one\n" {
		t.Error("/rewind undo did not bring the file back")
	}
	tt.quit()
}

// TestTUIRewindUndoesAPlan: a /plan's workers are sessions of their own,
// but the files they change are checkpointed with the conversation's
// next turn (the one carrying the plan's record): rewinding to that turn
// puts the files back as they were before the plan.
func TestTUIRewindUndoesAPlan(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("submit_plan", farewellPlanUnchecked())}},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.go", "old_string": "hello", "new_string": "hello, farewell"})}},
		scripted.Turn{Text: "Executed the plan."},
		scripted.Turn{Text: "Checked step two."},
		scripted.Turn{Match: "AFTER THE PLAN", Text: "Noted."},
	)
	e.write("greet.go", greetSource)
	tt := startTUI(t, e, "chat")
	tt.typeLine("/plan add x")
	tt.waitFor("run this plan?")
	tt.keys("a")
	tt.waitFor("▸ [step s2: Check it] done", "│ ready")
	if !strings.Contains(e.read("greet.go"), "hello, farewell") {
		t.Fatal("the plan did not change greet.go")
	}
	tt.typeLine("AFTER THE PLAN what changed?")
	tt.waitFor("Noted.", "│ ready")
	tt.typeLine("/rewind")
	tt.waitFor("rewind to just before", "AFTER THE PLAN")
	tt.keys("Enter")
	tt.waitFor("rewound to just before turn 1 of 1")
	if got := e.read("greet.go"); got != greetSource {
		t.Errorf("greet.go after /rewind:\n%s\nwant it as before the plan", got)
	}
	tt.keys("C-u") // the rewound prompt came back to the composer; clear it
	tt.quit()
}

// TestTUISkillReportReachesTheNextTurn: a skill run as a subagent works
// in its own session; its report is in the request of the conversation's
// next turn.
func TestTUISkillReportReachesTheNextTurn(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{Match: "REVIEW-TARGET", Text: "REVIEW FOUND: parse() misses a nil check"},
		scripted.Turn{Match: "fix what the review found", Text: "Fixed it."},
	)
	e.write(".reasonix/skills/review/SKILL.md", "---\nname: review\ndescription: Review code.\nrunAs: subagent\n---\nReview the code named in the request.\n")
	tt := startTUI(t, e, "chat")
	tt.typeLine("/review REVIEW-TARGET")
	tt.waitFor("REVIEW FOUND: parse() misses a nil check", "│ ready")
	tt.typeLine("fix what the review found")
	tt.waitFor("Fixed it.")
	reqs := e.srv.Requests()
	msgs := wireMessages(t, reqs[len(reqs)-1])
	last := msgs[len(msgs)-1].Content
	if !strings.Contains(last, "REVIEW FOUND: parse() misses a nil check") || !strings.HasSuffix(last, "fix what the review found") {
		t.Errorf("the next turn lacks the skill's report:\n%s", last)
	}
	tt.quit()
}

// TestTUIGoalResumeInItsSession: a goal stopped at its turn cap by `run
// --goal` is picked up with `chat --continue` and `/goal resume`, in the
// same session.
func TestTUIGoalResumeInItsSession(t *testing.T) {
	e := newE2E(t, goalStatus("continue", "first half done"), goalStatus("done", "second half done"))
	e.write("reasonix.toml", "[agent]\ngoal_max_turns = 1\n")
	if r := e.run("", "run", "--goal", "SHIP-IT in two halves"); r.code != 1 || !strings.Contains(r.stderr, "goal stopped") {
		t.Fatalf("capped goal: %d %s", r.code, r.stderr)
	}
	tt := startTUI(t, e, "chat", "--continue")
	tt.waitFor("SHIP-IT in two halves")
	tt.typeLine("/goal resume")
	tt.waitFor("goal done")
	msgs := wireMessages(t, e.srv.Requests()[1])
	last := msgs[len(msgs)-1].Content
	if !strings.Contains(last, "Continue working on the goal") || !strings.Contains(last, "first half done") {
		t.Errorf("the resumed goal turn: %s", last)
	}
	if !strings.Contains(msgs[1].Content, "SHIP-IT in two halves") {
		t.Errorf("the goal did not go on in its session: %+v", msgs[:2])
	}
	if g := savedGoal(t, e); g == nil || g.Status != "done" || g.Turns != 2 {
		t.Errorf("saved goal %+v", g)
	}
	tt.quit()
}

// TestTUIAskTool: the model's ask question is an overlay in the real
// binary; a choice's number answers it, and Esc tells the model to
// proceed on an assumption it states.
func TestTUIAskTool(t *testing.T) {
	t.Parallel()
	ask := call("ask", map[string]any{"question": "Which colour should the button be?", "choices": []string{"blue", "green"}})
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{ask}},
		scripted.Turn{Text: "Made it GREEN-DONE."},
		scripted.Turn{ToolCalls: []scripted.Call{ask}},
		scripted.Turn{Text: "Assumption: blue. BLUE-DONE"},
	)
	tt := startTUI(t, e, "chat")
	tt.typeLine("style the button")
	tt.waitFor("Which colour should the button be?", "1 blue", "2 green")
	tt.typeLine("2")
	tt.waitFor("Made it GREEN-DONE.")
	tt.typeLine("style it again")
	tt.waitFor("Which colour should the button be?")
	tt.keys("Escape")
	tt.waitFor("BLUE-DONE")
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if m := wireMessages(t, reqs[1]); m[len(m)-1].Content != "The user answered: green" {
		t.Errorf("the model got %q", m[len(m)-1].Content)
	}
	if m := wireMessages(t, reqs[3]); !strings.Contains(m[len(m)-1].Content, "chose not to answer; proceed on an assumption you state") || !strings.Contains(m[len(m)-1].Content, `"Assumption:"`) {
		t.Errorf("Esc did not tell the model to state an assumption: %q", m[len(m)-1].Content)
	}
	tt.quit()
}

// language = "zh" shows the TUI's own labels in Chinese: the welcome line,
// the status line, the approval overlay, /help, a picker (at 80 columns,
// its borders straight around the wide characters) and a notice; what
// the model writes is shown as it comes. Without it they are English (the
// other tests).
func TestTUIChineseLabels(t *testing.T) {
	t.Parallel()
	edit := scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.txt", "old_string": "hello", "new_string": "hello, world"})}}
	e := newE2E(t, edit, scripted.Turn{Text: "Finished the greeting."})
	e.write("greet.txt", "hello\n")
	e.write("reasonix.toml", "language = \"zh\"\n")
	tt := startTUI(t, e, "chat")
	tt.waitFor("Enter 发送", "就绪")
	tt.typeLine("greet the world")
	s := tt.waitFor("批准 edit_file？", "y/1 允许一次", "n/4/Esc 拒绝", "工具")
	if strings.Contains(s, "allow once") {
		t.Errorf("English choices in a Chinese UI:\n%s", s)
	}
	tt.keys("y")
	tt.waitFor("Finished the greeting.", "令牌 输入")
	tt.typeLine("/help")
	tt.waitFor("立即压缩上下文", "Ctrl-R 搜索")
	tt.tmux("resize-window", "-t", "rx", "-x", "80", "-y", "24")
	tt.typeLine("/model")
	tt.waitFrame(80, "下一次请求的模型", "↑/↓ 移动  Enter 选择  Esc 关闭")
	tt.keys("Escape")
	tt.waitFor("向 Reasonix 提问")
	tt.typeLine("/nosuch")
	tt.waitFor("未知命令 /nosuch", "（/help 列出所有命令）")
	tt.quit()
}

// waitFrame waits until the screen shows every want inside a straight
// box (see frameError) within width columns, and returns it; a terminal
// just resized may show the old layout for a moment.
func (tt *tuiTerm) waitFrame(width int, want ...string) string {
	tt.t.Helper()
	s := tt.waitFor(want...)
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := frameError(s, width)
		if err == "" {
			return s
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("%s:\n%s", err, s)
		}
		time.Sleep(50 * time.Millisecond)
		s = tt.waitFor(want...)
	}
}

// frameError is "" when the screen holds a box drawn with double lines
// whose left and right borders stand in one column each, inside width
// columns; else what is wrong. A wide character cut at the box's edge,
// or one pushing its border out, breaks that.
func frameError(screen string, width int) string {
	left, right := -1, -1
	for _, line := range strings.Split(screen, "\n") {
		first, last, col := -1, -1, 0
		for _, r := range line {
			if strings.ContainsRune("╔╗║╚╝", r) {
				if first < 0 {
					first = col
				}
				last = col
			}
			col += uniseg.StringWidth(string(r))
		}
		if first < 0 {
			continue
		}
		if left < 0 {
			left, right = first, last
		}
		if first != left || last != right || first == last || last >= width {
			return fmt.Sprintf("a border out of line (columns %d-%d, want %d-%d within %d)", first, last, left, right, width)
		}
	}
	if left < 0 {
		return "no box on the screen"
	}
	return ""
}

// TestTUIClaudeShortFlags: Claude Code's short flags at the top level:
// `reasonix -c` opens the newest conversation, `reasonix -r` the list to
// pick one from, `reasonix -r ID` that one.
func TestTUIClaudeShortFlags(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "FIRST ANSWER"},
		scripted.Turn{Text: "SECOND ANSWER"},
		scripted.Turn{Text: "AFTER C"},
		scripted.Turn{Text: "AFTER R"},
		scripted.Turn{Text: "AFTER R ID"},
	)
	if r := e.run("", "run", "FIRST PROMPT alpha"); r.code != 0 {
		t.Fatalf("first run: %d %s", r.code, r.stderr)
	}
	time.Sleep(20 * time.Millisecond) // the second is the newer
	if r := e.run("", "run", "SECOND PROMPT beta"); r.code != 0 {
		t.Fatalf("second run: %d %s", r.code, r.stderr)
	}
	tt := startTUI(t, e, "-c")
	tt.waitFor("› SECOND PROMPT beta", "SECOND ANSWER")
	tt.typeLine("go on c")
	tt.waitFor("AFTER C")
	if msgs := wireMessages(t, e.srv.Requests()[2]); len(msgs) != 4 || msgs[1].Content != "SECOND PROMPT beta" {
		t.Errorf("-c did not go on with the newest conversation: %+v", msgs)
	}
	tt.quit()

	tt = startTUI(t, e, "-r")
	tt.waitFor("resume a conversation", "FIRST PROMPT alpha", "SECOND PROMPT beta")
	tt.keys("Down", "Enter") // the list is newest first
	tt.waitFor("› FIRST PROMPT alpha", "FIRST ANSWER")
	tt.typeLine("go on r")
	tt.waitFor("AFTER R")
	if msgs := wireMessages(t, e.srv.Requests()[3]); len(msgs) != 4 || msgs[1].Content != "FIRST PROMPT alpha" {
		t.Errorf("-r did not go on with the picked conversation: %+v", msgs)
	}
	tt.quit()

	var list []struct{ ID, Title string }
	if r := e.run("", "sessions", "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil {
		t.Fatalf("sessions: %d %s", r.code, r.stdout)
	}
	id := ""
	for _, s := range list {
		if strings.HasPrefix(s.Title, "SECOND") {
			id = s.ID
		}
	}
	tt = startTUI(t, e, "-r", id)
	tt.waitFor("› go on c", "AFTER C")
	tt.typeLine("go on r id")
	tt.waitFor("AFTER R ID")
	tt.quit()
}

// TestTUIResumeWithAPrompt: `reasonix -r ID PROMPT`, as Claude Code's
// `claude -r ID "query"`, opens that conversation interactively with
// PROMPT as its first turn, shown below the history it continues;
// `reasonix -c PROMPT` does the same with the newest one. A bare -r (the
// list) with a prompt is a usage error.
func TestTUIResumeWithAPrompt(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "FIRST ANSWER"},
		scripted.Turn{Text: "SECOND ANSWER"},
		scripted.Turn{Text: "AFTER R PROMPT"},
		scripted.Turn{Text: "AFTER C PROMPT"},
	)
	if r := e.run("", "run", "FIRST PROMPT alpha"); r.code != 0 {
		t.Fatalf("first run: %d %s", r.code, r.stderr)
	}
	time.Sleep(20 * time.Millisecond) // the second is the newer
	if r := e.run("", "run", "SECOND PROMPT beta"); r.code != 0 {
		t.Fatalf("second run: %d %s", r.code, r.stderr)
	}
	var list []struct{ ID, Title string }
	if r := e.run("", "sessions", "--json"); r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil {
		t.Fatalf("sessions: %d %s", r.code, r.stdout)
	}
	id := ""
	for _, s := range list {
		if strings.HasPrefix(s.Title, "FIRST") {
			id = s.ID
		}
	}
	if id == "" {
		t.Fatalf("no FIRST session in %+v", list)
	}

	tt := startTUI(t, e, "-r", id, "QUERY ONE gamma")
	screen := tt.waitFor("› FIRST PROMPT alpha", "FIRST ANSWER", "› QUERY ONE gamma", "AFTER R PROMPT")
	if strings.Index(screen, "FIRST ANSWER") > strings.Index(screen, "QUERY ONE gamma") {
		t.Errorf("the prompt shows above the history it continues:\n%s", screen)
	}
	msgs := wireMessages(t, e.srv.Requests()[2])
	if len(msgs) != 4 || msgs[1].Content != "FIRST PROMPT alpha" || msgs[3].Content != "QUERY ONE gamma" {
		t.Errorf("-r ID PROMPT did not send PROMPT in that conversation: %+v", msgs)
	}
	tt.quit()

	tt = startTUI(t, e, "-c", "QUERY TWO delta")
	tt.waitFor("› QUERY ONE gamma", "AFTER R PROMPT", "› QUERY TWO delta", "AFTER C PROMPT")
	if msgs := wireMessages(t, e.srv.Requests()[3]); len(msgs) != 6 || msgs[5].Content != "QUERY TWO delta" {
		t.Errorf("-c PROMPT did not go on with the newest conversation: %+v", msgs)
	}
	tt.quit()
	if n := len(e.srv.Requests()); n != 4 {
		t.Errorf("%d requests, want 4 (each prompt sent once)", n)
	}

	tt = startTerm(t, e, "EXIT CODE", "-r", "--yolo", "QUERY THREE")
	tt.waitFor("a bare --resume opens the list", "EXIT CODE 2")
}

// TestTUIBarePrompt: `reasonix "a task"`, as Claude Code's
// `claude "query"`, opens the interactive mode with the task as its first
// turn; so does a prompt with no spaces in a script without them (Chinese),
// and flags after the prompt still apply. A mistyped command does not
// start a chat even at a terminal: it exits 2 naming the command meant.
func TestTUIBarePrompt(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "BARE ANSWER"},
		scripted.Turn{Text: "CJK ANSWER"},
	)
	tt := startTUI(t, e, "explain the project alpha")
	tt.waitFor("› explain the project alpha", "BARE ANSWER")
	if msgs := wireMessages(t, e.srv.Requests()[0]); len(msgs) != 2 || msgs[1].Content != "explain the project alpha" {
		t.Errorf("the bare prompt was not the first turn: %+v", msgs)
	}
	tt.quit()

	tt = startTUI(t, e, "修复登录错误", "--yolo")
	tt.waitFor("› 修复登录错误", "CJK ANSWER", "yolo")
	if msgs := wireMessages(t, e.srv.Requests()[1]); len(msgs) != 2 || msgs[1].Content != "修复登录错误" {
		t.Errorf("the prompt without spaces was not the first turn: %+v", msgs)
	}
	tt.quit()

	tt = startTerm(t, e, "EXIT CODE", "seesions")
	tt.waitFor(`unknown command "seesions"; did you mean "sessions"?`, "EXIT CODE 2")
	if n := len(e.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (one per prompt, none for the typo)", n)
	}
}
