package tui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/reasonix/reasonix/internal/store"
)

// History keeps the prompts sent from the composer between runs;
// *store.History implements it.
type History interface {
	// Load returns the saved prompts, oldest first.
	Load() ([]store.HistoryEntry, error)
	// Add saves one sent prompt.
	Add(text string) error
}

// recall is the composer's prompt history, as a shell keeps it: Up on the
// first line shows the previous prompt, Down on the last line the next,
// and past the newest the draft that was being typed. UI goroutine only.
type recall struct {
	items []string // oldest first
	pos   int      // the item shown; len(items) is the draft
	draft string
	// warned is set once a save has failed and been reported, so a
	// read-only home is one notice, not one per prompt.
	warned bool
}

// loadHistory fills the composer's history from Options.History; it runs
// before the UI does.
func (a *App) loadHistory() {
	if a.opts.History == nil {
		return
	}
	entries, err := a.opts.History.Load()
	if err != nil {
		a.post(func() { a.notef("prompt history: %s", err.Error()) })
	}
	for _, e := range entries {
		a.recall.push(e.Text)
	}
}

// push adds text as the newest item unless it repeats the newest, and
// leaves the history at the (empty) draft.
func (r *recall) push(text string) {
	if n := len(r.items); n == 0 || r.items[n-1] != text {
		r.items = append(r.items, text)
	}
	r.reset()
}

// reset goes back to an empty draft.
func (r *recall) reset() { r.pos, r.draft = len(r.items), "" }

// remember records a sent prompt in the composer's history and saves it;
// a failed save is a notice, never a failed turn. /quit is not kept: Up
// and Enter should not end the next run.
func (a *App) remember(text string) {
	switch strings.TrimSpace(text) {
	case "/quit", "/exit":
		a.recall.reset()
		return
	}
	a.recall.push(text)
	if a.opts.History == nil {
		return
	}
	if err := a.opts.History.Add(text); err != nil && !a.recall.warned {
		a.recall.warned = true
		a.notef("the prompt was not saved to the history: %s", err.Error())
	}
}

// showRecalled puts item i (or the draft, at len(items)) in the composer, keeping
// the draft when it leaves it.
func (a *App) showRecalled(i int) {
	r := &a.recall
	if r.pos == len(r.items) {
		r.draft = a.composer.GetText()
	}
	r.pos = i
	text := r.draft
	if i < len(r.items) {
		text = r.items[i]
	} else {
		r.draft = ""
	}
	a.composer.SetText(text, true)
	// The cursor went to the end while the composer still had its old
	// height, which scrolled a grown text by the new lines. When the text
	// fits without wrapping, show it from the top.
	lines := strings.Split(text, "\n")
	if _, _, w, _ := a.composer.GetInnerRect(); len(lines) > 1 && len(lines) <= maxComposerLines {
		for _, l := range lines {
			if tview.TaggedStringWidth(escape(l)) >= w {
				return
			}
		}
		a.composer.SetOffset(0, 0)
	}
}

// recallKey handles Up and Down in the composer; it reports whether the
// key was used.
func (a *App) recallKey(ev *tcell.EventKey) bool {
	if ev.Modifiers()&(tcell.ModAlt|tcell.ModShift|tcell.ModCtrl) != 0 {
		return false
	}
	r := &a.recall
	switch ev.Key() {
	case tcell.KeyUp:
		row, _, toRow, _ := a.composer.GetCursor()
		if (row != 0 || toRow != 0) && a.composer.GetText() != "" || r.pos == 0 {
			return false
		}
		a.showRecalled(r.pos - 1)
		return true
	case tcell.KeyDown:
		if r.pos >= len(r.items) {
			return false
		}
		// On the last line Down goes to the next prompt; elsewhere it
		// moves the cursor, and goes on when the cursor could not move
		// down a line.
		if _, _, at := a.composer.GetSelection(); at != a.composer.GetTextLength() {
			_, _, before, _ := a.composer.GetCursor()
			// The text area's own handler, without this capture.
			a.composer.SetInputCapture(nil)
			a.composer.InputHandler()(ev, func(p tview.Primitive) { a.app.SetFocus(p) })
			a.composer.SetInputCapture(a.composerKey)
			if _, _, after, _ := a.composer.GetCursor(); after != before {
				return true
			}
		}
		a.showRecalled(r.pos + 1)
		return true
	}
	return false
}

// searchHistory is Ctrl-R: an overlay lists the prompts that contain what
// is typed (any case), newest first; Enter puts the chosen one in the
// composer, unsent, and Esc closes. UI goroutine only.
func (a *App) searchHistory() {
	items := a.recall.items
	if len(items) == 0 {
		a.note("no earlier prompts to search")
		return
	}
	input := tview.NewInputField().SetLabel(a.tr("search: ")).SetFieldWidth(0)
	// Selected in reverse video: tview's selected style is the terminal's
	// colours swapped, which are both "default" here (useTerminalColours),
	// so it would not show.
	list := tview.NewList().ShowSecondaryText(false).SetHighlightFullLine(true).SetSelectedStyle(tcell.StyleDefault.Reverse(true))
	var matches []int // indexes into items, newest first
	fill := func(q string) {
		list.Clear()
		matches = matches[:0]
		q = strings.ToLower(q)
		for i := len(items) - 1; i >= 0; i-- {
			if strings.Contains(strings.ToLower(items[i]), q) {
				matches = append(matches, i)
				list.AddItem(escape(a.historyLabel(items[i])), "", 0, nil)
			}
		}
		if len(matches) == 0 {
			list.AddItem("[gray]"+a.tr("no prompt matches")+"[-]", "", 0, nil)
		}
	}
	fill("")
	input.SetChangedFunc(fill)
	var closeFn func()
	input.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch ev.Key() {
		case tcell.KeyUp, tcell.KeyDown, tcell.KeyPgUp, tcell.KeyPgDn:
			list.InputHandler()(ev, func(tview.Primitive) {})
		case tcell.KeyCtrlR: // again: the next older match, as in a shell
			list.InputHandler()(tcell.NewEventKey(tcell.KeyDown, 0, tcell.ModNone), func(tview.Primitive) {})
		case tcell.KeyEnter:
			closeFn()
			if i := list.GetCurrentItem(); i >= 0 && i < len(matches) {
				a.showRecalled(matches[i])
			}
		case tcell.KeyEscape:
			closeFn()
		default:
			return ev
		}
		return nil
	})
	frame := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(input, 1, 0, true).
		AddItem(list, 0, 1, false).
		AddItem(newOverlayText(a.tr("type to filter  [::b]↑/↓[::-] move  [::b]Enter[::-] put in the composer  [::b]Esc[::-] close")), 1, 0, false)
	// A prompt takes one row of the list, whatever the width.
	closeFn = a.showFrame(a.tr("search prompts"), frame, input, fixedRows(min(len(items), 15)+2))
}

// historyLabel is a prompt on one line of the search list.
func (a *App) historyLabel(s string) string {
	first, rest, multi := strings.Cut(strings.TrimSpace(s), "\n")
	label := oneLine(first, 200)
	if multi {
		label += a.trf(" … (+%d lines)", strings.Count(rest, "\n")+1)
	}
	return label
}
