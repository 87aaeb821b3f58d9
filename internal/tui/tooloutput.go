package tui

import (
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/events"
)

// maxKeptCalls bounds the finished calls Ctrl-O can show.
const maxKeptCalls = 50

// keptCall is a finished tool call, for Ctrl-O.
type keptCall struct {
	who  string // "" for the conversation, else the worker's tag
	tool events.Tool
}

// keepCall remembers a finished call for Ctrl-O.
func (a *App) keepCall(who string, t events.Tool) {
	a.calls = append(a.calls, keptCall{who, t})
	if len(a.calls) > maxKeptCalls {
		a.calls = a.calls[len(a.calls)-maxKeptCalls:]
	}
}

// bashTail is the last lines a command printed, for the transcript: the
// exit code is on the tool line already.
func bashTail(t *events.Tool, n int) []string {
	if t.Name != "bash" || t.Denied {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(t.Result, "\n"), "\n") {
		l = strings.TrimPrefix(l, "Error: ")
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "exit code:") {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// toolOutput is Ctrl-O: an overlay with the whole output of the recent
// tool calls, newest first, scrollable; Ctrl-O or Esc closes it.
func (a *App) toolOutput() {
	if len(a.calls) == 0 {
		a.note("no tool output yet")
		return
	}
	var b strings.Builder
	for i := len(a.calls) - 1; i >= 0; i-- {
		c := a.calls[i]
		head := toolLine(&c.tool)
		if c.who != "" {
			head = "[blue]" + escape(c.who) + "[-] " + head
		}
		b.WriteString(head + "\n")
		out := strings.TrimRight(c.tool.Result, "\n")
		if out == "" {
			out = a.tr("(no output)")
		}
		if c.tool.Diff != "" {
			b.WriteString("[gray]" + escape(out) + "[-]\n")
			b.WriteString(diffMarkup(c.tool.Diff))
		} else if strings.Contains(out, "\n@@ ") || strings.HasPrefix(out, "--- ") {
			b.WriteString(diffMarkup(out))
		} else {
			b.WriteString("[gray]" + escape(out) + "[-]\n")
		}
		b.WriteString("\n")
	}
	text := strings.TrimRight(b.String(), "\n")
	body := newOverlayText(text)
	var closeFn func()
	body.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ev.Key() == tcell.KeyEscape || ev.Key() == tcell.KeyCtrlO || (ev.Key() == tcell.KeyRune && ev.Rune() == 'q') {
			closeFn()
			return nil
		}
		return ev
	})
	keys := newOverlayText(a.trf("[gray]%d call(s), newest first · ↑/↓ scroll · Esc closes[-]", len(a.calls)))
	closeFn = a.showOverlay(a.tr("tool output"), body, keys, textRows(func(int) string { return text }))
}
