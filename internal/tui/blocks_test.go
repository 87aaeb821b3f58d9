package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/roles"
)

// cellAt finds the first screen cell starting want and returns its
// style; ok is false when want is not on screen.
func (h *harness) styleOf(want string) (tcell.Style, bool) {
	var st tcell.Style
	ok := false
	h.app.app.QueueUpdate(func() {
		cells, w, _ := h.sim.GetContents()
		var b strings.Builder
		h.read(&b)
		lines := strings.Split(b.String(), "\n")
		for y, l := range lines {
			i := strings.Index(l, want)
			if i < 0 {
				continue
			}
			x := len([]rune(l[:i]))
			st, ok = cells[y*w+x].Style, true
			return
		}
	})
	return st, ok
}

// countLines counts the screen lines containing want.
func countLines(s, want string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, want) {
			n++
		}
	}
	return n
}

// TestReasoningCollapses: reasoning shows dimmed in the live region while
// it is written, becomes one collapsed line once the answer starts, and
// Ctrl-T expands and collapses it again.
func TestReasoningCollapses(t *testing.T) {
	h := start(t, Options{})
	p := h.app.Publish
	p(events.Event{Type: events.ReasoningDelta, Session: "e-1", Role: "executor", Text: "First I read the parser.\nThen I check "})
	p(events.Event{Type: events.ReasoningDelta, Session: "e-1", Role: "executor", Text: "the tests carefully."})
	h.waitFor("✻ thinking…", "11 words", "Then I check the tests carefully.")
	st, _ := h.styleOf("Then I check")
	if _, _, attr := st.Decompose(); attr&tcell.AttrDim == 0 {
		t.Errorf("live reasoning is not dim: %v", attr)
	}
	p(events.Event{Type: events.TextDelta, Session: "e-1", Role: "executor", Text: "The ANSWER.\n"})
	s := h.waitFor("▸ thought for", "(11 words)", "(Ctrl-T)", "The ANSWER.")
	if strings.Contains(s, "First I read") || strings.Contains(s, "thinking…") {
		t.Fatalf("reasoning not collapsed once the answer started:\n%s", s)
	}
	st, _ = h.styleOf("▸ thought for")
	if _, _, attr := st.Decompose(); attr&tcell.AttrDim == 0 {
		t.Errorf("collapsed reasoning is not dim: %v", attr)
	}
	h.key(tcell.KeyCtrlT)
	s = h.waitFor("▾ thought for", "First I read the parser.", "Then I check the tests carefully.")
	if !(strings.Index(s, "First I read") < strings.Index(s, "The ANSWER.")) {
		t.Errorf("expanded reasoning not in its place above the answer:\n%s", s)
	}
	if st, ok := h.styleOf("First I read"); !ok {
		t.Error("no expanded line")
	} else if _, _, attr := st.Decompose(); attr&tcell.AttrDim == 0 {
		t.Errorf("expanded reasoning is not dim: %v", attr)
	}
	// Output after the toggle still streams below, and a new thought
	// is expanded too while the mode is on.
	p(events.Event{Type: events.ReasoningDelta, Session: "e-1", Role: "executor", Text: "Second thought here."})
	p(events.Event{Type: events.TextDelta, Session: "e-1", Role: "executor", Text: "Second answer.\n"})
	h.waitFor("Second thought here.", "Second answer.")
	h.key(tcell.KeyCtrlT)
	s = h.waitFor("▸ thought for", "The ANSWER.", "Second answer.")
	if strings.Contains(s, "First I read") || strings.Contains(s, "Second thought here.") {
		t.Errorf("Ctrl-T did not collapse the reasoning again:\n%s", s)
	}
	if countLines(s, "▸ thought for") != 2 {
		t.Errorf("want two collapsed thoughts:\n%s", s)
	}
}

