package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2ECompactByHandWithAnUnknownWindow: a model whose context window
// Reasonix does not know (a local server's, as `reasonix setup --provider
// local` writes it) still compacts when the person asks: `reasonix compact`
// on a finished session folds its earlier work into a digest, keeps the
// originals in the archive and exits 0, where it used to refuse with
// "compaction is off".
func TestE2ECompactByHandWithAnUnknownWindow(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Match: "first task", ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "a.txt"})}},
		scripted.Turn{Match: "first task", Text: "a.txt holds the alpha data."},
		scripted.Turn{Match: "second task", Text: "Nothing else to do."},
		scripted.Turn{Match: "Transcript to digest", Text: "DIGEST: read a.txt (alpha data)."},
	)
	e.write("a.txt", strings.Repeat("alpha data line\n", 200))
	if r := e.run("", "run", "first task"); r.code != 0 {
		t.Fatalf("first turn: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run("", "run", "--continue", "second task"); r.code != 0 {
		t.Fatalf("second turn: exit %d\n%s", r.code, r.stderr)
	}
	r := e.run("", "compact")
	if r.code != 0 {
		t.Fatalf("compact with an unknown window: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "compacted ") || !strings.Contains(r.stdout, "folded") {
		t.Errorf("compact printed no result: stdout %q stderr %q", r.stdout, r.stderr)
	}
	archives, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.archive.jsonl"))
	if len(archives) != 1 {
		t.Fatalf("archives %v, want one", archives)
	}
	if b, err := os.ReadFile(archives[0]); err != nil || !strings.Contains(string(b), "alpha data line") {
		t.Errorf("the archive does not hold the folded tool result (%v)", err)
	}
	// The next turn starts from the digest.
	e2 := withScript(t, e, scripted.Turn{Text: "Go on."})
	if r := e2.run("", "run", "--continue", "third task"); r.code != 0 {
		t.Fatalf("third turn: exit %d\n%s", r.code, r.stderr)
	}
	reqs := e2.srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0]), "DIGEST: read a.txt") || strings.Contains(string(reqs[0]), "alpha data line") {
		t.Errorf("the turn after the compaction was not sent from the digest")
	}
}
