package tui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rivo/uniseg"
)

// composerBox is the composer as the layout holds it: the TextArea with
// its own paste handling, so that a paste is one piece of input (tview
// delivers a bracketed paste as one event) and a large one becomes one
// attachment-like block instead of screens of text.
type composerBox struct {
	*tview.TextArea
	a *App
}

// Pastes of at least this many lines (or bytes) are held as a block.
const (
	pasteBlockLines = 8
	pasteBlockBytes = 1500
)

// paste is one held block: the placeholder shown in the composer and the
// text it stands for.
type paste struct{ label, text string }

// PasteHandler inserts small pastes as they are and large ones as a
// placeholder, expanded when the prompt is sent.
func (c composerBox) PasteHandler() func(string, func(tview.Primitive)) {
	inner := c.TextArea.PasteHandler()
	return func(text string, setFocus func(tview.Primitive)) {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
		if lines < pasteBlockLines && len(text) < pasteBlockBytes {
			inner(text, setFocus)
			return
		}
		p := paste{label: c.a.trf("[Pasted text #%d, %d lines]", len(c.a.pastes)+1, lines), text: text}
		c.a.pastes = append(c.a.pastes, p)
		inner(p.label, setFocus)
	}
}

// expandPastes replaces the placeholders in a prompt by their text.
func (a *App) expandPastes(s string) string {
	for _, p := range a.pastes {
		s = strings.ReplaceAll(s, p.label, strings.TrimRight(p.text, "\n"))
	}
	return s
}

// resizeComposer grows the composer with its text, wrapped lines
// included, up to maxComposerLines, and keeps its first line in view
// while it all fits.
func (a *App) resizeComposer() {
	_, _, w, _ := a.composer.GetInnerRect()
	a.resizeComposerFor(w)
}

// resizeComposerFor is resizeComposer for a text w columns wide: after a
// resize, before the layout gives the composer its new width, the wrapped
// rows are counted for the width it is about to get.
func (a *App) resizeComposerFor(w int) {
	n := 0
	for _, l := range strings.Split(a.composer.GetText(), "\n") {
		rows := 1
		if w > 0 {
			rows = max(1, (uniseg.StringWidth(l)+w-1)/w)
		}
		n += rows
	}
	a.composerRows = n
	if len(a.overlays) > 0 {
		a.body.ResizeItem(a.composerItem, 0, 0) // hidden under an overlay
		return
	}
	a.body.ResizeItem(a.composerItem, min(n, maxComposerLines)+2, 0)
}

// Draw draws the composer from its first line whenever all of it fits
// (and never scrolled past its last row when it does not):
// the TextArea scrolled to its cursor while it was still shorter (the
// changed callback that grows it runs in the middle of an edit), which
// would otherwise leave the first lines out of view.
func (c composerBox) Draw(screen tcell.Screen) {
	_, _, _, h := c.GetInnerRect()
	if c.a.composerRows <= h {
		c.SetOffset(0, 0)
	} else if row, col := c.GetOffset(); h > 0 && row > c.a.composerRows-h {
		// A text taller than the composer (a recalled long prompt) was
		// scrolled to its cursor while the composer was one row high,
		// which left its last line at the top and the rows below it
		// empty: fill the composer with the text's last rows instead.
		c.SetOffset(c.a.composerRows-h, col)
	}
	c.TextArea.Draw(screen)
}

// rootPages is the application's root: the pages, whose paste goes to
// the focused primitive, except that a paste while an overlay with no
// place to type in is open (an approval, a plan, a picker) goes to the
// draft under it instead of nowhere: the overlay takes keys only, and
// what was pasted is most often the next prompt.
type rootPages struct {
	*tview.Pages
	a *App
}

// PasteHandler sends a paste to the focused primitive or, under an
// overlay that takes no text, to the composer.
func (r rootPages) PasteHandler() func(string, func(tview.Primitive)) {
	inner := r.Pages.PasteHandler()
	return func(text string, setFocus func(tview.Primitive)) {
		a := r.a
		switch a.app.GetFocus().(type) {
		case *tview.InputField, *tview.TextArea:
			inner(text, setFocus)
			return
		}
		if len(a.overlays) == 0 {
			inner(text, setFocus)
			return
		}
		a.composerItem.PasteHandler()(text, func(tview.Primitive) {}) // the overlay keeps the focus
		a.resizeComposer()
		a.note("the paste went to the draft; it shows when this closes")
	}
}

// queuedPrompt is a prompt typed while a turn ran: what is sent, and what
// the transcript shows (large pastes as their placeholders).
type queuedPrompt struct{ text, shown string }

// queuePrompt keeps a prompt typed while a turn runs; it is sent when the
// turn ends.
func (a *App) queuePrompt(text, shown string) {
	a.queued = append(a.queued, queuedPrompt{text, shown})
	a.notef("queued: %s (sent when the current turn ends; Esc interrupts the turn)", oneLine(shown, 80))
	a.updateStatus()
}

// sendQueued sends the next queued prompt, if any, once nothing runs.
func (a *App) sendQueued() {
	if a.cancel != nil || len(a.queued) == 0 {
		return
	}
	next := a.queued[0]
	a.queued = a.queued[1:]
	a.submitShown(next.text, next.shown)
}

// unqueue puts the queued prompts back into the composer when the turn
// they waited for is interrupted: an interrupt is a change of mind, so
// they are offered for editing rather than sent. A draft being typed
// stays, after them (they were dropped from view when there was one).
func (a *App) unqueue() {
	if len(a.queued) == 0 {
		return
	}
	var texts []string
	for _, q := range a.queued {
		texts = append(texts, q.text)
	}
	a.queued = nil
	if draft := a.composer.GetText(); draft != "" {
		texts = append(texts, draft)
	}
	a.composer.SetText(strings.Join(texts, "\n\n"), true)
}
