// Package text holds the string helpers every layer needs to show model
// and user text on one line ([Clip], [OneLine]) and to count things in
// English ([Plural]).
package text

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Plural counts n of what, a noun whose plural takes an s: "1 turn",
// "2 turns", "0 turns".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

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

// Sentence is the first sentence of s on one line, clipped to n bytes: how
// an index names a skill or an agent in one short line. A sentence ends at
// ". ", "! ", "? " or "。" (a period inside "e.g." or a version number is
// not followed by a space and does not end it).
func Sentence(s string, n int) string {
	s = OneLine(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', '!', '?':
			if i+1 < len(s) && s[i+1] == ' ' && i > 3 && s[i-3:i+1] != "e.g." && s[i-3:i+1] != "i.e." {
				s = s[:i+1]
			}
		}
		if strings.HasPrefix(s[i:], "。") {
			s = s[:i+len("。")]
		}
	}
	return Clip(s, n)
}
