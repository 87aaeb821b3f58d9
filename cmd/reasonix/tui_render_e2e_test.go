package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// sgrBefore returns the parameters of every SGR sequence (ESC [ ... m)
// that applies to the first occurrence of word in a `capture-pane -e`
// dump: those after the previous reset up to the word.
func sgrBefore(t *testing.T, dump, word string) []string {
	t.Helper()
	i := strings.Index(dump, word)
	if i < 0 {
		t.Fatalf("%q not in the captured pane:\n%q", word, dump)
	}
	line := dump[:i]
	if nl := strings.LastIndexByte(line, '\n'); nl >= 0 {
		line = line[nl+1:]
	}
	var params []string
	for _, m := range regexp.MustCompile("\x1b\\[([0-9;]*)m").FindAllStringSubmatch(line, -1) {
		for _, p := range strings.Split(m[1], ";") {
			if p == "" || p == "0" {
				params = nil
				continue
			}
			params = append(params, p)
		}
	}
	return params
}

// TestTUIMarkdownAnswer: a streamed Markdown answer shows bold text as
// bold and a code block with its keywords coloured, markers gone.
func TestTUIMarkdownAnswer(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{ChunkSize: 3, Text: "Use **strongly** here:\n\n```go\nfunc main() { return }\n```\n\n- first item\n"})
	tt := startTUI(t, e)
	tt.typeLine("show me")
	s := tt.waitFor("strongly", "main()", "• first item")
	if strings.Contains(s, "**") || strings.Contains(s, "```") {
		t.Errorf("Markdown markers on screen:\n%s", s)
	}
	dump := tt.tmux("capture-pane", "-e", "-p", "-t", "rx")
	if p := sgrBefore(t, dump, "strongly"); !hasParam(p, "1") {
		t.Errorf("bold text has SGR %v, want 1 (bold)", p)
	}
	if p := sgrBefore(t, dump, "func"); !hasColour(p) {
		t.Errorf("keyword has SGR %v, want a colour", p)
	}
	if p := sgrBefore(t, dump, "main"); hasParam(p, "1") {
		t.Errorf("bold leaked into the code: %v", p)
	}
	tt.quit()
}

func hasParam(ps []string, want string) bool {
	for _, p := range ps {
		if p == want {
			return true
		}
	}
	return false
}

func hasColour(ps []string) bool {
	for _, p := range ps {
		if len(p) == 2 && (p[0] == '3' || p[0] == '9') && p != "39" {
			return true
		}
		if p == "38" {
			return true
		}
	}
	return false
}
