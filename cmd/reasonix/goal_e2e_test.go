package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EGoalResumeAndClear: a goal interrupted by a provider failure stays
// active on disk; `--goal resume` continues it in a new process with the
// earlier history, and `--goal clear` forgets it.
func TestE2EGoalResumeAndClear(t *testing.T) {
	e := newE2E(t,
		goalStatus("continue", "step one done"),
		scripted.Turn{Text: "half an answ", ChunkSize: 4, CutAfter: 2},
	)
	r := e.run("", "run", "--goal", "ship RESUME-ME")
	if r.code != 1 {
		t.Fatalf("first run: exit %d, want 1 (stream cut); %s", r.code, r.stderr)
	}
	first := savedGoal(t, e)
	if first == nil || first.Status != "active" {
		t.Fatalf("goal not saved as active in its session: %+v", first)
	}

	e.srv = llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{goalStatus("done", "shipped")}})
	e.env = append(e.env, "REASONIX_BASE_URL="+e.srv.URL())
	r = e.run("", "run", "--goal", "resume")
	if r.code != 0 || !strings.Contains(r.stderr, "goal done") {
		t.Fatalf("resume: exit %d %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	msgs := string(messagesOf(t, reqs[0]))
	if !strings.Contains(msgs, "ship RESUME-ME") || !strings.Contains(msgs, "step one done") {
		t.Errorf("resumed session lacks the earlier history: %s", msgs)
	}

	// The goal went on in its own session, not a new one.
	if g := savedGoal(t, e); g == nil || g.Status != "done" || g.SessionID != first.SessionID {
		t.Errorf("resumed goal %+v, want done in session %s", g, first.SessionID)
	}

	r = e.run("", "run", "--goal", "clear")
	if r.code != 0 || !strings.Contains(r.stderr, "goal cleared") {
		t.Fatalf("clear: exit %d %s", r.code, r.stderr)
	}
	if g := savedGoal(t, e); g != nil {
		t.Errorf("goal still saved after clear: %+v", g)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("clear talked to the model: %d requests", n)
	}
}

// savedGoal is the goal of the newest session of e's repository, or nil.
func savedGoal(t *testing.T, e *e2e) *events.GoalState {
	t.Helper()
	list, _, err := store.List(filepath.Join(e.repo, ".reasonix", "sessions"), false)
	if err != nil || len(list) == 0 {
		t.Fatalf("no sessions: %v", err)
	}
	l, err := store.Load(list[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	return l.Meta.Goal
}

// TestE2EResearchGoal: a research goal keeps a log in the project, which
// every continuation turn carries (re-read from disk), never the prefix;
// --simple turns it off.
func TestE2EResearchGoal(t *testing.T) {
	t.Parallel()
	status := func(s, summary string) scripted.Call {
		return call("goal_status", map[string]any{"status": s, "summary": summary})
	}
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("glob", map[string]any{"pattern": ".reasonix/research/*/log.md"})}},
		scripted.Turn{ToolCalls: []scripted.Call{status("continue", "set up")}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "printf 'H1: the cache is cold EXPERIMENT-ONE\\n' >> .reasonix/research/*/log.md"})}},
		scripted.Turn{ToolCalls: []scripted.Call{status("continue", "tested H1")}},
		scripted.Turn{ToolCalls: []scripted.Call{status("done", "cause found")}},
	)
	r := e.run("", "run", "--yolo", "--goal", "--research why is the build slow")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "research", "*", "log.md"))
	if len(logs) != 1 {
		t.Fatalf("research logs %v", logs)
	}
	b, _ := os.ReadFile(logs[0])
	if !strings.Contains(string(b), "Goal: why is the build slow") || !strings.Contains(string(b), "EXPERIMENT-ONE") {
		t.Errorf("log %q", b)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("requests = %d", len(reqs))
	}
	// The third turn (the last request) carries the log as the model left it.
	var last struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	json.Unmarshal(reqs[4], &last)
	var users []string
	for _, m := range last.Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if len(users) != 3 || !strings.Contains(users[2], "<research-log>") || !strings.Contains(users[2], "EXPERIMENT-ONE") {
		t.Errorf("the last continuation turn lacks the current log: %q", users)
	}
	if strings.Contains(users[1], "EXPERIMENT-ONE") {
		t.Error("an earlier turn saw a later log")
	}
	if strings.Contains(last.Messages[0].Content, "research") {
		t.Error("the research log reached the system prompt")
	}
	assertPrefixStable(t, reqs)

	// --simple: no log, no research note.
	s := newE2E(t, scripted.Turn{ToolCalls: []scripted.Call{status("done", "ok")}})
	if r := s.run("", "run", "--goal", "--simple why is the build slow"); r.code != 0 {
		t.Fatalf("simple: exit %d\n%s", r.code, r.stderr)
	}
	if logs, _ := filepath.Glob(filepath.Join(s.repo, ".reasonix", "research", "*")); len(logs) != 0 || strings.Contains(string(s.srv.Requests()[0]), "research goal") {
		t.Errorf("--simple kept a research log: %v", logs)
	}

	// No flag: a goal that reads as research, debugging or optimisation
	// gets the log; one that does not, none.
	for goal, research := range map[string]bool{"find out why the login test is flaky": true, "optimise the parser": true, "rename the config loader": false} {
		a := newE2E(t, scripted.Turn{ToolCalls: []scripted.Call{status("done", "ok")}})
		r := a.run("", "run", "--goal", goal)
		if r.code != 0 {
			t.Fatalf("%q: exit %d\n%s", goal, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "research goal: hypotheses, experiments and results are kept in .reasonix/research/") != research {
			t.Errorf("%q: the person is not told which kind of goal runs:\n%s", goal, r.stderr)
		}
		logs, _ := filepath.Glob(filepath.Join(a.repo, ".reasonix", "research", "*", "log.md"))
		noted := strings.Contains(string(a.srv.Requests()[0]), "This is a research goal")
		if (len(logs) == 1) != research || noted != research {
			t.Errorf("%q: research logs %v, research note %v; want research %v", goal, logs, noted, research)
		}
	}
}

