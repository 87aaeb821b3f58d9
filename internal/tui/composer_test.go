package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
)

// paste sends text as a terminal's bracketed paste.
// postEvent posts ev, waiting while the simulation's queue is full
// (PostEvent then fails, dropping the event).
func (h *harness) postEvent(ev tcell.Event) {
	for h.sim.PostEvent(ev) != nil {
		time.Sleep(time.Millisecond)
	}
}

func (h *harness) paste(text string) {
	h.postEvent(tcell.NewEventPaste(true))
	for _, r := range text {
		if r == '\n' {
			h.sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
		} else {
			h.sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
		}
	}
	h.postEvent(tcell.NewEventPaste(false))
}

// TestPasteIsOneInput: a 60-line paste is one prompt, held as a block in
// the composer and sent whole; a 3-line paste shows every line.
func TestPasteIsOneInput(t *testing.T) {
	h := start(t, Options{}, scripted.Turn{Text: "got it"}, scripted.Turn{Text: "again"})
	var lines []string
	for i := range 60 {
		lines = append(lines, fmt.Sprintf("line %02d of the paste", i+1))
	}
	h.paste(strings.Join(lines, "\n"))
	h.waitFor("[Pasted text #1, 60 lines]")
	time.Sleep(50 * time.Millisecond)
	if n := len(h.model.Requests()); n != 0 {
		t.Fatalf("the paste sent %d request(s) by itself", n)
	}
	h.typeText(" please")
	h.key(tcell.KeyEnter)
	s := h.waitFor("› [Pasted text #1, 60 lines] please", "got it")
	if strings.Contains(s, "line 30 of the paste") {
		t.Errorf("the transcript shows the whole paste:\n%s", s)
	}
	reqs := h.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	body := lastUser(reqs[0])
	if !strings.Contains(body, "line 01 of the paste") || !strings.Contains(body, "line 60 of the paste") || !strings.Contains(body, "please") {
		t.Errorf("the request lacks the pasted text: %.300s", body)
	}

	// A short multi-line paste goes into the composer as text, every line
	// of it in view.
	h.paste("alpha line\nbeta line\ngamma line")
	s = h.waitFor("alpha line", "beta line", "gamma line")
	if n := len(h.model.Requests()); n != 1 {
		t.Fatalf("a short paste sent a request (%d)", n)
	}
	_ = s
}

// TestComposerShowsEveryLine: a draft of several lines typed with
// Ctrl-J keeps its first line in view.
func TestComposerShowsEveryLine(t *testing.T) {
	h := start(t, Options{})
	for i, w := range []string{"first draft line", "second draft line", "third draft line", "fourth draft line"} {
		if i > 0 {
			h.key(tcell.KeyCtrlJ)
		}
		h.typeText(w)
	}
	h.waitFor("first draft line", "fourth draft line")
}

// TestEnterDuringATurnQueues: a prompt sent while a turn runs is shown as
// queued and sent when the turn ends.
func TestEnterDuringATurnQueues(t *testing.T) {
	h := start(t, Options{},
		// Long enough that typing the second prompt under -race on a
		// loaded machine still lands inside the first turn.
		scripted.Turn{Text: "first answer", DelayMS: 2500},
		scripted.Turn{Text: "second answer"})
	h.typeText("first question")
	h.key(tcell.KeyEnter)
	h.waitFor("working")
	h.typeText("second question")
	h.key(tcell.KeyEnter)
	h.waitFor("queued: second question", "1 queued")
	if n := len(h.model.Requests()); n != 1 {
		t.Fatalf("%d requests while the first turn runs", n)
	}
	h.waitFor("first answer", "› second question", "second answer")
	reqs := h.model.Requests()
	if len(reqs) != 2 || !strings.Contains(lastUser(reqs[1]), "second question") {
		t.Fatalf("requests: %d", len(reqs))
	}
}

