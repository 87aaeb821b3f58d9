package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// historyTexts is the project's prompt history file as the e2e home holds
// it: there must be exactly one.
func historyTexts(t *testing.T, e *e2e) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.home, "history", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("history files: %v, want one", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var entry struct {
			Time string `json:"time"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(l), &entry); err != nil || entry.Time == "" {
			t.Fatalf("history line %q: %v", l, err)
		}
		out = append(out, entry.Text)
	}
	return out
}

// TestTUIHistoryAcrossRestarts: a prompt sent in one chat, and one given
// to reasonix run, come back with Up in the next chat, newest first, and
// Enter sends the recalled prompt.
func TestTUIHistoryAcrossRestarts(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{Text: "Noted the milk."},
		scripted.Turn{Text: "Ran x."},
		scripted.Turn{Text: "Noted it again."},
	)
	tt := startTUI(t, e, "chat")
	tt.typeLine("remember the milk")
	tt.waitFor("Noted the milk.")
	tt.quit()

	if r := e.run("", "run", "x"); r.code != 0 {
		t.Fatalf("run x: %d\n%s", r.code, r.stderr)
	}
	if got := historyTexts(t, e); strings.Join(got, "|") != "remember the milk|x" {
		t.Fatalf("history %q", got)
	}

	tt = startTUI(t, e, "chat")
	s := tt.screen()
	if strings.Contains(s, "remember the milk") {
		t.Fatalf("a fresh chat shows the old prompt before Up:\n%s", s)
	}
	tt.keys("Up")
	tt.waitFor("║ x ")
	tt.keys("Up")
	s = tt.waitFor("║ remember the milk")
	if strings.Contains(s, "›") {
		t.Fatalf("recalling a prompt sent it:\n%s", s)
	}
	tt.keys("Enter")
	tt.waitFor("› remember the milk", "Noted it again.")
	if n := len(e.srv.Requests()); n != 3 {
		t.Errorf("requests = %d, want 3", n)
	}
	tt.quit()
	if got := historyTexts(t, e); strings.Join(got, "|") != "remember the milk|x|remember the milk" {
		t.Errorf("history %q", got)
	}
}

// TestRunHistory: reasonix run adds its prompt to the project's history,
// and so does each user turn of a stream-json run.
func TestRunHistory(t *testing.T) {
	e := newE2E(t, scripted.Turn{Text: "one"}, scripted.Turn{Text: "two"}, scripted.Turn{Text: "three"})
	if r := e.run("", "run", "fix the build"); r.code != 0 {
		t.Fatalf("run: %d\n%s", r.code, r.stderr)
	}
	in := `{"type":"user","message":{"role":"user","content":"first turn"}}` + "\n" +
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second\nturn"}]}}` + "\n"
	if r := e.run(in, "run", "--input-format", "stream-json", "--output-format", "stream-json"); r.code != 0 {
		t.Fatalf("stream-json run: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	want := []string{"fix the build", "first turn", "second\nturn"}
	if got := historyTexts(t, e); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("history %q, want %q", got, want)
	}
}

// TestRunHistoryUnwritable: a history that cannot be written is a notice;
// the run still succeeds.
func TestRunHistoryUnwritable(t *testing.T) {
	e := newE2E(t, scripted.Turn{Text: "answered anyway"})
	// A file where the history directory should be.
	if err := os.WriteFile(filepath.Join(e.home, "history"), []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "run", "a prompt")
	if r.code != 0 || !strings.Contains(r.stdout, "answered anyway") {
		t.Fatalf("run: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "not saved to the history") {
		t.Errorf("no notice about the history:\n%s", r.stderr)
	}
}
