// Package text holds the two string helpers every layer needs to show
// model and user text on one line: [Clip] and [OneLine].
package text

import (
	"strings"
	"unicode/utf8"
)

// Clip shortens s to at most n bytes, cutting at a rune boundary and
// marking the cut with an ellipsis, so clipped UTF-8 (CJK, emoji) stays
// valid.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 0 {
		n = 0
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// OneLine collapses every run of white space (newlines included) to one
// space and trims the ends.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
