package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers/scripted"
)

// modelCommands writes a provider with two models and two commands: one
// asking for the other model, one for a Claude Code model no provider
// here offers.
func modelCommands(e *e2e) {
	e.writeUserConfig(fmt.Sprintf("[[providers]]\nname = \"sim\"\nbase_url = %q\nmodels = [\"test-model\", \"other-model\"]\n", e.srv.URL()))
	e.write(".claude/commands/quick.md", "---\ndescription: Ask the other model\nmodel: sim/other-model\n---\nQUICK question: $ARGUMENTS\n")
	e.write(".claude/commands/claude.md", "---\nmodel: claude-3-5-haiku-20241022\n---\nCLAUDE question\n")
}

// modelsOf lists the model of every request the server saw.
func modelsOf(t *testing.T, e *e2e) []string {
	t.Helper()
	var out []string
	for _, r := range e.srv.Requests() {
		out = append(out, wireReq(t, r).Model)
	}
	return out
}

// TestE2ECommandModelForItsTurnOnly: over stream-json input (the engine
// the TUI, ACP and the browser share), a command's `model` sends its turn,
// and only its turn, to that model: the turns around it stay on the
// conversation's model, every request extends the one before byte for
// byte with the same tool schemas, and `run --continue` goes on on the
// conversation's model. A model no provider offers is a notice naming it,
// and the turn runs on the conversation's model.
func TestE2ECommandModelForItsTurnOnly(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Match: "first", Text: "ONE"},
		scripted.Turn{Match: "QUICK question", Text: "TWO"},
		scripted.Turn{Match: "third", Text: "THREE"},
		scripted.Turn{Match: "CLAUDE question", Text: "FOUR"},
		scripted.Turn{Match: "fifth", Text: "FIVE"},
	)
	modelCommands(e)
	c := startStream(t, e)
	c.send(userLine("first"))
	c.await("the first turn", turnDone)
	c.send(userLine("/quick what is 2+2"))
	c.await("the command's notice", func(m map[string]any) bool {
		return m["type"] == "notice" && strings.Contains(fmt.Sprint(m["text"]), "/quick runs on sim/other-model for this turn")
	})
	c.await("the command's turn", turnDone)
	c.send(userLine("third"))
	c.await("the third turn", turnDone)
	c.send(userLine("/claude"))
	c.await("the unknown model's notice", func(m map[string]any) bool {
		s := fmt.Sprint(m["text"])
		return m["type"] == "notice" && strings.Contains(s, `/claude asks for the model "claude-3-5-haiku-20241022"`) && strings.Contains(s, "this turn uses sim/test-model")
	})
	c.await("the fourth turn", turnDone)
	c.finish()

	want := []string{"test-model", "other-model", "test-model", "test-model"}
	if got := modelsOf(t, e); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("requests went to %v, want %v", got, want)
	}
	assertPrefixStable(t, e.srv.Requests())

	if r := e.run("", "run", "--continue", "fifth"); r.code != 0 {
		t.Fatalf("run --continue: %d %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if got := wireReq(t, reqs[4]).Model; got != "test-model" {
		t.Errorf("run --continue after the command's turn went to %q, want the conversation's test-model", got)
	}
	assertPrefixStable(t, reqs)

	// The session file holds a request record for each of the five
	// requests, every one with the prefix fingerprint of the bytes sent
	// (so the borrowed turn's prefix is the conversation's), and exactly
	// one cache reset: the command's turn, the first on the other model.
	// Going back to the conversation's model finds its cache as it was:
	// neither the turn after the command nor the next process's records a
	// reset, and the conversation's model is not changed.
	files, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
	var sessions []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".archive.jsonl") {
			sessions = append(sessions, f)
		}
	}
	if len(sessions) != 1 {
		t.Fatalf("session files %v, want one conversation", sessions)
	}
	l, err := store.Load(sessions[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Requests) != 5 {
		t.Fatalf("%d request records, want 5: %+v", len(l.Requests), l.Requests)
	}
	for i, rec := range l.Requests {
		if rec.Turn != i+1 {
			t.Errorf("request record %d is of turn %d, want %d", i+1, rec.Turn, i+1)
		}
		switch {
		case i == 1 && (!strings.Contains(rec.Reset, "sim/other-model") || !strings.Contains(rec.Reset, "not sim/test-model")):
			t.Errorf("the command's request records reset %q, want one naming sim/other-model instead of sim/test-model", rec.Reset)
		case i != 1 && rec.Reset != "":
			t.Errorf("request %d records a cache reset %q; only the command's turn resets", i+1, rec.Reset)
		}
	}
	assertFingerprints(t, e, l.Header.ID)

	// reasonix stats reads the same records.
	r := e.run("", "stats", "--json")
	var st struct {
		Model    string
		Requests int
		Prefixes int
		Resets   []struct {
			Request, Turn int
			Reason        string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("stats --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	if st.Requests != 5 || st.Prefixes != 1 || st.Model != "sim/test-model" {
		t.Errorf("stats: %d requests, %d prefixes, model %q; want 5, 1, sim/test-model", st.Requests, st.Prefixes, st.Model)
	}
	if len(st.Resets) != 1 || st.Resets[0].Request != 2 || st.Resets[0].Turn != 2 || !strings.Contains(st.Resets[0].Reason, "sim/other-model") {
		t.Errorf("cache resets %+v, want one at request 2 (turn 2) naming sim/other-model", st.Resets)
	}
}

// TestE2ECommandModelInRun: `reasonix run /quick` sends the command's turn
// to its model, but the session stays on the default one, so `run
// --continue` goes on there; `run --continue /quick` borrows the model
// for that turn again, and --model wins over the command's choice.
func TestE2ECommandModelInRun(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Match: "QUICK question: one", Text: "ONE"},
		scripted.Turn{Match: "plain", Text: "TWO"},
		scripted.Turn{Match: "QUICK question: three", Text: "THREE"},
		scripted.Turn{Match: "QUICK question: four", Text: "FOUR"},
	)
	modelCommands(e)
	for _, args := range [][]string{
		{"run", "/quick one"},
		{"run", "--continue", "plain"},
		{"run", "--continue", "/quick three"},
		{"run", "--model", "sim/test-model", "/quick four"},
	} {
		if r := e.run("", args...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	want := []string{"other-model", "test-model", "other-model", "test-model"}
	if got := modelsOf(t, e); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("requests went to %v, want %v", got, want)
	}
	assertPrefixStable(t, e.srv.Requests()[:3])
}

// TestTUICommandModelForItsTurnOnly: in a real terminal, a command's
// `model` answers its turn (the notice says so, the status line keeps the
// conversation's model) and the next turn is back on the conversation's.
func TestTUICommandModelForItsTurnOnly(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{Match: "QUICK question", Text: "ANSWER ONE"},
		scripted.Turn{Match: "second", Text: "ANSWER TWO"},
	)
	modelCommands(e)
	tt := startTUI(t, e)
	tt.typeLine("/quick tui")
	s := tt.waitFor("ANSWER ONE", "/quick runs on sim/other-model for this turn")
	if !strings.Contains(s, "sim/test-model") {
		t.Errorf("the status line does not keep the conversation's model:\n%s", s)
	}
	tt.typeLine("second")
	tt.waitFor("ANSWER TWO")
	tt.quit()
	want := []string{"other-model", "test-model"}
	if got := modelsOf(t, e); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("requests went to %v, want %v", got, want)
	}
}