// TestEscInterruptsTheTurn: Esc cancels the running turn, and a prompt
// queued behind it comes back to the composer instead of being sent.
func TestEscInterruptsTheTurn(t *testing.T) {
	h := start(t, Options{}, scripted.Turn{Text: "too late", DelayMS: 5000})
	h.typeText("slow question")
	h.key(tcell.KeyEnter)
	h.waitFor("working")
	h.typeText("follow-up")
	h.key(tcell.KeyEnter)
	h.waitFor("queued: follow-up")
	h.key(tcell.KeyEscape)
	s := h.waitFor("interrupted", "ready")
	if strings.Contains(s, "too late") {
		t.Errorf("the answer arrived after Esc:\n%s", s)
	}
	if got := h.composerText(); got != "follow-up" {
		t.Errorf("composer after Esc: %q", got)
	}
	if n := len(h.model.Requests()); n != 1 {
		t.Errorf("%d requests: the queued prompt was sent", n)
	}
}

// TestFollowMode: the transcript follows output until scrolled up; then a
// marker says new output is below, and scrolling back to the end (PgDn or
// End) follows again.
func TestFollowMode(t *testing.T) {
	h := start(t, Options{})
	for i := range 100 {
		h.app.Publish(events.Event{Type: events.Notice, Text: fmt.Sprintf("filler %03d", i)})
	}
	h.waitFor("filler 099")
	h.key(tcell.KeyPgUp)
	h.waitFor("filler 07")
	h.app.Publish(events.Event{Type: events.Notice, Text: "LATEST output"})
	s := h.waitFor("new output below")
	if strings.Contains(s, "LATEST output") {
		t.Fatalf("a scrolled-back transcript jumped to new output:\n%s", s)
	}
	h.key(tcell.KeyEnd)
	s = h.waitFor("LATEST output")
	if strings.Contains(s, "new output below") {
		t.Errorf("the marker stayed after End:\n%s", s)
	}
	// PgUp, then PgDn back to the end: following again.
	h.key(tcell.KeyPgUp)
	h.waitFor("filler 07")
	for range 5 {
		h.key(tcell.KeyPgDn)
	}
	h.waitFor("LATEST output")
	h.app.Publish(events.Event{Type: events.Notice, Text: "NEWEST output"})
	s = h.waitFor("NEWEST output")
	if strings.Contains(s, "new output below") {
		t.Errorf("marker while following:\n%s", s)
	}
}

