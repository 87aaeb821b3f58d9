package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// itemRows finds the rows of the screen item that starts with first (a
// bullet or number and its first word) and runs until a row starting
// with stop: its first row and its continuation rows.
func itemRows(screen, first, stop string) []string {
	var rows []string
	for _, r := range strings.Split(screen, "\n") {
		switch {
		case strings.HasPrefix(r, first):
			rows = []string{r}
		case rows != nil && (strings.HasPrefix(r, stop) || strings.TrimSpace(r) == ""):
			return rows
		case rows != nil:
			rows = append(rows, r)
		}
	}
	return rows
}

// hangingError is "" when rows are one wrapped item: more than one row,
// none wider than width, every continuation row starting with exactly
// indent (text right under the item's text, not at the left edge); else
// what is wrong. Its words are want's, in order.
func hangingError(rows []string, indent string, width int, want string) string {
	if len(rows) < 2 {
		return fmt.Sprintf("not wrapped: %q", rows)
	}
	var words []string
	for i, r := range rows {
		if len([]rune(r)) > width {
			return fmt.Sprintf("row %d wider than %d: %q", i, width, r)
		}
		if i > 0 && (!strings.HasPrefix(r, indent) || strings.HasPrefix(r, indent+" ")) {
			return fmt.Sprintf("row %d does not continue under the item's text (%d columns in): %q", i, len(indent), r)
		}
		words = append(words, strings.Fields(r)...)
	}
	if got := strings.Join(words[1:], " "); got != want {
		return fmt.Sprintf("the item's words are %q, want %q", got, want)
	}
	return ""
}