// TestReasoningWordCount: reasoning is counted in words however it is
// written: Chinese and Japanese, which put no spaces between words, count
// a word per character, Korean and Latin scripts a word per spaced run;
// a word split across deltas counts once. The collapsed line shows the
// count.
func TestReasoningWordCount(t *testing.T) {
	for _, tc := range []struct {
		name   string
		deltas []string
		want   int
	}{
		{"english", []string{"First I read ", "the par", "ser."}, 5},
		{"chinese", []string{"用户想要修改问候语。", "我需要先读取文件，然后修改。"}, 21},
		{"chinese with code", []string{"先读取 greet.go，再用 edit_file 修改"}, 10},
		{"japanese", []string{"コーヒーを", "飲みます"}, 9},
		{"korean", []string{"안녕하세요 세", "계입니다"}, 2},
		{"fullwidth", []string{"ＡＢＣ　全角"}, 3},
		{"contraction", []string{"don't stop"}, 2},
	} {
		var th thought
		for _, d := range tc.deltas {
			th.add(d)
		}
		if th.words != tc.want {
			t.Errorf("%s: %d words, want %d", tc.name, th.words, tc.want)
		}
	}

	h := start(t, Options{})
	h.app.Publish(events.Event{Type: events.ReasoningDelta, Session: "e-1", Role: "executor", Text: "用户想要修改问候语。我需要先读取文件，然后修改。"})
	h.app.Publish(events.Event{Type: events.TextDelta, Session: "e-1", Role: "executor", Text: "好的。\n"})
	h.waitFor("▸ thought for", "(21 words)", "好")
}

// TestAgentBlocksLive: a subagent and the planner are live blocks updated
// in place (one line each, whatever the number of events), then one
// summary line each in the transcript, expandable.
func TestAgentBlocksLive(t *testing.T) {
	h := start(t, Options{})
	h.sim.SetSize(120, 30)
	p := h.app.Publish
	h.app.post(func() { h.app.cancel, h.app.workStart = func() {}, time.Now() }) // a turn is in flight
	defer h.app.post(func() { h.app.cancel = nil })
	sub := events.Event{Session: "x-20260101-deadbeef", Parent: "e-1", Role: "explore"}
	ev := func(base events.Event, typ events.Type, f func(*events.Event)) events.Event {
		base.Type = typ
		if f != nil {
			f(&base)
		}
		return base
	}
	p(ev(sub, events.SessionStart, func(e *events.Event) { e.Title, e.Text = "find the TODOs", "m" }))
	pl := events.Event{Session: "p-20260101-cafe0001", Role: roles.Planner}
	p(ev(pl, events.SessionStart, func(e *events.Event) { e.Text = "m" }))
	p(ev(pl, events.TextDelta, func(e *events.Event) { e.Text = "Planning notes: split the parser." }))
	for i := range 5 {
		p(ev(sub, events.ToolStart, func(e *events.Event) {
			e.Tool = tool(fmt.Sprint("c", i), "grep", fmt.Sprintf("TODO%d", i), nil)
		}))
		s := h.waitFor(fmt.Sprintf("→ grep TODO%d", i))
		if n := countLines(s, "[explore: find the TODOs]"); n != 1 {
			t.Fatalf("the subagent has %d lines, want 1 updated in place:\n%s", n, s)
		}
		end := tool(fmt.Sprint("c", i), "grep", fmt.Sprintf("TODO%d", i), nil)
		end.Summary = fmt.Sprintf("%d matches", i)
		p(ev(sub, events.ToolEnd, func(e *events.Event) { e.Tool = end }))
		p(ev(sub, events.UsageUpdate, func(e *events.Event) {
			e.Usage = &providers.Usage{PromptTokens: 1000, CompletionTokens: 100}
		}))
	}
	s := h.waitFor("[explore: find the TODOs] · running", "5 calls", "5.5k tokens", "[planner] · running", "writing")
	if strings.Contains(s, "Planning notes") {
		t.Errorf("the planner's prose is in the transcript:\n%s", s)
	}
	p(ev(sub, events.TextDelta, func(e *events.Event) { e.Text = "SUBAGENT REPORT: four TODOs." }))
	p(ev(sub, events.Done, func(e *events.Event) { e.Parent = "" })) // a real Done names no parent
	s = h.waitFor("▸ [explore: find the TODOs] done", "5 calls · 5.5k tokens")
	if countLines(s, "[explore: find the TODOs]") != 1 || strings.Contains(s, "[explore: find the TODOs] · running") {
		t.Errorf("the finished subagent is still live:\n%s", s)
	}
	if strings.Contains(s, "grep TODO3") || strings.Contains(s, "SUBAGENT REPORT") {
		t.Errorf("collapsed block shows its calls:\n%s", s)
	}
	p(ev(pl, events.Done, func(e *events.Event) { e.Error = "model went away" }))
	s = h.waitFor("▸ [planner] failed: model went away")
	if strings.Contains(s, "running") {
		t.Errorf("a block is still live:\n%s", s)
	}
	h.key(tcell.KeyCtrlT)
	h.waitFor("▾ [explore: find the TODOs] done", "✓ grep TODO3 · 3 matches", "find the TODOs", "Planning notes: split the parser.", "SUBAGENT REPORT: four TODOs.")
}

