// Package repair absorbs what real models get wrong about tool calls:
// calls left in reasoning or written as markup in the answer (Scavenge),
// argument JSON cut short by the output limit (CloseJSON), arguments that
// do not fit the tool's schema (Validate), and the same call repeated
// over and over (Breaker). It knows nothing of sessions; the tool loop in
// agents decides when to use each.
package repair

import (
	"encoding/json"
	"unicode/utf8"
)

// CloseJSON completes a JSON object that was cut off mid-stream: an open
// string is closed, and open objects and arrays are closed in order. What
// cannot be completed without guessing (a key without its value, a
// half-written number or literal, a trailing comma) is cut back to the
// last complete member. The result is always a prefix of s (less a
// dangling escape or a partial UTF-8 sequence inside the open string)
// followed only by closing quotes, braces and brackets.
//
// ok is false when s is not a truncated object: it is already valid, it
// does not start with '{', or it is broken somewhere other than its end.
func CloseJSON(s string) (string, bool) {
	if json.Valid([]byte(s)) {
		return s, false
	}
	c := closer{s: s}
	if !c.scan() {
		return s, false
	}
	out := c.result()
	if out == "" || !json.Valid([]byte(out)) {
		return s, false
	}
	return out, true
}

// frame is one open container.
type frame struct {
	obj bool
	// wantKey is true in an object between members (after '{' or ',').
	wantKey bool
}

type closer struct {
	s     string
	stack []frame
	// safe is the longest prefix that is complete up to closers, and
	// safeStack the containers open at that point.
	safe      int
	safeStack []frame
	haveSafe  bool
}

func (c *closer) mark(end int) {
	c.safe = end
	c.safeStack = append(c.safeStack[:0], c.stack...)
	c.haveSafe = true
}

// scan walks s; it returns false when s is broken before its end.
func (c *closer) scan() bool {
	s := c.s
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	for i < len(s) {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
		case ch == '{' || ch == '[':
			if !c.valueAllowed() {
				return false
			}
			c.stack = append(c.stack, frame{obj: ch == '{', wantKey: ch == '{'})
			i++
			c.mark(i)
		case ch == '}' || ch == ']':
			n := len(c.stack)
			if n == 0 || c.stack[n-1].obj != (ch == '}') {
				return false
			}
			c.stack = c.stack[:n-1]
			i++
			if len(c.stack) == 0 {
				// The object closed before the end: whatever follows is
				// not a truncation (a valid s was handled by the caller).
				return false
			}
			c.mark(i)
		case ch == ',':
			n := len(c.stack)
			if n == 0 {
				return false
			}
			if c.stack[n-1].obj {
				c.stack[n-1].wantKey = true
			}
			i++
		case ch == ':':
			n := len(c.stack)
			if n == 0 || !c.stack[n-1].obj {
				return false
			}
			i++
		case ch == '"':
			n := len(c.stack)
			key := n > 0 && c.stack[n-1].obj && c.stack[n-1].wantKey
			end, closed := stringEnd(s, i)
			if !closed {
				c.openString(i, key)
				return true
			}
			if key {
				c.stack[n-1].wantKey = false
			} else {
				c.mark(end)
			}
			i = end
		default:
			// A number or a literal.
			end := i
			for end < len(s) && !isDelim(s[end]) {
				end++
			}
			if end == len(s) {
				// Cut inside the token: keep it only when it is whole.
				if json.Valid([]byte(s[i:end])) && c.valueAllowed() {
					c.mark(end)
				}
				return true
			}
			if !json.Valid([]byte(s[i:end])) {
				return false
			}
			c.mark(end)
			i = end
		}
	}
	return true
}

// valueAllowed reports whether a value may start here (not in key
// position).
func (c *closer) valueAllowed() bool {
	n := len(c.stack)
	return n == 0 || !c.stack[n-1].obj || !c.stack[n-1].wantKey
}

func (c *closer) openString(start int, key bool) {
	if key {
		return // a key without its value: cut back to the last member
	}
	// Close the value string: drop a dangling escape or partial rune.
	body := c.s[start+1:]
	body = trimEscape(body)
	for k := 0; k < utf8.UTFMax-1 && len(body) > 0; k++ {
		if r, size := utf8.DecodeLastRuneInString(body); r != utf8.RuneError || size != 1 {
			break
		}
		body = body[:len(body)-1]
	}
	c.s = c.s[:start+1] + body + `"`
	c.mark(len(c.s))
}

// trimEscape drops an escape sequence cut short at the end of a string
// body: a lone backslash or an incomplete \uXXXX.
func trimEscape(body string) string {
	// Find the start of a trailing escape, counting backslashes so that
	// an escaped backslash is not taken for an escape.
	for k := len(body) - 1; k >= 0 && k >= len(body)-6; k-- {
		if body[k] != '\\' {
			continue
		}
		// Count the run of backslashes ending at k.
		run := 0
		for j := k; j >= 0 && body[j] == '\\'; j-- {
			run++
		}
		if run%2 == 0 {
			return body // an escaped backslash: nothing dangling
		}
		rest := body[k+1:]
		switch {
		case rest == "":
			return body[:k]
		case rest[0] == 'u' && len(rest) < 5:
			return body[:k]
		}
		return body
	}
	return body
}

func (c *closer) result() string {
	if !c.haveSafe {
		return ""
	}
	b := []byte(c.s[:c.safe])
	for i := len(c.safeStack) - 1; i >= 0; i-- {
		if c.safeStack[i].obj {
			b = append(b, '}')
		} else {
			b = append(b, ']')
		}
	}
	return string(b)
}

// stringEnd returns the index just past the string starting at s[i] and
// whether it was closed before the end of s.
func stringEnd(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(s), false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func isDelim(ch byte) bool {
	switch ch {
	case ',', '}', ']', ':', ' ', '\t', '\n', '\r', '"', '{', '[':
		return true
	}
	return false
}
