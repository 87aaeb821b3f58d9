package tui

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/roles"
)

// The transcript is a tview.TextView, which can only be appended to. What
// changes while it runs (reasoning being written, subagents, the planner,
// plan steps) lives in the live region between the transcript and the
// composer, redrawn whole each frame: it is a few lines. Once such a
// thing ends, its summary is appended to the transcript as a block that
// has two forms, collapsed (one line) and expanded (everything kept).
// Ctrl-T switches every block between the two by rebuilding the
// transcript's text from its segments once, on that keypress; streaming
// only ever appends.

// segment is a piece of the transcript: plain markup, or a block with a
// collapsed (text) and an expanded (full) form.
type segment struct {
	text, full string
	// id names a block's region (its first line, which a click
	// toggles); flip shows the other form than the global mode.
	id   string
	flip bool
}

// shown is the form of g the transcript shows.
func (b *blockState) shown(g segment) string {
	if g.full != "" && b.expanded != g.flip {
		return g.full
	}
	return g.text
}

// blockState is what the transcript's blocks and the live region keep.
// It belongs to the UI goroutine.
type blockState struct {
	segs     []segment
	nextID   int
	tail     strings.Builder // plain text after the last segment
	lines    int             // lines held in segs and tail
	expanded bool            // blocks show their full form (Ctrl-T)
	// soft says segs or tail hold a soft line (markdown.go): the
	// transcript is laid out again when its width changes.
	soft bool
	// written counts the bytes written to the TextView since it was last
	// cleared, and dropped says trim has forgotten segments since: while
	// the TextView holds written bytes (it has dropped none itself) and
	// dropped is false, its text is exactly text() laid out for the width
	// (see topLine).
	written int
	dropped bool
	// agents are the running subagents, planner and plan steps, by key
	// (session id, or "step:" and the step id); order is their start
	// order.
	agents map[string]*agentBlock
	order  []string
	// think is the reasoning being written now; nil when none.
	think *thought
	// jobs are the background jobs seen, by session and id; jobOrder
	// their start order.
	jobs     map[string]*jobState
	jobOrder []string
}

func newBlockState() blockState {
	return blockState{agents: map[string]*agentBlock{}, jobs: map[string]*jobState{}}
}

// flushTail makes the plain text written so far a segment of its own.
func (b *blockState) flushTail() {
	if b.tail.Len() == 0 {
		return
	}
	b.segs = append(b.segs, segment{text: b.tail.String()})
	b.tail.Reset()
}

// trim forgets the oldest segments once more than max lines are kept;
// the TextView drops those lines itself (SetMaxLines).
func (b *blockState) trim(max int) {
	if b.lines <= max+max/4 {
		return
	}
	b.flushTail()
	i := 0
	for i < len(b.segs) && b.lines > max {
		b.lines -= segLines(b.segs[i])
		i++
	}
	b.segs = append([]segment(nil), b.segs[i:]...)
	b.dropped = b.dropped || i > 0
}

func segLines(s segment) int { return max(strings.Count(s.text, "\n"), strings.Count(s.full, "\n")) }

// text is the whole transcript in the current form.
func (b *blockState) text() string {
	var s strings.Builder
	for _, g := range b.segs {
		s.WriteString(b.shown(g))
	}
	s.WriteString(b.tail.String())
	return s.String()
}

// block appends a block: collapsed and expanded markup, each ending in a
// newline.
func (a *App) block(collapsed, expanded string) {
	a.endStream()
	a.bl.flushTail()
	a.bl.nextID++
	id := "b" + strconv.Itoa(a.bl.nextID)
	// Blocks hold no soft lines: marks in their text are not ours.
	g := segment{text: regionLine(id, stripSoft(collapsed)), full: regionLine(id, stripSoft(expanded)), id: id}
	a.bl.segs = append(a.bl.segs, g)
	a.bl.lines += segLines(g)
	a.show(a.bl.shown(g))
	a.atLineStart = true // a block's forms end with a line break
	if !a.follow {
		a.unseen = true
	}
	a.bl.trim(a.opts.MaxLines)
}

// regionLine makes the first line of s the region id, so a click on it
// can be told apart.
func regionLine(id, s string) string {
	first, rest, _ := strings.Cut(s, "\n")
	return `["` + id + `"]` + first + `[""]` + "\n" + rest
}

