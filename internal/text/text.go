// Package text holds the string helpers every layer needs to show model
// and user text on one line ([Clip], [OneLine]) and to count things in
// English ([Plural]), and to suggest a name for a mistyped one
// ([EditDistance]).
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

// EditDistance counts the insertions, deletions, substitutions and swaps
// of neighbouring runes that turn a into b (optimal string alignment).
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] for the prefixes ra[:i], rb[:j], three rows kept.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
