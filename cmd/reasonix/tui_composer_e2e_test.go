package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// composerRows returns the text rows inside the composer's frame: the
// last box on the screen, between its ╔ and ╚ lines.
func composerRows(screen string) []string {
	lines := strings.Split(screen, "\n")
	top, bottom := -1, -1
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "╔"):
			top = i
		case strings.HasPrefix(l, "╚"):
			bottom = i
		}
	}
	if top < 0 || bottom <= top {
		return nil
	}
	var rows []string
	for _, l := range lines[top+1 : bottom] {
		rows = append(rows, strings.TrimSpace(strings.Trim(l, "║")))
	}
	return rows
}

// TestTUICtrlCKeepsTheClearedDraft: Ctrl-C on an unsent draft clears it,
// says so, and Up brings it back whole (a large paste expanded), so one
// stray key does not lose what was typed; Enter then sends it.
func TestTUICtrlCKeepsTheClearedDraft(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "Got the draft."})
	tt := startTUI(t, e, "chat")
	tt.tmux("send-keys", "-t", "rx", "-l", "a careful draft: ")
	var paste strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&paste, "pasted line %d\n", i)
	}
	buf := filepath.Join(t.TempDir(), "paste.txt")
	if err := os.WriteFile(buf, []byte(paste.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	tt.tmux("load-buffer", "-b", "p", buf)
	tt.tmux("paste-buffer", "-p", "-b", "p", "-t", "rx")
	tt.waitFor("[Pasted text #1, 12 lines]")
	tt.keys("C-c")
	s := tt.waitFor("draft cleared (Up brings it back)")
	if strings.Contains(s, "careful draft") {
		t.Fatalf("Ctrl-C left the draft in the composer:\n%s", s)
	}
	tt.keys("Up")
	tt.waitFor("pasted line 12")
	tt.keys("Enter")
	tt.waitFor("Got the draft.")
	reqs := e.srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0]), `a careful draft: pasted line 1\npasted line 2`) ||
		!strings.Contains(string(reqs[0]), "pasted line 12") {
		t.Fatalf("the recalled draft was not sent whole: %d request(s)", len(reqs))
	}
	tt.quit()
}

// TestTUIRecalledLongPromptFillsTheComposer: Up on a sent prompt longer
// than the composer shows its last rows, the composer full, not its last
// line alone at the top over empty rows.
func TestTUIRecalledLongPromptFillsTheComposer(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "First answer."})
	tt := startTUI(t, e, "chat")
	var paste strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&paste, "row %d 第%d行\n", i, i)
	}
	buf := filepath.Join(t.TempDir(), "paste.txt")
	if err := os.WriteFile(buf, []byte(paste.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	tt.tmux("load-buffer", "-b", "p", buf)
	tt.tmux("paste-buffer", "-p", "-b", "p", "-t", "rx")
	tt.waitFor("[Pasted text #1, 40 lines]")
	tt.keys("Enter")
	tt.waitFor("First answer.")
	tt.keys("Up")
	s := tt.waitFor("row 40 第40行")
	rows := composerRows(s)
	if len(rows) < 2 {
		t.Fatalf("the composer did not grow for a 40-line prompt:\n%s", s)
	}
	for i, r := range rows {
		if want := fmt.Sprintf("row %d 第%d行", 41-len(rows)+i, 41-len(rows)+i); r != want {
			t.Fatalf("composer row %d is %q, want %q (the prompt's last %d lines):\n%s", i, r, want, len(rows), s)
		}
	}
	tt.keys("C-c")
	tt.quit()
}

// TestTUICtrlCDuringApprovalSaysInterrupted: Ctrl-C while an approval is
// open ends the turn, and the refused call says it was interrupted, not
// "approval failed: context canceled"; nothing is written.
func TestTUICtrlCDuringApprovalSaysInterrupted(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "out.txt", "content": "x\n"})}})
	tt := startTUI(t, e, "chat")
	tt.typeLine("write it")
	tt.waitFor("approve write_file?")
	tt.keys("C-c")
	s := tt.waitFor("not approved: interrupted while asking", "interrupted")
	if strings.Contains(s, "context canceled") {
		t.Errorf("the screen shows a Go context message:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "out.txt")); err == nil {
		t.Errorf("the interrupted write landed")
	}
	tt.quit()
}