// TestPlanStepBlocksLive: each running plan step is one live line with
// its worker, current call and tokens; its outcome is a transcript block
// holding its calls.
func TestPlanStepBlocksLive(t *testing.T) {
	h := start(t, Options{})
	h.sim.SetSize(120, 30)
	p := h.app.Publish
	p(events.Event{Type: events.StepUpdate, Step: "s1", StepResult: &events.StepResult{Step: "s1", Title: "write the lexer", Status: events.StepRunning}})
	p(events.Event{Type: events.StepUpdate, Step: "s2", StepResult: &events.StepResult{Step: "s2", Title: "write the docs", Status: events.StepRunning}})
	w := events.Event{Session: "e-20260101-00000001", Role: "executor", Step: "s1"}
	w.Type = events.SessionStart
	p(w)
	w.Type, w.Tool = events.ToolStart, tool("c1", "edit_file", "lexer.go", nil)
	p(w)
	h.waitFor("[step s1] write the lexer · executor · running", "→ edit_file lexer.go", "[step s2] write the docs")
	w.Type, w.Tool = events.ToolEnd, &events.Tool{CallID: "c1", Name: "edit_file", Subject: "lexer.go", Summary: "edited lexer.go (+3 -1)"}
	p(w)
	w.Type, w.Tool = events.ToolStart, tool("c2", "bash", "go test ./...", nil)
	p(w)
	s := h.waitFor("→ bash go test ./...", "1 call")
	if n := countLines(s, "[step s1]"); n != 1 {
		t.Errorf("step s1 has %d lines, want 1:\n%s", n, s)
	}
	w.Type, w.Tool = events.ToolEnd, &events.Tool{CallID: "c2", Name: "bash", Subject: "go test ./...", Summary: "exit code 0"}
	p(w)
	w.Type, w.Tool = events.Done, nil
	p(w) // the worker ends; the step's outcome comes with its StepUpdate
	h.waitFor("2 calls")
	p(events.Event{Type: events.StepUpdate, Step: "s1", StepResult: &events.StepResult{Step: "s1", Status: events.StepDone,
		Summary: "lexer written", Files: []string{"lexer.go"}, Millis: 12000, Usage: providers.Usage{PromptTokens: 3000, CompletionTokens: 400}}})
	s = h.waitFor("▸ [step s1: write the lexer] done: lexer written (lexer.go) · 12 s · 2 calls · 3.4k tokens", "[step s2] write the docs · running")
	if strings.Contains(s, "[step s1] write the lexer · executor") {
		t.Errorf("finished step still live:\n%s", s)
	}
	h.key(tcell.KeyCtrlT)
	h.waitFor("▾ [step s1: write the lexer] done", "✓ edit_file lexer.go · edited lexer.go (+3 -1)", "✓ bash go test ./... · exit code 0")
}

