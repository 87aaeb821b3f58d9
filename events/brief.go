package events

import (
	"strings"
	"unicode/utf8"
)

// Brief renders a call as one readable line: the tool and the subject
// the tool itself named. Every front end names calls this way, so a line
// in the TUI reads like the same call in the text output.
func (t *Tool) Brief() string {
	if t.Subject == "" {
		return t.Name
	}
	return t.Name + " " + Clip(strings.ReplaceAll(t.Subject, "\n", " "), 120)
}

// Clip shortens s to at most n bytes, cutting at a rune boundary and
// marking the cut with an ellipsis.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