// clickBlock handles a left click in the transcript, the live region or
// the status line: focus stays in the composer (tview would move it to
// the text view clicked), and a click on a block's first line expands or
// collapses that block. It reports whether it took the click.
func (a *App) clickBlock(ev *tcell.EventMouse, action tview.MouseAction) bool {
	x, y := ev.Position()
	if a.live.InRect(x, y) || a.status.InRect(x, y) {
		return true
	}
	if !a.transcript.InRect(x, y) {
		return false
	}
	if action == tview.MouseLeftDown {
		return true
	}
	// A second click soon after the first is a double click to tview;
	// here it is a click again.
	a.transcript.MouseHandler()(tview.MouseLeftClick, ev, func(tview.Primitive) {})
	ids := a.transcript.GetHighlights()
	a.transcript.Highlight()
	if len(ids) == 0 {
		return true
	}
	for i := range a.bl.segs {
		if g := &a.bl.segs[i]; g.id == ids[0] && g.full != "" {
			g.flip = !g.flip
			a.rebuild()
			break
		}
	}
	return true
}

// toggleBlocks is Ctrl-T: every block switches between its collapsed and
// its expanded form. The transcript is rebuilt once.
func (a *App) toggleBlocks() {
	a.bl.expanded = !a.bl.expanded
	a.updateLive()
	if !slices.ContainsFunc(a.bl.segs, func(g segment) bool { return g.full != "" }) {
		return // nothing in the transcript changes
	}
	for i := range a.bl.segs {
		a.bl.segs[i].flip = false // every block follows the new mode
	}
	a.rebuild()
}

// show appends laid-out markup to the TextView.
func (a *App) show(s string) {
	_, _ = a.transcript.Write([]byte(s))
	a.bl.written += len(s)
}

// rewrite replaces the TextView's text with the transcript laid out
// (layout).
func (a *App) rewrite(layout string) {
	a.transcript.Clear()
	a.bl.written, a.bl.dropped = 0, false
	a.show(layout)
}

// rebuild writes the transcript again from its segments, keeping the
// view where it was unless it follows the end.
func (a *App) rebuild() {
	row, _ := a.transcript.GetScrollOffset()
	text := a.bl.text()
	a.rewrite(layoutSoft(text, a.screenW))
	a.atLineStart = strings.HasSuffix(text, "\n")
	if a.follow {
		a.transcript.ScrollToEnd()
	} else {
		a.transcript.ScrollTo(row, 0)
	}
}

// reflow lays the transcript out for the screen's new width, old being
// the width it was drawn at. Its soft lines (wrapped list items and
// quotes) are wrapped again. A view following the end keeps following
// it; one scrolled back keeps the same line of the transcript at its top
// (as far into that line as before): the TextView counts its scroll
// position in rows, and at another width the same row number holds other
// text.
func (a *App) reflow(old int) {
	if a.follow || old <= 0 {
		if a.bl.soft {
			a.rebuild()
		}
		return
	}
	line, k, n, ok := a.topLine(old)
	if !ok {
		a.rebuild()
		return
	}
	// Laid out line by line, the rows before the top line counted on the
	// way.
	text := a.bl.text()
	a.atLineStart = strings.HasSuffix(text, "\n")
	var b strings.Builder
	rc := newRowCounter(a.screenW)
	row := 0
	for i := 0; ; i++ {
		ln, rest, more := strings.Cut(text, "\n")
		l := layoutSoft(ln, a.screenW)
		b.WriteString(l)
		switch {
		case i < line:
			row += rc.rows(l)
		case i == line:
			row += k * rc.rows(l) / n // as far into the line
		}
		if !more {
			break
		}
		b.WriteByte('\n')
		text = rest
	}
	a.rewrite(b.String())
	a.transcript.ScrollTo(row, 0)
}