// TestEditDiffColoured: an edit's result shows its line counts and a
// coloured diff from the theme; a long one is cut, Ctrl-T shows it all.
func TestEditDiffColoured(t *testing.T) {
	for _, th := range []struct {
		name         string
		added, remov tcell.Color
	}{{"dark", tcell.ColorLime, tcell.ColorRed}, {"light", tcell.ColorGreen, tcell.ColorMaroon}} {
		t.Run(th.name, func(t *testing.T) {
			h := start(t, Options{Theme: th.name})
			p := h.app.Publish
			diff := "--- a/foo.go\n+++ b/foo.go\n@@ -1,3 +1,4 @@\n package foo\n-func Old() {}\n+func New() {}\n+func Newer() {}\n+func Newest() {}\n"
			p(events.Event{Type: events.ToolEnd, Session: "e-1", Role: "executor", Tool: &events.Tool{CallID: "c1", Name: "edit_file",
				Subject: "foo.go", Summary: "edited foo.go (+3 -1)", Diff: diff}})
			s := h.waitFor("✓ edit_file foo.go +3 −1", "+func New() {}", "-func Old() {}", "@@ -1,3 +1,4 @@")
			if strings.Contains(s, "+++ b/foo.go") {
				t.Errorf("a one-file diff shows its header:\n%s", s)
			}
			for want, c := range map[string]tcell.Color{"+func Newer": th.added, "-func Old": th.remov, "+3 −1": th.added, "−1": th.remov} {
				st, ok := h.styleOf(want)
				if fg, _, _ := st.Decompose(); !ok || fg != c {
					t.Errorf("%q drawn in %v, want %v", want, fg, c)
				}
			}
			if st, _ := h.styleOf(" package foo"); true {
				if fg, _, _ := st.Decompose(); fg == th.added || fg == th.remov {
					t.Errorf("a context line is coloured %v", fg)
				}
			}

			var long strings.Builder
			long.WriteString("--- a/big.go\n+++ b/big.go\n@@ -1,0 +1,30 @@\n")
			for i := range 30 {
				fmt.Fprintf(&long, "+line %02d\n", i)
			}
			p(events.Event{Type: events.ToolEnd, Session: "e-1", Role: "executor", Tool: &events.Tool{CallID: "c2", Name: "write_file",
				Subject: "big.go", Diff: long.String()}})
			s = h.waitFor("✓ write_file big.go +30 −0", "+line 10", "… 19 more lines · Ctrl-T shows them")
			if strings.Contains(s, "+line 11") {
				t.Errorf("a long diff is not cut:\n%s", s)
			}
			h.key(tcell.KeyCtrlT)
			s = h.waitFor("+line 29")
			if strings.Contains(s, "more lines") {
				t.Errorf("expanded diff still cut:\n%s", s)
			}
		})
	}
}

