package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

const truncMarker = "\n[... truncated %d bytes (%d lines) of %d; narrow the request to see them ...]\n"

// Truncate cuts s to at most limit bytes, keeping the head and the tail
// around an explicit marker that says how much was dropped, so the model
// knows the output is incomplete and can ask for a narrower view.
//
// The marker counts against limit, so a truncated result fits and
// truncating it again is a no-op: tools truncate their own output and the
// session truncates every result once more, which would otherwise cut the
// first marker's neighbourhood and stack a second marker whose totals
// describe the first result rather than the real output. Only a limit too
// small to hold the marker and some text (under about 200 bytes) lets the
// marker go over it.
func Truncate(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	// The marker's numbers never exceed len(s), so formatting them all as
	// len(s) bounds its length.
	budget := limit
	if m := len(fmt.Sprintf(truncMarker, len(s), len(s), len(s))); m <= limit/2 {
		budget = limit - m
	}
	headN := budget * 2 / 3
	tailN := budget - headN
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
	return head + fmt.Sprintf(truncMarker, len(dropped), lines, len(s)) + tail
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
