package builtin

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// matcher finds matching lines (or, in multiline mode, matching spans) in a
// whole file buffer. Literal patterns and patterns with a required literal
// are located with bytes.Index before the regexp engine, which is much slower
// than a memchr-driven scan, ever runs.
type matcher struct {
	re        *regexp.Regexp
	tree      *syntax.Regexp // parsed pattern, line anchors already rewritten
	multiline bool
	// lit is a literal every match contains (lower-cased when fold); when
	// whole is set it is the entire pattern and the regexp is not consulted.
	lit   []byte
	fold  bool
	whole bool
	rare  int // index in lit of the byte to scan for when fold
}

// compileMatcher parses pattern as RE2 with ^ and $ matching at line
// boundaries. In line mode \A and \z mean the start and end of a line, since
// each line is searched on its own.
func compileMatcher(pattern string, fold, multiline bool) (*matcher, error) {
	flags := syntax.Perl &^ syntax.OneLine
	if fold {
		flags |= syntax.FoldCase
	}
	if multiline {
		flags |= syntax.DotNL
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression (Go RE2 syntax): %v", err)
	}
	src := "(?m)" + pattern
	if fold {
		src = "(?i)" + src
	}
	if multiline {
		src = "(?s)" + src
	} else if rewriteTextAnchors(tree) {
		src = tree.String()
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression (Go RE2 syntax): %v", err)
	}
	m := &matcher{re: re, tree: tree, multiline: multiline}
	runes, litFold := requiredLiteral(tree)
	whole := tree.Op == syntax.OpLiteral
	if litFold {
		safe := longestFoldSafe(runes)
		if len(safe) < len(runes) {
			whole = false
		}
		runes = safe
	}
	if len(runes) > 0 {
		lit := []byte(string(runes))
		if litFold {
			lit = bytes.ToLower(lit)
			m.rare = rarestByte(lit)
		}
		// A newline inside the literal can never lie within one line; the
		// regexp then reports no lines, which is the right answer.
		if multiline || bytes.IndexByte(lit, '\n') < 0 {
			m.lit, m.fold, m.whole = lit, litFold, whole
		}
	}
	return m, nil
}

// rewriteTextAnchors turns \A and \z into ^ and $ and reports whether it
// changed anything.
func rewriteTextAnchors(re *syntax.Regexp) bool {
	changed := false
	switch re.Op {
	case syntax.OpBeginText:
		re.Op, changed = syntax.OpBeginLine, true
	case syntax.OpEndText:
		re.Op, re.Flags, changed = syntax.OpEndLine, re.Flags&^syntax.WasDollar, true
	}
	for _, s := range re.Sub {
		if rewriteTextAnchors(s) {
			changed = true
		}
	}
	return changed
}

// requiredLiteral returns the longest literal that every match must contain.
func requiredLiteral(re *syntax.Regexp) ([]rune, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return re.Rune, re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []rune
		var bestFold bool
		for _, s := range re.Sub {
			r, f := requiredLiteral(s)
			if f {
				r = longestFoldSafe(r)
			}
			// Prefer case-sensitive literals: bytes.Index beats the folding scan.
			if len(r) > len(best) || (len(r) == len(best) && bestFold && !f) {
				best, bestFold = r, f
			}
		}
		return best, bestFold
	}
	return nil, false
}

// longestFoldSafe returns the longest run of runes whose case variants are
// all ASCII. 'k' and 's' are excluded because RE2 folds them to the Kelvin
// sign and the long s.
func longestFoldSafe(rs []rune) []rune {
	var best []rune
	start := 0
	for i := 0; i <= len(rs); i++ {
		if i == len(rs) || rs[i] >= utf8.RuneSelf || rs[i] == 'k' || rs[i] == 'K' || rs[i] == 's' || rs[i] == 'S' {
			if i-start > len(best) {
				best = rs[start:i]
			}
			start = i + 1
		}
	}
	return best
}

// commonBytes ranks bytes by how often they occur in source code, most
// common first; the folding scan looks for the least common byte of the needle.
const commonBytes = " e\nt\tariosnlcdpu()m.h,f\"g;_=b{}y:w/-vEST>0kx<1R*NIALCO'"