// TestJobsListed: job events show running jobs in the status line, their
// end as a transcript line, and /jobs lists them.
func TestJobsListed(t *testing.T) {
	h := start(t, Options{})
	h.sim.SetSize(120, 30)
	p := h.app.Publish
	job := func(session, id, cmd, state string, code int, bytes int64) events.Event {
		return events.Event{Type: events.JobUpdate, Session: session, Role: "executor",
			Job: &events.Job{ID: id, Command: cmd, State: state, Code: code, Bytes: bytes, Millis: 1500}}
	}
	h.typeText("/jobs")
	h.key(tcell.KeyEnter)
	h.waitFor("no background jobs")
	p(job("e-1", "job-1", "npm run dev", events.JobStarted, -1, 0))
	p(job("e-1", "job-2", "go test ./...", events.JobStarted, -1, 0))
	h.waitFor("2 jobs running (/jobs)")
	p(job("e-1", "job-1", "npm run dev", events.JobOutput, -1, 3500))
	p(job("e-1", "job-2", "go test ./...", events.JobExited, 2, 120))
	s := h.waitFor("1 job running", "■ background job-2 exited with code 2 · go test ./... · 1 s · 120 B")
	if st, _ := h.styleOf("■ background job-2"); true {
		if fg, _, _ := st.Decompose(); fg != tcell.ColorRed {
			t.Errorf("a failed job's mark is %v, want red", fg)
		}
	}
	if strings.Contains(s, "job-1 exited") {
		t.Errorf("a running job reported as ended:\n%s", s)
	}
	h.typeText("/jobs")
	h.key(tcell.KeyEnter)
	s = h.waitFor("background jobs (1 running", "● job-1 running", "3.4 KB", "npm run dev", "job-2 exited 2 after 1 s · 120 B")
	if strings.Index(s, "● job-1") > strings.Index(s, "job-2 exited 2") {
		t.Errorf("running jobs are not listed first:\n%s", s)
	}
	p(job("e-1", "job-1", "npm run dev", events.JobKilled, -1, 3500))
	s = h.waitFor("background job-1 killed")
	if strings.Contains(lineWith(s, "│ ready"), "running") {
		t.Errorf("status line still counts a killed job:\n%s", s)
	}
}

// TestLiveBlocksEndWithTheWork: a block whose session never said it was
// done leaves the live region when the work ends (Ctrl-C), marked so.
func TestLiveBlocksEndWithTheWork(t *testing.T) {
	h := start(t, Options{})
	h.app.post(func() {
		h.app.startWork("chat", func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		})
	})
	h.app.Publish(events.Event{Type: events.SessionStart, Session: "x-1", Parent: "e-1", Role: "explore", Title: "dig"})
	h.app.Publish(events.Event{Type: events.ReasoningDelta, Session: "e-1", Role: "executor", Text: "hmm"})
	h.waitFor("[explore: dig] · running", "✻ thinking…")
	h.key(tcell.KeyCtrlC)
	s := h.waitFor("▸ [explore: dig] interrupted", "▸ thought for", "interrupted")
	if strings.Contains(s, "· running") || strings.Contains(s, "thinking…") {
		t.Errorf("live blocks outlived the work:\n%s", s)
	}
}

// click clicks the first screen cell showing want.
func (h *harness) click(want string) {
	h.t.Helper()
	s := h.waitFor(want)
	for y, l := range strings.Split(s, "\n") {
		if i := strings.Index(l, want); i >= 0 {
			x := len([]rune(l[:i]))
			h.sim.InjectMouse(x, y, tcell.Button1, tcell.ModNone)
			h.sim.InjectMouse(x, y, tcell.ButtonNone, tcell.ModNone)
			return
		}
	}
}

// TestClickTogglesOneBlock: a click on a block's first line expands that
// block alone and a second click collapses it; the composer keeps the
// keyboard.
func TestClickTogglesOneBlock(t *testing.T) {
	h := start(t, Options{})
	p := h.app.Publish
	p(events.Event{Type: events.ReasoningDelta, Session: "e-1", Role: "executor", Text: "FIRST THOUGHT body"})
	p(events.Event{Type: events.TextDelta, Session: "e-1", Role: "executor", Text: "Answer one.\n"})
	p(events.Event{Type: events.ReasoningDelta, Session: "e-1", Role: "executor", Text: "SECOND THOUGHT body"})
	p(events.Event{Type: events.TextDelta, Session: "e-1", Role: "executor", Text: "Answer two.\n"})
	h.waitFor("Answer two.")
	h.click("▸ thought for")
	s := h.waitFor("▾ thought for", "FIRST THOUGHT body")
	if strings.Contains(s, "SECOND THOUGHT") {
		t.Errorf("a click expanded another block too:\n%s", s)
	}
	h.typeText("still typing")
	h.waitFor("still typing")
	if got := h.composerText(); got != "still typing" {
		t.Errorf("the composer lost the keyboard after a click: %q", got)
	}
	h.click("▾ thought for")
	waitGone(t, h, "FIRST THOUGHT body")
}