// topLine finds the line of the transcript's text (a.bl.text(), soft
// lines unwrapped) the view's top row shows at width: its index, the
// row of it on top and how many rows it takes. ok is false when the
// TextView's text is not that text laid out for width (it never should
// be).
func (a *App) topLine(width int) (line, k, n int, ok bool) {
	top, _ := a.transcript.GetScrollOffset()
	text := a.bl.text()
	rc := newRowCounter(width)
	if view := a.transcript.GetText(false); len(view) != a.bl.written || a.bl.dropped {
		// Each has dropped its oldest lines on its own (trim, the
		// TextView's SetMaxLines), so one holds rows the other does not
		// before the same last lines: they shift the count.
		full := layoutSoft(text, width)
		switch {
		case full == view:
		case strings.HasSuffix(full, view):
			top += prefixRows(rc, full[:len(full)-len(view)])
		case strings.HasSuffix(view, full):
			top -= prefixRows(rc, view[:len(view)-len(full)])
		default:
			return 0, 0, 0, false
		}
		top = max(top, 0)
	}
	rows := 0
	for i := 0; ; i++ {
		ln, rest, more := strings.Cut(text, "\n")
		n := rc.rows(layoutSoft(ln, width))
		if rows+n > top || !more {
			return i, min(top-rows, n-1), n, true
		}
		rows += n
		text = rest
	}
}

// prefixRows is the rows of the text a view holds before another's
// first row: whole rows, so text ending with a line break ends a row.
func prefixRows(rc rowCounter, prefix string) int {
	n := rc.rows(prefix)
	if strings.HasSuffix(prefix, "\n") {
		n--
	}
	return n
}

// resetBlocks forgets the transcript's segments and every live block
// (a new conversation). Jobs stay: they belong to sessions, not to the
// transcript.
func (a *App) resetBlocks() {
	jobs, order, exp := a.bl.jobs, a.bl.jobOrder, a.bl.expanded
	a.bl = newBlockState()
	a.bl.jobs, a.bl.jobOrder, a.bl.expanded = jobs, order, exp
	a.updateLive()
}

// expandHint names the key on a collapsed block (also shown when the
// block was made while every block was expanded: Ctrl-T may fold it
// later).
func (a *App) expandHint() string { return " [gray::d](Ctrl-T)[-::-]" }

// --- reasoning ---------------------------------------------------------

// thoughtMax bounds the reasoning one block keeps.
const thoughtMax = 64 << 10

// thought is reasoning being written.
type thought struct {
	start  time.Time
	text   strings.Builder
	words  int
	inWord bool
}

// add takes one delta: kept up to thoughtMax, counted in words. Chinese
// and Japanese are written without spaces, so each Han or kana character
// counts as a word (as word processors count them); Korean separates its
// words with spaces, so Hangul counts like Latin letters. The count runs
// across deltas: a word split between two deltas counts once.
func (t *thought) add(s string) {
	if t.text.Len() < thoughtMax {
		t.text.WriteString(s)
	}
	for _, r := range s {
		switch {
		case ideographic(r):
			t.words++
			t.inWord = false
		case r == '_' || r == '\'' || r == '’':
			// Inside a word (edit_file, don't): neither starts nor ends one.
		case unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r):
			t.inWord = false
		default:
			if !t.inWord {
				t.words++
			}
			t.inWord = true
		}
	}
}

