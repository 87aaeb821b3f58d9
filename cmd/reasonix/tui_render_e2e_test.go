package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

// TestTUIThemeFromTerminalBackground: with no theme configured and no
// COLORFGBG, the TUI asks the terminal for its background (tmux answers
// OSC 11 from its window style): on white it takes the light theme
// (headings navy, SGR 34), on a terminal that does not say, the dark one
// (headings aqua, shown as cyan at 8 colours).
func TestTUIThemeFromTerminalBackground(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, conf string
		light      bool
	}{
		{"white", "set -g window-style 'bg=#ffffff'\nset -g window-active-style 'bg=#ffffff'\n", true},
		{"unknown", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, scripted.Turn{Text: "## Heading here\n\nbody text\n"})
			tt := startTUIConf(t, e, c.conf)
			tt.typeLine("show me")
			tt.waitFor("Heading here", "body text")
			dump := tt.tmux("capture-pane", "-e", "-p", "-t", "rx")
			p := sgrBefore(t, dump, "Heading here")
			navy := hasParam(p, "34") || strings.Contains(strings.Join(p, ";"), "38;5;4")
			if navy != c.light {
				t.Errorf("heading SGR %v: light theme %v, want %v", p, navy, c.light)
			}
			if !hasColour(p) {
				t.Errorf("heading SGR %v has no colour", p)
			}
			tt.quit()
		})
	}
}

// TestTUINoColor: with NO_COLOR set the screen carries no colour at all
// (the code block, the diff, the status line), while bold stays.
func TestTUINoColor(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.txt", "old_string": "hello", "new_string": "hello, world"})}},
		scripted.Turn{Text: "Use **strongly** here:\n\n```go\nfunc main() { return }\n```\n"})
	e.write("greet.txt", "hello\n")
	e.env = append(e.env, "NO_COLOR=1")
	tt := startTUI(t, e, "--yolo")
	tt.typeLine("show me")
	tt.waitFor("strongly", "main()", "+hello, world")
	dump := tt.tmux("capture-pane", "-e", "-p", "-t", "rx")
	for _, m := range regexp.MustCompile("\x1b\\[([0-9;:]*)m").FindAllStringSubmatch(dump, -1) {
		var ps []string
		for _, p := range strings.Split(m[1], ";") {
			if p != "" && p != "0" {
				ps = append(ps, p)
			}
		}
		if hasColour(ps) || hasBackground(ps) {
			t.Errorf("a colour under NO_COLOR: %q", m[0])
			break
		}
	}
	if p := sgrBefore(t, dump, "strongly"); !hasParam(p, "1") {
		t.Errorf("bold text has SGR %v under NO_COLOR, want 1 (bold)", p)
	}
	tt.quit()
}

func hasBackground(ps []string) bool {
	for _, p := range ps {
		if len(p) == 2 && p[0] == '4' && p != "49" || len(p) == 3 && strings.HasPrefix(p, "10") || p == "48" {
			return true
		}
	}
	return false
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

// TestTUIComposerInARealTerminal: Chinese typing with a backspace, a
// 60-line bracketed paste sent as one prompt, PgUp then End with the next
// answer on screen, and Enter during a turn queueing the prompt.
func TestTUIComposerInARealTerminal(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "收到中文"},
		scripted.Turn{Text: "pasted text received"},
		scripted.Turn{Text: strings.Repeat("filler line\n", 60) + "end of the long answer"},
		scripted.Turn{Text: "answer after scrolling"},
		scripted.Turn{Text: "slow answer", DelayMS: 1500},
		scripted.Turn{Text: "answer to the queued prompt"},
	)
	tt := startTUI(t, e)

	// Chinese, then a backspace removes the last (wide) character.
	tt.tmux("send-keys", "-t", "rx", "-l", "你好世界吗")
	tt.keys("BSpace", "Enter")
	tt.waitFor("› 你好世界", "收到中文")
	if s := tt.screen(); strings.Contains(s, "你好世界吗") {
		t.Errorf("backspace did not remove the wide character:\n%s", s)
	}

	// A 60-line paste, bracketed as a terminal sends it.
	var lines []string
	for i := range 60 {
		lines = append(lines, fmt.Sprintf("pasted line %02d", i+1))
	}
	buf := filepath.Join(t.TempDir(), "paste.txt")
	if err := os.WriteFile(buf, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	tt.tmux("load-buffer", "-b", "p", buf)
	tt.tmux("paste-buffer", "-p", "-b", "p", "-t", "rx")
	tt.waitFor("[Pasted text #1, 60 lines]")
	tt.keys("Enter")
	tt.waitFor("pasted text received")
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests after the paste, want 2 (one for the paste)", len(reqs))
	}
	if !bytes.Contains(reqs[1], []byte("pasted line 01")) || !bytes.Contains(reqs[1], []byte("pasted line 60")) {
		t.Errorf("the paste's request lacks its lines")
	}

	// A long answer, PgUp, End: the next answer is on screen.
	tt.typeLine("long one")
	tt.waitFor("end of the long answer")
	tt.keys("PageUp")
	for deadline := time.Now().Add(5 * time.Second); strings.Contains(tt.screen(), "end of the long answer"); {
		if time.Now().After(deadline) {
			t.Fatalf("PgUp did not scroll back:\n%s", tt.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
	tt.keys("End")
	tt.waitFor("end of the long answer")
	tt.typeLine("next")
	tt.waitFor("answer after scrolling", "› next")

	// Enter while the (slow) turn runs queues the prompt.
	tt.typeLine("slow")
	tt.waitFor("working")
	tt.typeLine("queued prompt")
	tt.waitFor("queued: queued prompt")
	if n := len(e.srv.Requests()); n != 5 {
		t.Errorf("%d requests while the slow turn runs, want 5", n)
	}
	tt.waitFor("slow answer", "answer to the queued prompt")
	reqs = e.srv.Requests()
	if len(reqs) != 6 || !bytes.Contains(reqs[5], []byte("queued prompt")) {
		t.Errorf("%d requests, want 6, the last with the queued prompt", len(reqs))
	}
	tt.quit()
}