// drawTranscript draws the transcript alone on sim at w by h, as a frame
// does (beforeDraw first), and returns its rows.
func drawTranscript(t *testing.T, a *App, sim tcell.SimulationScreen, w, h int) []string {
	t.Helper()
	sim.SetSize(w, h)
	a.beforeDraw(sim)
	a.transcript.SetRect(0, 0, w, h)
	sim.Clear()
	a.transcript.Draw(sim)
	sim.Show()
	cells, cw, ch := sim.GetContents()
	var rows []string
	for y := range ch {
		rows = append(rows, lineOf(cells, cw, y))
	}
	return rows
}

// softItems writes n list items of words as the Markdown renderer does
// (soft lines, continuing under their text).
func softItems(a *App, n int, words string) {
	for i := range n {
		a.writeSoft(fmt.Sprintf("%s  %s• item %02d: %s\n", softMark, softSep, i, words))
	}
}

// TestResizeKeepsScrolledBackLine: scrolled back, a resize keeps the
// same line of the transcript on top, as far into it as before (a
// continuation row stays one), also when the TextView has dropped its
// oldest rows (SetMaxLines) and the transcript's text has not.
func TestResizeKeepsScrolledBackLine(t *testing.T) {
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	defer sim.Fini()

	// Each item takes 3 rows at 40 columns, 2 at 60 and 1 at 120.
	a := New(Options{Screen: sim})
	softItems(a, 30, strings.TrimSpace(strings.Repeat("alpha beta gamma delta ", 4)))
	drawTranscript(t, a, sim, 40, 8)
	a.transcript.ScrollTo(3*10+2, 0) // item 10's last row
	a.follow = false
	rows := drawTranscript(t, a, sim, 40, 8)
	if !strings.HasPrefix(rows[1], "• item 11:") || strings.HasPrefix(rows[0], "•") {
		t.Fatalf("at 40 columns the top is not item 10's last row:\n%s", strings.Join(rows, "\n"))
	}
	rows = drawTranscript(t, a, sim, 60, 8)
	if !strings.HasPrefix(rows[0], "  ") || !strings.HasPrefix(rows[1], "• item 11:") {
		t.Errorf("at 60 columns the top is not item 10's second row:\n%s", strings.Join(rows, "\n"))
	}
	rows = drawTranscript(t, a, sim, 120, 8)
	if !strings.HasPrefix(rows[0], "• item 10:") || !strings.HasPrefix(rows[1], "• item 11:") {
		t.Errorf("at 120 columns the top is not item 10:\n%s", strings.Join(rows, "\n"))
	}

	// 45 one-row items in a TextView keeping 40 rows: it drops the first
	// six (with the empty row after the last), the transcript keeps them.
	a = New(Options{Screen: sim, MaxLines: 40})
	softItems(a, 45, "alpha beta gamma delta epsilon zeta eta theta")
	drawTranscript(t, a, sim, 120, 5)
	a.transcript.ScrollTo(10, 0)
	a.follow = false
	rows = drawTranscript(t, a, sim, 120, 5)
	if !strings.HasPrefix(rows[0], "• item 16:") {
		t.Fatalf("at 120 columns the top is not item 16:\n%s", strings.Join(rows, "\n"))
	}
	rows = drawTranscript(t, a, sim, 40, 5)
	if !strings.HasPrefix(rows[0], "• item 16:") || !strings.HasPrefix(rows[2], "• item 17:") {
		t.Errorf("at 40 columns the top is not item 16:\n%s", strings.Join(rows, "\n"))
	}

	// Following the end, it still shows the end after a resize.
	a.followEnd()
	drawTranscript(t, a, sim, 120, 5)
	rows = drawTranscript(t, a, sim, 40, 5)
	if !strings.HasPrefix(rows[2], "• item 44:") {
		t.Errorf("following, at 40 columns the end is not shown:\n%s", strings.Join(rows, "\n"))
	}
}
