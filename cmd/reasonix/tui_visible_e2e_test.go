package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// hasRow is "" when one of rows is want, else what the rows are.
func hasRow(rows []string, want string) string {
	if slices.Contains(rows, want) {
		return ""
	}
	return fmt.Sprintf("no row %q in %q", want, rows)
}

// What a model asks to run is shown as it will run: a carriage return,
// an escape sequence or a bidirectional override in a command under
// approval shows as ^M, ^[ or <U+202E> on the command's row (before, the
// carriage return broke the row so "rm -rf ~" stood alone, ESC and
// U+202E vanished), and the same in the tool line, the model's answer
// and the Ctrl-O output. Only the showing changes: the approved command
// runs with its characters as they were.
func TestTUIShowsControlCharactersAsText(t *testing.T) {
	t.Parallel()
	cr := "rm -rf ~\recho hello"
	mixed := "printf 'one\rtwo \x1b[1m\x1b]0;title\x07 \u202Etxt.exe\u202C' > shown.txt"
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": cr})}},
		scripted.Turn{Text: "Not removed.\rAll \x1b[31mred\x1b[0m, \u202Eevil\u202C and \u2066iso\u2069 done."},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": mixed})}},
		scripted.Turn{Text: "Wrote it."},
	)
	tt := startTUI(t, e, "chat")

	tt.typeLine("clean up")
	tt.waitFor("approve bash?")
	tt.waitLayout("the approval", func(s string) string { return hasRow(overlayRows(s), "command  rm -rf ~^Mecho hello") })
	tt.keys("n")
	s := tt.waitFor("✗ bash rm -rf ~^Mecho hello · denied by the user",
		"Not removed.^MAll ^[[31mred^[[0m, <U+202E>evil<U+202C> and <U+2066>iso<U+2069> done.")
	if strings.Contains(s, "\nAll ") || strings.Contains(s, "\necho hello") {
		t.Errorf("a carriage return broke a line:\n%s", s)
	}

	tt.typeLine("write it")
	tt.waitFor("approve bash?")
	shown := "printf 'one^Mtwo ^[[1m^[]0;title^G <U+202E>txt.exe<U+202C>' > shown.txt"
	tt.waitLayout("the second approval", func(s string) string { return hasRow(overlayRows(s), "command  "+shown) })
	tt.keys("y")
	tt.waitFor("✓ bash "+shown, "Wrote it.")
	if got, want := e.read("shown.txt"), "one\rtwo \x1b[1m\x1b]0;title\x07 \u202Etxt.exe\u202C"; got != want {
		t.Errorf("the approved command wrote %q, want %q", got, want)
	}

	tt.keys("C-o")
	tt.waitFor("tool output")
	tt.waitLayout("the tool output", func(s string) string {
		return hasRow(overlayRows(s), "✗ bash rm -rf ~^Mecho hello · denied by the user")
	})
	tt.keys("Escape")
	tt.waitFor("Ask Reasonix")
	tt.quit()
}