// TestE2EACPCommandModelForItsTurnOnly: from an editor over ACP, a
// command's `model` answers its prompt, and the next prompt is back on the
// conversation's model; the editor sees the notice.
func TestE2EACPCommandModelForItsTurnOnly(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Match: "QUICK question", Text: "ANSWER ONE"},
		scripted.Turn{Match: "second", Text: "ANSWER TWO"},
	)
	modelCommands(e)
	seen := runACPClient(t, e, "prompts", "ACP_PROMPTS=/quick acp\nsecond")
	if strings.Join(seen.Stops, " ") != "end_turn end_turn" {
		t.Errorf("stop reasons %v", seen.Stops)
	}
	want := []string{"other-model", "test-model"}
	if got := modelsOf(t, e); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("requests went to %v, want %v", got, want)
	}
	if s := dumpUpdates(seen); !strings.Contains(s, "/quick runs on sim/other-model for this turn") {
		t.Errorf("the editor was not told which model answers:\n%s", s)
	}
}

// TestE2EServeCommandModelForItsTurnOnly: through `reasonix serve`'s API
// (what the browser page calls), a command's `model` answers its prompt
// and the next prompt is back on the conversation's model.
func TestE2EServeCommandModelForItsTurnOnly(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Match: "QUICK question", Text: "ANSWER ONE"},
		scripted.Turn{Match: "second", Text: "ANSWER TWO"},
	)
	modelCommands(e)
	serve := exec.Command(binPath, "serve", "--no-open")
	serve.Dir, serve.Env = e.repo, e.env
	stdout, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = serve.Process.Kill()
		_ = serve.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]{32})`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	base, token := m[1], m[2]
	code, body := servePost(t, base, token, "/api/sessions", "{}")
	var open struct{ ID string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &open) != nil || open.ID == "" {
		t.Fatalf("open a session: %d %s", code, body)
	}
	for i, text := range []string{"/quick web", "second"} {
		// A prompt while the previous turn runs is refused (409): retry.
		deadline := time.Now().Add(20 * time.Second)
		for {
			b, _ := json.Marshal(map[string]string{"text": text})
			code, body = servePost(t, base, token, "/api/sessions/"+open.ID+"/prompt", string(b))
			if code != http.StatusConflict || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if code/100 != 2 {
			t.Fatalf("prompt %q: %d %s", text, code, body)
		}
		for len(e.srv.Requests()) <= i {
			if time.Now().After(deadline) {
				t.Fatalf("prompt %q reached no model", text)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	want := []string{"other-model", "test-model"}
	if got := modelsOf(t, e); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("requests went to %v, want %v", got, want)
	}
}