// ideographic reports whether r is written without spaces around it: a
// Han character (with the iteration mark 々) or kana (with the prolonged
// sound and iteration marks, which Unicode files under no script).
func ideographic(r rune) bool {
	if r < 0x2E80 {
		return false
	}
	switch r {
	case 'ー', 'ｰ', 'ゝ', 'ゞ', 'ヽ', 'ヾ', '々', '〆':
		return true
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// lastLine is the newest non-empty line of the reasoning.
func (t *thought) lastLine() string {
	s := strings.TrimRight(t.text.String(), " \n\t")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[len(s)-300:]
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
		s = "…" + s
	}
	return strings.TrimSpace(s)
}

// reason adds top-level reasoning; it shows in the live region until the
// stream moves on.
func (a *App) reason(s string) {
	if a.bl.think == nil {
		a.bl.think = &thought{start: time.Now()}
	}
	a.bl.think.add(s)
}

// flushThought ends the reasoning being written: it becomes a block,
// one dim line collapsed, the whole reasoning expanded.
func (a *App) flushThought() {
	t := a.bl.think
	if t == nil {
		return
	}
	a.bl.think = nil
	body := strings.TrimSpace(t.text.String())
	if body == "" {
		return
	}
	sum := escape(a.trf("thought for %s (%d words)", seconds(time.Since(t.start)), t.words))
	var full strings.Builder
	full.WriteString("[gray::d]▾ " + sum + "[-::-]\n")
	for _, l := range strings.Split(body, "\n") {
		full.WriteString("[gray::d]  " + escape(l) + "[-::-]\n")
	}
	if t.text.Len() >= thoughtMax {
		full.WriteString("[gray::d]  " + a.tr("… (the rest is not kept)") + "[-::-]\n")
	}
	a.block("[gray::d]▸ "+sum+"[-::-]"+a.expandHint()+"\n", full.String())
}

// --- subagents, the planner and plan steps -----------------------------

const (
	kindAgent   = "agent"
	kindPlanner = "planner"
	kindStep    = "step"
	// blockKeep bounds the finished-call lines a block keeps.
	blockKeep = 200
	// proseKeep bounds the prose a block keeps.
	proseKeep = 16 << 10
)

// agentBlock is a running subagent, planner or plan step.
type agentBlock struct {
	key, kind string
	tag       string // "explore: find the TODOs", "planner", "step s1"
	title     string // a step's title
	worker    string // a step's worker role
	start     time.Time
	inflight  map[string]string // calls in flight: call id → brief
	calls     int
	tokens    int
	lines     []string
	prose     strings.Builder
	writing   bool // the session is writing prose
}

// blockKey says which block an event belongs to, if any: a plan step's
// (every event of its workers), a subagent's, or the planner's.
func blockKey(e events.Event) string {
	switch {
	case e.Step != "":
		return "step:" + e.Step
	case e.Parent != "":
		return e.Session
	case e.Role == roles.Planner && e.Session != "":
		return e.Session
	}
	return ""
}

// agentFor returns the block of key, opening it for e when it is new.
func (a *App) agentFor(key string, e events.Event) *agentBlock {
	if b := a.bl.agents[key]; b != nil {
		return b
	}
	b := &agentBlock{key: key, start: time.Now(), inflight: map[string]string{}}
	switch {
	case e.Step != "":
		b.kind, b.tag = kindStep, a.tr("step")+" "+e.Step
	case e.Parent != "":
		b.kind = kindAgent
		if e.Title != "" {
			b.tag = e.Role + ": " + oneLine(e.Title, 48)
		} else {
			b.tag = e.Role + " " + shortID(e.Session)
		}
	default:
		b.kind, b.tag = kindPlanner, a.tr("planner")
	}
	a.bl.agents[key] = b
	a.bl.order = append(a.bl.order, key)
	return b
}

// agentEvent folds e into its block when it belongs to one and the block
// shows it; it reports whether e was consumed.
func (a *App) agentEvent(e events.Event) bool {
	key := blockKey(e)
	if e.Type == events.Done && e.Step == "" && a.bl.agents[e.Session] != nil {
		key = e.Session // a session's Done does not name its parent
	}
	if key == "" {
		return false
	}
	b := a.bl.agents[key]
	switch e.Type {
	case events.SessionStart, events.TextDelta, events.ReasoningDelta, events.ToolStart, events.ToolEnd, events.UsageUpdate:
	case events.Done:
		if b == nil {
			return false
		}
	default:
		return false
	}
	switch e.Type {
	case events.SessionStart:
		b = a.agentFor(key, e)
		if b.kind == kindStep && b.worker == "" {
			b.worker = e.Role
		}
		return true
	case events.TextDelta, events.ReasoningDelta:
		b = a.agentFor(key, e)
		// The planner's prose and a subagent's answer (its report to
		// its parent) are kept for the expanded block; a plan step
		// reports through its StepUpdate summary.
		if b.kind != kindStep && e.Type == events.TextDelta {
			if b.prose.Len() < proseKeep {
				b.prose.WriteString(e.Text)
			}
			b.writing = true
		}
		return true
	case events.ToolStart:
		b = a.agentFor(key, e)
		if e.Tool != nil {
			b.inflight[e.Tool.CallID] = e.Tool.Brief()
			b.writing = false
		}
		return true
	case events.ToolEnd:
		b = a.agentFor(key, e)
		if e.Tool == nil {
			return true
		}
		delete(b.inflight, e.Tool.CallID)
		b.calls++
		a.keepCall("["+b.tag+"]", *e.Tool)
		if len(b.lines) < blockKeep && e.Tool.Diff != "" && !e.Tool.IsError && !e.Tool.Denied {
			b.lines = append(b.lines, a.diffLines(e.Tool)...)
		} else if len(b.lines) < blockKeep {
			b.lines = append(b.lines, toolLine(e.Tool))
			for _, l := range bashTail(e.Tool, 3) {
				b.lines = append(b.lines, "    [gray]│ "+escape(oneLine(l, 200))+"[-]")
			}
		}
		return true
	case events.UsageUpdate:
		b = a.agentFor(key, e)
		if u := e.Usage; u != nil {
			b.tokens += u.PromptTokens + u.CompletionTokens
		}
		return true
	case events.Done:
		if b == nil {
			return false
		}
		if b.kind == kindStep {
			// A step ends with its StepUpdate; a worker of it ending is
			// not the step's end.
			return true
		}
		if u := e.Usage; u != nil && u.PromptTokens+u.CompletionTokens > 0 {
			b.tokens = u.PromptTokens + u.CompletionTokens
		}
		status := a.th.tag(a.th.ok, a.tr("done"))
		if e.Error != "" {
			status = a.th.tag(a.th.errc, a.tr("failed:")) + " " + escape(oneLine(e.Error, 160))
		} else if e.Text == "max_steps" {
			status = a.th.tag(a.th.warn, a.tr("stopped at the step limit"))
		}
		a.finishAgent(b, status, time.Since(b.start))
		return true
	}
	return false
}

// stepEvent keeps a plan step's block: running opens it, an outcome
// closes it into the transcript.
func (a *App) stepEvent(e events.Event) {
	s := e.StepResult
	if s == nil {
		return
	}
	key := "step:" + s.Step
	if s.Status == events.StepRunning || s.Status == events.StepPending {
		b := a.agentFor(key, events.Event{Step: s.Step})
		if s.Title != "" {
			b.title = s.Title
		}
		if s.Status == events.StepRunning {
			a.rs.steps[s.Step] = s.Title
		}
		return
	}
	delete(a.rs.steps, s.Step)
	color := a.th.ok
	if s.Status != events.StepDone {
		color = a.th.errc
	}
	status := a.th.tag(color, escape(s.Status))
	if s.Summary != "" {
		status += ": " + escape(oneLine(s.Summary, 200))
	}
	if len(s.Files) > 0 {
		status += " [gray](" + escape(strings.Join(s.Files, ", ")) + ")[-]"
	}
	b := a.bl.agents[key]
	if b == nil {
		b = &agentBlock{key: key, kind: kindStep, tag: a.tr("step") + " " + s.Step, start: time.Now(), inflight: map[string]string{}}
	}
	if s.Title != "" && b.title == "" {
		b.title = s.Title
	}
	if u := s.Usage; u.PromptTokens+u.CompletionTokens > 0 {
		b.tokens = u.PromptTokens + u.CompletionTokens
	}
	el := time.Since(b.start)
	if s.Millis > 0 {
		el = time.Duration(s.Millis) * time.Millisecond
	}
	a.finishAgent(b, status, el)
}

// finishAgent moves a block out of the live region into the transcript.
func (a *App) finishAgent(b *agentBlock, status string, el time.Duration) {
	delete(a.bl.agents, b.key)
	if i := indexOf(a.bl.order, b.key); i >= 0 {
		a.bl.order = append(a.bl.order[:i], a.bl.order[i+1:]...)
	}
	tag := b.tag
	if b.kind == kindStep && b.title != "" {
		// The summary line stands for the step once it ends: it says
		// which step by name, not only by id.
		tag += ": " + oneLine(b.title, 48)
	}
	head := a.th.tag(a.th.tool, escape("["+tag+"]")) + " " + status
	var facts []string
	facts = append(facts, seconds(el))
	if b.calls > 0 {
		facts = append(facts, a.plural(b.calls, "call"))
	}
	if b.tokens > 0 {
		facts = append(facts, a.trf("%s tokens", count(b.tokens)))
	}
	head += " [gray]· " + strings.Join(facts, " · ") + "[-]"
	var full strings.Builder
	full.WriteString("▾ " + head + "\n")
	if b.title != "" {
		full.WriteString("    [gray]" + escape(oneLine(b.title, 200)) + "[-]\n")
	}
	for _, l := range b.lines {
		full.WriteString("    " + l + "\n")
	}
	if p := strings.TrimSpace(b.prose.String()); p != "" {
		for _, l := range strings.Split(p, "\n") {
			full.WriteString("    [gray::d]" + escape(l) + "[-::-]\n")
		}
	}
	hint := ""
	if len(b.lines) > 0 || b.prose.Len() > 0 {
		hint = a.expandHint()
	}
	a.block("  ▸ "+head+hint+"\n", "  "+full.String())
}

// endAgents closes the blocks still live when the work that ran them
// has ended: their sessions said nothing more (a cancelled run).
func (a *App) endAgents(interrupted bool) {
	status := a.th.tag(a.th.warn, a.tr("ended"))
	if interrupted {
		status = a.th.tag(a.th.warn, a.tr("interrupted"))
	}
	for len(a.bl.order) > 0 {
		b := a.bl.agents[a.bl.order[0]]
		a.finishAgent(b, status, time.Since(b.start))
	}
	for id := range a.rs.steps {
		delete(a.rs.steps, id)
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// plural is n and what, in the UI's language ("3 calls"; in Chinese
// what's label after the count).
func (a *App) plural(n int, what string) string {
	if a.zh {
		return fmt.Sprintf("%d %s", n, a.tr(what))
	}
	return text.Plural(n, what)
}

// seconds renders an elapsed time for a person: "0.4 s", "12 s", "3m 05s".
func seconds(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// --- the live region ---------------------------------------------------

// maxLiveBlocks bounds the blocks the live region lists; the rest are
// counted.
const maxLiveBlocks = 8

// updateLive redraws the live region and sizes it to its lines.
func (a *App) updateLive() {
	var lines []string
	now := time.Now()
	if t := a.bl.think; t != nil {
		lines = append(lines, a.trf("[gray::d]✻ thinking… %s · %d words[-::-]", seconds(now.Sub(t.start)), t.words))
		if l := t.lastLine(); l != "" {
			lines = append(lines, "[gray::d]  "+escape(l)+"[-::-]")
		}
	}
	for i, key := range a.bl.order {
		if i == maxLiveBlocks {
			lines = append(lines, a.trf("[gray]  … and %d more running[-]", len(a.bl.order)-i))
			break
		}
		b := a.bl.agents[key]
		lines = append(lines, a.liveLine(b, now))
		if a.bl.expanded {
			from := max(0, len(b.lines)-3)
			for _, l := range b.lines[from:] {
				lines = append(lines, "      "+l)
			}
		}
	}
	limit := max(1, a.screenH/3)
	if len(lines) > limit {
		lines = append(lines[:limit-1], a.trf("[gray]  … %d more lines (the live view is cut to a third of the screen)[-]", len(lines)-limit+1))
	}
	a.live.SetText(strings.Join(lines, "\n"))
	a.body.ResizeItem(a.live, len(lines), 0)
}

// liveLine is one running block's status line.
func (a *App) liveLine(b *agentBlock, now time.Time) string {
	el := now.Sub(b.start)
	s := a.th.tag(a.th.warn, string(spinner(el))) + " " + a.th.tag(a.th.tool, escape("["+b.tag+"]"))
	if b.title != "" {
		s += " " + escape(oneLine(b.title, 60))
	}
	facts := []string{}
	if b.worker != "" {
		facts = append(facts, b.worker)
	}
	facts = append(facts, a.trf("running %s", seconds(el)))
	if b.calls > 0 {
		facts = append(facts, a.plural(b.calls, "call"))
	}
	if b.tokens > 0 {
		facts = append(facts, a.trf("%s tokens", count(b.tokens)))
	}
	// Last: the one part of any length, cut by the screen's edge.
	if cur := b.current(); cur != "" {
		facts = append(facts, "→ "+oneLine(cur, 60))
	} else if b.writing {
		facts = append(facts, a.tr("writing"))
	}
	return s + " [gray]· " + escape(strings.Join(facts, " · ")) + "[-]"
}

// current names the call in flight (the first by id, and how many more).
func (b *agentBlock) current() string { return firstInFlight(b.inflight) }

// firstInFlight names the call with the lowest id among calls (id to
// what it is doing), and how many more there are: "" for none.
func firstInFlight(calls map[string]string) string {
	if len(calls) == 0 {
		return ""
	}
	ids := make([]string, 0, len(calls))
	for id := range calls {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	s := calls[ids[0]]
	if len(ids) > 1 {
		s += fmt.Sprintf(" (+%d)", len(ids)-1)
	}
	return s
}
