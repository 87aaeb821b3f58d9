package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// approvalError is "" when rows (an approval overlay's, see overlayRows)
// show the whole request: the tool, every word of command in order, the
// impact, then the choices on the last row, with no empty row between;
// else what is wrong.
func approvalError(rows []string, command string) string {
	if len(rows) == 0 {
		return "no overlay"
	}
	if rows[0] != "tool     bash" {
		return fmt.Sprintf("the first row is %q, want the tool", rows[0])
	}
	cmd := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, "command ") })
	impact := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, "impact ") })
	if cmd < 0 || impact < cmd {
		return fmt.Sprintf("no command and impact, in that order: %q", rows)
	}
	var words []string
	for _, r := range rows[cmd:impact] {
		words = append(words, strings.Fields(r)...)
	}
	if got, want := strings.Join(words, " "), "command "+command; got != want {
		return fmt.Sprintf("the command reads %q, want %q", got, want)
	}
	for i, r := range rows {
		if r == "" {
			return fmt.Sprintf("row %d is empty: %q", i, rows)
		}
	}
	if last := rows[len(rows)-1]; !strings.HasPrefix(last, "y/1 allow once") || !strings.HasSuffix(last, "n/4/Esc deny") {
		return fmt.Sprintf("the last row is %q, want the choices", last)
	}
	return ""
}

// An approval overlay is as high as its request wraps to at the width it
// is drawn at, again after a resize: made narrower, the command takes
// more rows and the overlay grows, every word and the choices still in
// view (it was cut off); wider again, it shrinks back with no empty rows.
// The answer still reaches the engine.
func TestTUIApprovalOverlayFitsOnResize(t *testing.T) {
	t.Parallel()
	var words []string
	for i := 1; i <= 30; i++ {
		words = append(words, fmt.Sprintf("word%02d", i))
	}
	command := "echo " + strings.Join(words, " ") + " > words.txt"
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": command})}},
		scripted.Turn{Text: "Wrote the words."},
	)
	tt := startTUI(t, e, "chat")
	tt.typeLine("write the words")
	tt.waitFor("approve bash?")
	check := func(s string) string { return approvalError(overlayRows(s), command) }
	wide := overlayRows(tt.waitLayout("at 120 columns", check))
	tt.tmux("resize-window", "-t", "rx", "-x", "60", "-y", "40")
	narrow := overlayRows(tt.waitLayout("resized to 60 columns", check))
	if len(narrow) <= len(wide) {
		t.Errorf("the overlay did not grow at 60 columns: %d rows, %d at 120", len(narrow), len(wide))
	}
	tt.tmux("resize-window", "-t", "rx", "-x", "120", "-y", "40")
	tt.waitLayout("resized to 120 columns again", func(s string) string {
		if err := check(s); err != "" {
			return err
		}
		if rows := overlayRows(s); len(rows) != len(wide) {
			return fmt.Sprintf("%d rows, %d before the resizes", len(rows), len(wide))
		}
		return ""
	})
	tt.keys("y")
	tt.waitFor("✓ bash echo word01", "Wrote the words.")
	if got := e.read("words.txt"); got != strings.Join(words, " ")+"\n" {
		t.Errorf("words.txt = %q", got)
	}
	tt.quit()
}
