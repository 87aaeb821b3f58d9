// Package search is the full-text index behind the history tool: BM25
// over the messages of session files and their compaction archives, kept
// in memory and refreshed only for files that changed since the last
// search. It is capped (files, bytes per message) so a search stays fast
// however much history a user has.
package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// BM25 parameters: the usual defaults.
const (
	k1 = 1.2
	b  = 0.75
)

// Tokens splits text into lower-case search terms: runs of letters and
// digits of 2 to 40 bytes; a Han, Hiragana, Katakana or Hangul character
// is a term of its own, since those scripts do not separate words.
func Tokens(text string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			if n := end - start; n >= 2 && n <= 40 {
				out = append(out, lower(text[start:end]))
			}
			start = -1
		}
	}
	for i, r := range text {
		switch {
		case isIdeograph(r):
			flush(i)
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			if start < 0 {
				start = i
			}
		default:
			flush(i)
		}
	}
	flush(len(text))
	return out
}

// lower is strings.ToLower without an allocation for a word that is
// already lower-case ASCII.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

func isIdeograph(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// posting is one document's count of a term.
type posting struct {
	doc int32
	tf  int32
}

// index holds the postings of one file's documents, numbered from 0;
// BM25's collection statistics are summed across files at search time.
type index struct {
	postings map[string][]posting
	lens     []int32
}

// builder collects term counts document by document.
type builder struct {
	postings map[string][]posting
	lens     []int32
}

func newBuilder() *builder { return &builder{postings: map[string][]posting{}} }

// add indexes the terms of the next document and returns its number.
func (bd *builder) add(terms map[string]int32, n int32) int32 {
	id := int32(len(bd.lens))
	for t, c := range terms {
		bd.postings[t] = append(bd.postings[t], posting{doc: id, tf: c})
	}
	bd.lens = append(bd.lens, n)
	return id
}

func (bd *builder) done() *index {
	return &index{postings: bd.postings, lens: bd.lens}
}

// counts is the term frequencies of text, and its length in terms.
func counts(text string) (map[string]int32, int32) {
	toks := Tokens(text)
	m := make(map[string]int32, len(toks)/2+1)
	for _, t := range toks {
		m[t]++
	}
	return m, int32(len(toks))
}

// Snippet is up to n bytes of text around the first query term it
// contains, on one line.
func Snippet(text, query string, n int) string {
	lower := strings.ToLower(text)
	at := -1
	for _, t := range Tokens(query) {
		if i := strings.Index(lower, t); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 || len(lower) != len(text) {
		at = 0 // lower-casing changed byte offsets; start at the top
	}
	from := max(at-n/3, 0)
	for from > 0 && !utf8.RuneStart(text[from]) {
		from--
	}
	to := min(from+n, len(text))
	for to < len(text) && !utf8.RuneStart(text[to]) {
		to++
	}
	s := strings.Join(strings.Fields(text[from:to]), " ")
	if from > 0 {
		s = "…" + s
	}
	if to < len(text) {
		s += "…"
	}
	return s
}
