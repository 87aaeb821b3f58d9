package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Truncate cuts s to about limit bytes, keeping the head and the tail
// around an explicit marker that says how much was dropped, so the model
// knows the output is incomplete and can ask for a narrower view.
func Truncate(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	headN := limit * 2 / 3
	tailN := limit - headN
	head := cutValid(s[:headN], false)
	tail := cutValid(s[len(s)-tailN:], true)
	// Prefer cutting at line boundaries when one is near.
	if i := strings.LastIndexByte(head, '\n'); i > len(head)/2 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}
	dropped := s[len(head) : len(s)-len(tail)]
	lines := strings.Count(dropped, "\n")
	return fmt.Sprintf("%s\n[... truncated %d bytes (%d lines) of %d; narrow the request to see them ...]\n%s",
		head, len(dropped), lines, len(s), tail)
}

// cutValid trims a partial UTF-8 sequence at the cut edge.
func cutValid(s string, fromStart bool) string {
	if fromStart {
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
		return s
	}
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}