// goalHookSettings record every UserPromptSubmit and Stop payload; the
// prompt hook adds context, and the Stop hook blocks the first stop.
const goalHookSettings = `{
  "hooks": {
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "cat >> prompts.jsonl; echo >> prompts.jsonl; echo PROMPT-HOOK-CONTEXT"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "p=$(cat); echo \"$p\" >> stops.jsonl; case \"$p\" in *'\"stop_hook_active\":true'*) exit 0;; esac; echo 'run the linter before you stop' >&2; exit 2"}]}]
  }
}
`

// TestE2EGoalHooks: a goal's prompt is the person's, so UserPromptSubmit
// fires once with it (its context reaches the first turn), not for the
// turns that keep the goal going; Stop fires when the goal would end,
// and a Stop hook that blocks sends it back to work with its reason,
// with stop_hook_active set the next time.
func TestE2EGoalHooks(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t, goalStatus("continue", "half way"), goalStatus("done", "tests pass"), goalStatus("done", "linted too"))
	e.write(".claude/settings.json", goalHookSettings)
	r := e.run("", "run", "--hooks-trust", "--goal", "make the tests pass")
	if r.code != 0 || !strings.Contains(r.stderr, "goal done after 3 turn") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	prompts := strings.Split(strings.TrimSpace(e.read("prompts.jsonl")), "\n")
	if len(prompts) != 1 || !strings.Contains(prompts[0], `"hook_event_name":"UserPromptSubmit"`) || !strings.Contains(prompts[0], `"prompt":"make the tests pass"`) {
		t.Errorf("UserPromptSubmit payloads, want one for the goal:\n%s", strings.Join(prompts, "\n"))
	}
	stops := strings.Split(strings.TrimSpace(e.read("stops.jsonl")), "\n")
	if len(stops) != 2 || !strings.Contains(stops[0], `"stop_hook_active":false`) || !strings.Contains(stops[1], `"stop_hook_active":true`) {
		t.Errorf("Stop payloads, want two (at each would-be end):\n%s", strings.Join(stops, "\n"))
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d, want 3", len(reqs))
	}
	if !strings.Contains(string(reqs[0]), "PROMPT-HOOK-CONTEXT") {
		t.Errorf("the prompt hook's context is not in the first turn")
	}
	if strings.Count(string(reqs[2]), "PROMPT-HOOK-CONTEXT") != 1 {
		t.Errorf("the prompt hook ran again for a continuation turn")
	}
	if !strings.Contains(string(reqs[2]), "A Stop hook asks you to go on: run the linter before you stop") {
		t.Errorf("the Stop hook's reason did not reach the model:\n%s", messagesOf(t, reqs[2]))
	}
	assertPrefixStable(t, reqs)

	// A UserPromptSubmit hook that blocks stops the goal before any turn.
	e = newE2E(t, goalStatus("done", "never"))
	e.write(".claude/settings.json", `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'no goals on Fridays' >&2; exit 2"}]}]}}`)
	r = e.run("", "run", "--hooks-trust", "--goal", "make the tests pass")
	if r.code == 0 || !strings.Contains(r.stderr, "no goals on Fridays") {
		t.Errorf("blocked goal: exit %d\n%s", r.code, r.stderr)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("a blocked goal sent %d requests", n)
	}
}