// TestWheelScrolls: the mouse wheel over the transcript scrolls it back
// (new output then waits below, with the marker) and forward to the end,
// where it follows again.
func TestWheelScrolls(t *testing.T) {
	h := start(t, Options{})
	for i := range 100 {
		h.app.Publish(events.Event{Type: events.Notice, Text: fmt.Sprintf("filler %03d", i)})
	}
	h.waitFor("filler 099")
	wheel := func(b tcell.ButtonMask, n int) {
		for range n {
			h.postEvent(tcell.NewEventMouse(10, 5, b, tcell.ModNone))
		}
	}
	wheel(tcell.WheelUp, 15)
	for deadline := time.Now().Add(5 * time.Second); strings.Contains(h.text(), "filler 099"); {
		if time.Now().After(deadline) {
			t.Fatalf("the wheel did not scroll back:\n%s", h.text())
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.app.Publish(events.Event{Type: events.Notice, Text: "LATEST output"})
	if s := h.waitFor("new output below"); strings.Contains(s, "LATEST output") {
		t.Fatalf("a transcript scrolled back with the wheel jumped to new output:\n%s", s)
	}
	wheel(tcell.WheelDown, 40)
	h.waitFor("LATEST output")
	h.app.Publish(events.Event{Type: events.Notice, Text: "NEWEST output"})
	if s := h.waitFor("NEWEST output"); strings.Contains(s, "new output below") {
		t.Errorf("not following after the wheel came back to the end:\n%s", s)
	}
}

// TestWideCharacterEditing: CJK text in the composer takes two columns a
// character; the cursor moves, deletes and inserts by character, and the
// prompt sent is what was edited.
func TestWideCharacterEditing(t *testing.T) {
	h := start(t, Options{}, scripted.Turn{Text: "收到"})
	h.typeText("你好世界")
	h.waitWide("你好世界")
	h.key(tcell.KeyLeft)
	h.key(tcell.KeyLeft)
	h.key(tcell.KeyBackspace2)
	h.typeText("X")
	h.waitComposer("你X世界")
	rows := h.waitWide("你X世界")
	// On screen each wide character takes two columns: the X sits right
	// after 你's two cells (the simulation leaves old runes in a wide
	// character's second cell, which a terminal covers).
	for _, r := range rows {
		if i := strings.Index(string(r), "你"); i >= 0 {
			rs := r[len([]rune(string(r)[:i])):]
			if len(rs) < 4 || rs[0] != '你' || rs[2] != 'X' || rs[3] != '世' {
				t.Errorf("the edited line's cells: %q", string(rs[:min(len(rs), 8)]))
			}
			break
		}
	}
	h.key(tcell.KeyHome)
	h.typeText("中")
	h.key(tcell.KeyEnd)
	h.key(tcell.KeyBackspace2)
	h.waitComposer("中你X世")
	h.key(tcell.KeyEnter)
	h.waitWide("收到")
	if reqs := h.model.Requests(); len(reqs) != 1 || lastUser(reqs[0]) != "中你X世" {
		t.Errorf("sent %d request(s); the prompt: %q", len(reqs), lastUser(reqs[len(reqs)-1]))
	}
}

// lastUser is the content of a request's last message.
func lastUser(r providers.Request) string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

// TestStatusLine: cache-hit ratio, cost, todo progress and running
// workers.
func TestStatusLine(t *testing.T) {
	h := start(t, Options{})
	h.sim.SetSize(200, 25)
	p := h.app.Publish
	p(events.Event{Type: events.SessionStart, Session: "e-1", Role: "executor", Text: "sim-model"})
	p(events.Event{Type: events.UsageUpdate, Usage: &providers.Usage{PromptTokens: 1200, CacheHitTokens: 1000, CompletionTokens: 34, Cost: 0.0123, Currency: "USD"}})
	p(events.Event{Type: events.TodoUpdate, Session: "e-1", Todos: []events.Todo{{Content: "a", Status: "completed"}, {Content: "b", Status: "in_progress"}, {Content: "c", Status: "pending"}}})
	p(events.Event{Type: events.SessionStart, Session: "w-1", Parent: "e-1", Role: "explore", Text: "sim-model"})
	h.waitFor("cache 83%", "$0.0123", "todo 1/3", "1 worker(s)")
	p(events.Event{Type: events.Done, Session: "w-1", Parent: "e-1", Role: "explore"})
	p(events.Event{Type: events.UsageUpdate, Usage: &providers.Usage{PromptTokens: 800, Cost: 0.5, Currency: "USD"}})
	s := h.waitFor("cache 50%", "$0.51")
	if strings.Contains(s, "worker(s)") {
		t.Errorf("a finished worker still counted:\n%s", s)
	}
}

// TestStatusLineFitsTheWidth: at 80 columns during a turn the status
// line keeps what matters (the model, the posture, the running work, todo
// progress) by shortening and leaving out the rest; on a wide screen
// every field is back in full, and a resize refits it at once.
func TestStatusLineFitsTheWidth(t *testing.T) {
	h := start(t, Options{Posture: func() string { return "ask" }}, scripted.Turn{Text: "slow answer", DelayMS: 5000})
	h.sim.SetSize(80, 24)
	h.postEvent(tcell.NewEventResize(80, 24))
	p := h.app.Publish
	p(events.Event{Type: events.SessionStart, Session: "e-1", Role: "executor", Text: "sim-model"})
	p(events.Event{Type: events.UsageUpdate, Session: "e-1", Usage: &providers.Usage{PromptTokens: 12345, CacheHitTokens: 10000, CompletionTokens: 678, Cost: 0.0123, Currency: "USD"},
		Context: &events.ContextInfo{Used: 12345, Limit: 128000, Percent: 9}})
	p(events.Event{Type: events.TodoUpdate, Session: "e-1", Todos: []events.Todo{{Content: "a", Status: "completed"}, {Content: "b", Status: "in_progress"}, {Content: "c", Status: "pending"}}})
	h.typeText("go on")
	h.key(tcell.KeyEnter)
	status := func(want ...string) string {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			line := lastLine(h.text())
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(line, w)
			}
			if ok {
				return line
			}
			if time.Now().After(deadline) {
				t.Fatalf("status line never showed %q: %q", want, line)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	line := status("working…", "todo 1/3", "ask", "cache 81%", "$0.0123")
	if strings.Contains(line, "(Shift-Tab)") || strings.Contains(line, "tokens 12k in") {
		t.Errorf("the full forms did not make way at 80 columns: %q", line)
	}
	if len([]rune(strings.TrimRight(line, " "))) >= 80 {
		t.Errorf("the status line reaches the edge (cut, not fitted): %q", line)
	}
	h.sim.SetSize(200, 24)
	h.postEvent(tcell.NewEventResize(200, 24))
	status("working…", "ask (Shift-Tab)", "tokens 12k in (10k cached) 678 out", "context 12k/128k (9%)", "Ctrl-C cancels")
}

// TestToolOutputTailAndCtrlO: a bash call shows its exit code and the
// last lines it printed; Ctrl-O opens the whole output and closes again.
func TestToolOutputTailAndCtrlO(t *testing.T) {
	h := start(t, Options{})
	res := "first output line\nsecond output line\nthird output line\nfourth output line\nexit code: 1"
	tl := tool("b1", "bash", "make test", map[string]string{"command": "make test"})
	tl.Result, tl.IsError, tl.Summary = "Error: "+res, true, "exit code 1"
	h.app.Publish(events.Event{Type: events.ToolEnd, Session: "e-1", Role: "executor", Tool: tl})
	s := h.waitFor("✗ bash make test · exit code 1", "│ second output line", "│ fourth output line")
	if strings.Contains(s, "first output line") {
		t.Errorf("more than the tail in the transcript:\n%s", s)
	}
	h.key(tcell.KeyCtrlO)
	h.waitFor("tool output", "first output line", "Esc closes")
	h.key(tcell.KeyEscape)
	for deadline := time.Now().Add(5 * time.Second); strings.Contains(h.text(), "first output line"); {
		if time.Now().After(deadline) {
			t.Fatalf("Esc did not close the output:\n%s", h.text())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// cellRows is the screen as rows of cells' first runes (0 for none),
// read on the UI goroutine.
func (h *harness) cellRows() [][]rune {
	var rows [][]rune
	h.app.app.QueueUpdate(func() {
		cells, w, _ := h.sim.GetContents()
		for y := 0; y*w < len(cells); y++ {
			row := make([]rune, w)
			for x := range w {
				if c := cells[y*w+x]; len(c.Runes) > 0 {
					row[x] = c.Runes[0]
				}
			}
			rows = append(rows, row)
		}
	})
	return rows
}

// wide is a row as text, wide characters' second cells left out.
func wide(row []rune) string {
	var b strings.Builder
	for x := 0; x < len(row); x++ {
		r := row[x]
		if r != 0 {
			b.WriteRune(r)
		}
		if uniseg.StringWidth(string(r)) == 2 {
			x++
		}
	}
	return b.String()
}

func (h *harness) waitWide(want ...string) [][]rune {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rows := h.cellRows()
		var all []string
		for _, r := range rows {
			all = append(all, wide(r))
		}
		s := strings.Join(all, "\n")
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return rows
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("screen never showed %q:\n%s", want, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOverlayDrawsCleanly: over a transcript of CJK lines whose wide
// characters straddle every column, the approval overlay has straight
// borders with nothing of the transcript on its rows, the composer is
// hidden while it is open and back after, at 80x24 and 120x35.
func TestOverlayDrawsCleanly(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 35}} {
		t.Run(fmt.Sprint(size[0], "x", size[1]), func(t *testing.T) {
			h := start(t, Options{})
			h.sim.SetSize(size[0], size[1])
			h.postEvent(tcell.NewEventResize(size[0], size[1]))
			// Start from a blank screen of the new size: the simulation
			// keeps cells of the old layout that only a wide character's
			// second half covers later.
			h.app.app.QueueUpdateDraw(func() { h.sim.Clear() })
			for i := range 60 {
				h.app.Publish(events.Event{Type: events.Notice, Text: strings.Repeat("x", i%7) + strings.Repeat("中文字符", 30)})
			}
			h.waitWide("中文")
			h.app.Publish(events.Event{Type: events.ApprovalRequest, Session: "e-1", Role: "executor", Approval: &events.Approval{
				ID: "ap-1", Tool: "bash", Command: "python3 greet.py 中文参数", Reason: "run the greeter 看看", Impact: "runs a command",
				Rules: []string{"Bash(python3 greet.py:*)"}, Choices: []string{events.ChoiceAllow, events.ChoiceAllowAlways, events.ChoiceDeny}}})
			rows := h.waitWide("approve bash?", "python3 greet.py 中文参数")
			var all []string
			for _, r := range rows {
				all = append(all, wide(r))
			}
			s := strings.Join(all, "\n")
			if strings.Contains(s, "Ask Reasonix") {
				t.Errorf("the composer shows under the overlay:\n%s", s)
			}
			if strings.Contains(s, "s/2") {
				t.Errorf("a choice the gate did not offer is shown:\n%s", s)
			}
			// Every overlay row: blank outside its borders, and the
			// borders in one column each.
			left, right := -1, -1
			for _, r := range rows {
				li, ri := -1, -1
				for x, c := range r {
					if c == '║' || c == '╔' || c == '╚' {
						li = x
						break
					}
				}
				if li < 0 {
					continue
				}
				for x := len(r) - 1; x > li; x-- {
					if r[x] == '║' || r[x] == '╗' || r[x] == '╝' {
						ri = x
						break
					}
				}
				if left < 0 {
					left, right = li, ri
				}
				if li != left || ri != right {
					t.Errorf("border out of line (%d,%d want %d,%d): %q", li, ri, left, right, wide(r))
				}
				for x, c := range r {
					if (x < li || x > ri) && c != 0 && c != ' ' {
						t.Errorf("transcript text beside the overlay at column %d: %q", x, wide(r))
						break
					}
				}
			}
			if left < 0 {
				t.Fatalf("no overlay border found:\n%s", s)
			}
			h.key(tcell.KeyEscape)
			h.waitWide("Ask Reasonix")
		})
	}
}

// TestWorkerNamedByDescription: a subagent is shown by what its task call
// said it does, not by its id.
func TestWorkerNamedByDescription(t *testing.T) {
	h := start(t, Options{})
	p := h.app.Publish
	p(events.Event{Type: events.SessionStart, Session: "g-20260101-abcdef12", Parent: "e-1", Role: "explore", Title: "find the config loader", Text: "m"})
	tl := tool("c1", "grep", "Load", map[string]string{"pattern": "Load"})
	tl.Summary = "3 matches"
	p(events.Event{Type: events.ToolEnd, Session: "g-20260101-abcdef12", Parent: "e-1", Role: "explore", Tool: tl})
	h.waitFor("[explore: find the config loader] · running", "1 call")
	p(events.Event{Type: events.Done, Session: "g-20260101-abcdef12", Role: "explore"})
	s := h.waitFor("▸ [explore: find the config loader] done")
	if strings.Contains(s, "abcdef12") {
		t.Errorf("the worker's id is shown:\n%s", s)
	}
}

// TestBlankLinesSurviveAppending: a prompt typed after the transcript was
// drawn is set apart by a blank line and starts at the left edge, and an
// answer whose chunks start with line breaks keeps its blank lines (tview
// misreads a break that comes first in appended text; guardLeadingBreak).
func TestBlankLinesSurviveAppending(t *testing.T) {
	h := start(t, Options{Version: "v1"}, scripted.Turn{Text: "para one\n\npara two\n\npara three", ChunkSize: 8})
	h.waitFor("Reasonix v1")
	time.Sleep(20 * time.Millisecond) // drawn before the prompt is appended
	h.typeText("show me")
	h.key(tcell.KeyEnter)
	h.waitFor("para three")
	var rows []string
	for _, r := range strings.Split(h.text(), "\n") {
		rows = append(rows, strings.TrimRight(r, " "))
	}
	at := func(prefix string) int {
		for i, r := range rows {
			if strings.HasPrefix(r, prefix) {
				return i
			}
		}
		t.Fatalf("no row starts with %q:\n%s", prefix, strings.Join(rows, "\n"))
		return -1
	}
	p := at("› show me")
	if p < 1 || rows[p-1] != "" {
		t.Errorf("no blank line before the prompt:\n%s", strings.Join(rows, "\n"))
	}
	one, two, three := at("para one"), at("para two"), at("para three")
	if two != one+2 || three != two+2 || rows[one+1] != "" || rows[two+1] != "" {
		t.Errorf("the answer's blank lines were lost:\n%s", strings.Join(rows, "\n"))
	}
	for _, w := range []string{" ", "\n \n", "[::b]\n", "x\n", "[-]\nx", "[::-][-]\n\nx", "[literal\n", ""} {
		got := guardLeadingBreak(w, true)
		want := w
		switch w {
		case "\n \n":
			want = " \n \n"
		case "[::b]\n":
			want = "[::b] \n"
		case "[-]\nx":
			want = "[-] \nx"
		case "[::-][-]\n\nx":
			want = "[::-][-] \n\nx"
		}
		if got != want {
			t.Errorf("guardLeadingBreak(%q) = %q, want %q", w, got, want)
		}
		if guardLeadingBreak(w, false) != w {
			t.Errorf("guardLeadingBreak(%q) mid-line changed it", w)
		}
	}
}

// TestStreamedListWrapsUnderItsText: in the running UI (80 columns) a
// streamed list item too long for one row continues under its text, not
// at the left edge, and again once the screen is narrower.
func TestStreamedListWrapsUnderItsText(t *testing.T) {
	item := "- " + strings.Repeat("word ", 30) + "end"
	h := start(t, Options{}, scripted.Turn{Text: "Steps:\n\n" + item + "\n- short\n", ChunkSize: 7})
	h.waitFor("Reasonix")
	time.Sleep(20 * time.Millisecond) // drawn: the width is known
	h.typeText("list")
	h.key(tcell.KeyEnter)
	s := h.waitFor("• short")
	var rows []string
	for _, r := range strings.Split(s, "\n") {
		if strings.Contains(r, "word") {
			rows = append(rows, r)
		}
	}
	if len(rows) < 2 || !strings.HasPrefix(rows[0], "• word") {
		t.Fatalf("the item's rows:\n%s", s)
	}
	for _, r := range rows[1:] {
		if !strings.HasPrefix(r, "  word") {
			t.Errorf("a continuation row does not start under the text: %q\n%s", r, s)
		}
	}
	wide := len(rows)

	h.sim.SetSize(40, 30)
	h.postEvent(tcell.NewEventResize(40, 30))
	deadline := time.Now().Add(5 * time.Second)
	for {
		s = h.text()
		// The item's rows: from its bullet to the next item's.
		rows = rows[:0]
		for _, r := range strings.Split(s, "\n") {
			if strings.HasPrefix(r, "• short") {
				break
			}
			if strings.HasPrefix(r, "• word") || len(rows) > 0 {
				rows = append(rows, strings.TrimRight(r, " "))
			}
		}
		bad := len(rows) <= wide
		for _, r := range rows[1:] {
			bad = bad || !strings.HasPrefix(r, "  word") || uniseg.StringWidth(r) > 40
		}
		if !bad {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a resize to 40 columns the item was not wrapped again under its text:\n%s", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