func rarestByte(lit []byte) int {
	best, bestRank := 0, -1
	for i, c := range lit {
		rank := bytes.IndexByte([]byte(commonBytes), lower(c))
		if rank < 0 {
			rank = len(commonBytes)
		}
		if rank > bestRank {
			best, bestRank = i, rank
		}
	}
	return best
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// indexFold finds needle (lower-case ASCII) in s ignoring ASCII case.
func indexFold(s, needle []byte, rare int) int {
	c := needle[rare]
	u := c
	if 'a' <= c && c <= 'z' {
		u = c - 'a' + 'A'
	}
	nextL, nextU := -2, -2 // next occurrence of each case at or after pos; -2 means not searched yet
	pos := rare
	for pos < len(s) {
		if nextL != -1 && nextL < pos {
			nextL = indexFrom(s, c, pos)
		}
		if u != c && nextU != -1 && nextU < pos {
			nextU = indexFrom(s, u, pos)
		}
		i := nextL
		if u != c && (i == -1 || (nextU != -1 && nextU < i)) {
			i = nextU
		}
		if i == -1 {
			return -1
		}
		start := i - rare
		if start+len(needle) <= len(s) && equalFoldASCII(s[start:start+len(needle)], needle) {
			return start
		}
		pos = i + 1
	}
	return -1
}

func indexFrom(s []byte, c byte, pos int) int {
	if i := bytes.IndexByte(s[pos:], c); i >= 0 {
		return pos + i
	}
	return -1
}

func equalFoldASCII(s, lowerNeedle []byte) bool {
	for i, c := range s {
		if lower(c) != lowerNeedle[i] {
			return false
		}
	}
	return true
}

// index finds the literal at or after pos, returning its absolute offset.
func (m *matcher) index(buf []byte, pos int) int {
	var i int
	if m.fold {
		i = indexFold(buf[pos:], m.lit, m.rare)
	} else {
		i = bytes.Index(buf[pos:], m.lit)
	}
	if i < 0 {
		return -1
	}
	return pos + i
}

func lineStart(buf []byte, i int) int { return bytes.LastIndexByte(buf[:i], '\n') + 1 }

func lineEnd(buf []byte, i int) int {
	if j := bytes.IndexByte(buf[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(buf)
}

// nextLine returns the bounds (without the newline) of the first matching
// line that starts at or after pos, which must be a line start.
func (m *matcher) nextLine(buf []byte, pos int) (ls, le int, ok bool) {
	for pos < len(buf) {
		if m.lit != nil {
			i := m.index(buf, pos)
			if i < 0 {
				return 0, 0, false
			}
			ls, le = lineStart(buf, i), lineEnd(buf, i)
			if m.whole || m.re.Match(buf[ls:le]) {
				return ls, le, true
			}
			pos = le + 1
			continue
		}
		loc := m.re.FindIndex(buf[pos:])
		if loc == nil {
			return 0, 0, false
		}
		i, e := pos+loc[0], pos+loc[1]
		ls, le = lineStart(buf, i), lineEnd(buf, i)
		// A match that runs past the newline may not exist within the line
		// alone; check the line by itself before reporting it.
		if e <= le || m.re.Match(buf[ls:le]) {
			return ls, le, true
		}
		pos = le + 1
	}
	return 0, 0, false
}

// nextSpan returns the next multiline match starting at or after pos.
func (m *matcher) nextSpan(buf []byte, pos int) (s, e int, ok bool) {
	if pos > len(buf) {
		return 0, 0, false
	}
	if m.whole && !m.fold {
		i := m.index(buf, pos)
		if i < 0 {
			return 0, 0, false
		}
		return i, i + len(m.lit), true
	}
	if m.lit != nil && m.index(buf, pos) < 0 {
		return 0, 0, false
	}
	loc := m.re.FindIndex(buf[pos:])
	if loc == nil {
		return 0, 0, false
	}
	s, e = pos+loc[0], pos+loc[1]
	// An empty match after the final newline is not on any line.
	if s == len(buf) && (s == 0 || buf[s-1] == '\n') {
		return 0, 0, false
	}
	return s, e, true
}