// waitLayout polls the screen until check finds nothing wrong, and
// returns it; a terminal just resized shows the old layout for a moment.
func (tt *tuiTerm) waitLayout(what string, check func(screen string) string) string {
	tt.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := tt.screen()
		err := check(s)
		if err == "" {
			return s
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("%s: %s\n%s", what, err, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTUIListsAndPickersReflowOnResize: in a real terminal, a Markdown
// list item (bullet, numbered, nested) too long for one row continues
// under its text, and after the terminal is resized, narrower and then
// wider, it is wrapped again for the new width, still under its text. A
// picker's long row continues under its text too (under the description
// column of /agents, after the mark in /effort), again after a resize,
// and the selected row shows in reverse video.
func TestTUIListsAndPickersReflowOnResize(t *testing.T) {
	t.Parallel()
	bullet := strings.TrimSpace(strings.Repeat("alpha beta gamma ", 15)) + " end"
	numbered := strings.TrimSpace(strings.Repeat("one two three ", 6)) + " fin"
	nested := strings.TrimSpace(strings.Repeat("inner words ", 7)) + " last"
	e := newE2E(t, scripted.Turn{Text: "Steps:\n\n- " + bullet + "\n  - " + nested + "\n12. " + numbered + "\n\nDone.\n", ChunkSize: 9})
	e.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: "+
		strings.TrimSpace(strings.Repeat("reviews code carefully ", 3))+"\n---\nYou review.\n")
	tt := startTUI(t, e)
	tt.typeLine("list the steps")
	tt.waitFor("Done.")

	check := func(width int) func(string) string {
		return func(s string) string {
			for _, c := range []struct{ first, stop, indent, words string }{
				{"• alpha", "  • inner", "  ", bullet},
				{"  • inner", "12. one", "    ", nested},
				{"12. one", "Done.", "    ", numbered},
			} {
				if err := hangingError(itemRows(s, c.first, c.stop), c.indent, width, c.words); err != "" {
					return c.first + ": " + err
				}
			}
			return ""
		}
	}
	s := tt.waitLayout("at 120 columns", func(s string) string {
		// At 120 columns only the bullet is long enough to wrap.
		return hangingError(itemRows(s, "• alpha", "  • inner"), "  ", 120, bullet)
	})
	wide := len(itemRows(s, "• alpha", "  • inner"))
	tt.tmux("resize-window", "-t", "rx", "-x", "50", "-y", "40")
	s = tt.waitLayout("resized to 50 columns", check(50))
	narrow := len(itemRows(s, "• alpha", "  • inner"))
	tt.tmux("resize-window", "-t", "rx", "-x", "70", "-y", "40")
	s = tt.waitLayout("resized to 70 columns", check(70))
	if mid := len(itemRows(s, "• alpha", "  • inner")); !(wide < mid && mid < narrow) {
		t.Errorf("the bullet took %d rows at 120 columns, %d at 50, %d at 70: not wrapped again", wide, narrow, mid)
	}

	// Pickers. /agents: reviewer's row continues under its source and
	// description (the names are 8 wide), whatever the width. The box
	// cuts nothing: every word shows.
	desc := "agent (project) · " + strings.TrimSpace(strings.Repeat("reviews code carefully ", 3)) +
		" · " + filepath.Join(".claude", "agents", "reviewer.md")
	pickerRows := func(s, first string) []string {
		var rows []string
		for _, r := range strings.Split(s, "\n") {
			_, in, ok := strings.Cut(r, "║ ")
			if !ok {
				continue
			}
			in, _, _ = strings.Cut(in, " ║")
			in = strings.TrimRight(in, " ")
			switch {
			case strings.HasPrefix(in, first):
				rows = []string{in}
			case rows != nil && (in == "" || !strings.HasPrefix(in, " ")):
				return rows
			case rows != nil:
				rows = append(rows, in)
			}
		}
		return rows
	}
	pickerCheck := func(width int, first, indent, words string) func(string) string {
		return func(s string) string {
			return hangingError(pickerRows(s, first), indent, width, words)
		}
	}
	tt.typeLine("/agents")
	tt.waitFor("subagents", "reviewer")
	s = tt.waitLayout("/agents at 70 columns", pickerCheck(70, "reviewer", strings.Repeat(" ", 10), desc))
	before := len(pickerRows(s, "reviewer"))
	tt.tmux("resize-window", "-t", "rx", "-x", "100", "-y", "40")
	tt.waitLayout("/agents resized to 100 columns", func(s string) string {
		if n := len(pickerRows(s, "reviewer")); n >= before {
			return fmt.Sprintf("%d rows, as many as at 70 columns", n)
		}
		return pickerCheck(100, "reviewer", strings.Repeat(" ", 10), desc)(s)
	})
	// The selected row (the first) is in reverse video, the others not.
	styled := tt.tmux("capture-pane", "-p", "-e", "-t", "rx")
	for _, r := range strings.Split(styled, "\n") {
		switch {
		case strings.Contains(r, "explore"):
			if !strings.Contains(r, "\x1b[7m") {
				t.Errorf("the selected row is not in reverse video: %q", r)
			}
		case strings.Contains(r, "reviewer"):
			if strings.Contains(r, "\x1b[7m") {
				t.Errorf("a row not selected is in reverse video: %q", r)
			}
		}
	}
	tt.keys("Escape")
	tt.waitFor("Ask Reasonix")

	tt.tmux("resize-window", "-t", "rx", "-x", "60", "-y", "40")
	tt.typeLine("/effort")
	tt.waitFor("reasoning effort", "low")
	tt.waitLayout("/effort at 60 columns", pickerCheck(60, "● default", "  ", "default (the provider's reasoning_effort from the config, or none)"))
	tt.keys("Escape")
	tt.waitFor("Ask Reasonix")
	tt.quit()
}

// TestTUIScrolledBackViewKeepsItsLineOnResize: a person who scrolled
// back through an answer whose list items wrap keeps the same item at
// the top of the transcript when the terminal is resized, narrower (each
// item then takes two rows) and wider again; at the end, the view
// follows the end across a resize.
func TestTUIScrolledBackViewKeepsItsLineOnResize(t *testing.T) {
	t.Parallel()
	var answer strings.Builder
	answer.WriteString("Items:\n\n")
	for i := 1; i <= 90; i++ {
		fmt.Fprintf(&answer, "- item %02d: alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu\n", i)
	}
	answer.WriteString("\nDone.\n")
	e := newE2E(t, scripted.Turn{Text: answer.String(), ChunkSize: 500})
	tt := startTUI(t, e)
	tt.typeLine("list the items")
	tt.waitFor("Done.")

	item := regexp.MustCompile(`^• item (\d\d): alpha`)
	// At 120 columns every item is one row; a page back, the top row is
	// an item's.
	tt.keys("PageUp")
	s := tt.waitLayout("a page back", func(s string) string {
		if strings.Contains(s, "Done.") {
			return "not scrolled back"
		}
		if !item.MatchString(s) {
			return "the top row is not an item's"
		}
		return ""
	})
	top := item.FindStringSubmatch(s)[1]
	// The layout for a width: the items wrapped (continuation rows) or
	// not, and item top on the top row, the next on the row it starts.
	at := func(wrapped bool) func(string) string {
		return func(s string) string {
			rows := strings.Split(s, "\n")
			cont := slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, "  iota kappa") })
			if cont != wrapped {
				return fmt.Sprintf("items wrapped: %v, want %v", cont, wrapped)
			}
			if m := item.FindStringSubmatch(rows[0]); m == nil || m[1] != top {
				return fmt.Sprintf("the top row is %q, want item %s's first", rows[0], top)
			}
			next := 1
			if wrapped {
				next = 2
			}
			n, _ := strconv.Atoi(top)
			if m := item.FindStringSubmatch(rows[next]); m == nil || m[1] != fmt.Sprintf("%02d", n+1) {
				return fmt.Sprintf("row %d is %q, want the next item's first", next, rows[next])
			}
			return ""
		}
	}
	tt.tmux("resize-window", "-t", "rx", "-x", "60", "-y", "40")
	tt.waitLayout("scrolled back, resized to 60 columns", at(true))
	tt.tmux("resize-window", "-t", "rx", "-x", "120", "-y", "40")
	tt.waitLayout("scrolled back, resized to 120 columns again", at(false))

	// Back at the end, the view follows it across a resize.
	tt.keys("End")
	tt.waitFor("Done.")
	tt.tmux("resize-window", "-t", "rx", "-x", "60", "-y", "40")
	tt.waitLayout("following, resized to 60 columns", func(s string) string {
		if !strings.Contains(s, "\n  iota kappa") {
			return "the items are not wrapped for 60 columns"
		}
		if !strings.Contains(s, "item 90: alpha") || !strings.Contains(s, "Done.") {
			return "the end is not on screen"
		}
		return ""
	})
	tt.quit()
}