// TestTUISkinToneEmojiDoesNotBreakTheLine: an answer with a skin-toned
// emoji stays on one line (the line breaker tview uses ended the line
// after it, the rest on a new line starting with a space); the emoji
// shows without its tone.
func TestTUISkinToneEmojiDoesNotBreakTheLine(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "Nice work 👍🏽 all tests pass, 好的 ✌🏿 done.", ChunkSize: 1})
	tt := startTUI(t, e, "chat")
	tt.typeLine("how did it go")
	s := tt.waitFor("done.")
	var line string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "Nice work") {
			line = l
		}
	}
	if !strings.Contains(line, "all tests pass, 好的") || !strings.Contains(line, "done.") {
		t.Errorf("the answer broke after the emoji:\n%s", s)
	}
	tt.quit()
}

// TestTUIComposerRefitsOnResize: a draft that wraps to several rows in a
// narrow terminal takes only the rows it needs once the terminal is
// wider (it kept the narrow row count, with empty rows under the text).
func TestTUIComposerRefitsOnResize(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "unused"})
	tt := startTUI(t, e, "chat")
	tt.tmux("resize-window", "-t", "rx", "-x", "40", "-y", "20")
	tt.tmux("send-keys", "-t", "rx", "-l", "这是一个很长的中文输入，用来测试输入框在窄终端下的自动换行是否正确。")
	s := tt.waitFor("换行是否正确。")
	if rows := composerRows(s); len(rows) < 2 {
		t.Fatalf("the draft does not wrap at 40 columns:\n%s", s)
	}
	tt.tmux("resize-window", "-t", "rx", "-x", "120", "-y", "40")
	deadline := time.Now().Add(5 * time.Second)
	for {
		s = tt.screen()
		rows := composerRows(s)
		if len(rows) == 1 && strings.Contains(rows[0], "换行是否正确。") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after widening, the composer holds %d rows, want 1:\n%s", len(rows), s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	tt.keys("C-c")
	tt.quit()
}

// TestTUIPasteUnderAnApprovalGoesToTheDraft: text pasted while an
// approval is open (it takes keys only) is not lost: it is the draft
// once the approval closes, and Enter sends it. The paste answers nothing.
func TestTUIPasteUnderAnApprovalGoesToTheDraft(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "out.txt", "content": "x\n"})}},
		scripted.Turn{Text: "Left it alone."},
		scripted.Turn{Text: "Got the next prompt."},
	)
	tt := startTUI(t, e, "chat")
	tt.typeLine("write it")
	tt.waitFor("approve write_file?")
	buf := filepath.Join(t.TempDir(), "paste.txt")
	if err := os.WriteFile(buf, []byte("yes, and next: tidy the README"), 0o600); err != nil {
		t.Fatal(err)
	}
	tt.tmux("load-buffer", "-b", "p", buf)
	tt.tmux("paste-buffer", "-p", "-b", "p", "-t", "rx")
	time.Sleep(300 * time.Millisecond)
	tt.waitFor("approve write_file?") // still asking: the paste's "y" answered nothing
	tt.keys("n")
	s := tt.waitFor("Left it alone.", "the paste went to the draft")
	if rows := composerRows(s); len(rows) == 0 || !strings.Contains(rows[0], "yes, and next: tidy the README") {
		t.Fatalf("the paste is not the draft:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "out.txt")); err == nil {
		t.Errorf("the write was approved")
	}
	tt.keys("Enter")
	tt.waitFor("Got the next prompt.")
	if reqs := e.srv.Requests(); len(reqs) != 3 || !strings.Contains(string(reqs[2]), "tidy the README") {
		t.Errorf("the pasted draft was not sent")
	}
	tt.quit()
}

// TestTUIInterruptKeepsQueuedPromptsAndTheDraft: Esc during a turn puts
// the prompts queued behind it back into the composer, ahead of a draft
// being typed, which stays; neither is sent or lost.
func TestTUIInterruptKeepsQueuedPromptsAndTheDraft(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "slow answer that goes on and on and on and on", ChunkSize: 2, ChunkDelayMS: 300})
	tt := startTUI(t, e, "chat")
	tt.typeLine("first")
	tt.waitFor("working")
	tt.typeLine("queued prompt A")
	tt.waitFor("queued: queued prompt A")
	tt.tmux("send-keys", "-t", "rx", "-l", "half typed B")
	tt.waitFor("half typed B")
	tt.keys("Escape")
	s := tt.waitFor("interrupted")
	rows := composerRows(s)
	if len(rows) < 3 || rows[0] != "queued prompt A" || rows[len(rows)-1] != "half typed B" {
		t.Fatalf("the composer holds %q, want the queued prompt, a blank line and the draft:\n%s", rows, s)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("%d requests: the queued prompt was sent", n)
	}
	tt.keys("C-c")
	tt.quit()
}
