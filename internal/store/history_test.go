package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

func texts(t *testing.T, h *History) []string {
	t.Helper()
	es, err := h.Load()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.Time.IsZero() {
			t.Errorf("entry %q has no time", e.Text)
		}
		out = append(out, e.Text)
	}
	return out
}

func add(t *testing.T, h *History, ss ...string) {
	t.Helper()
	for _, s := range ss {
		if err := h.Add(s); err != nil {
			t.Fatal(err)
		}
	}
}

// fileLines is the history file's complete lines, each checked to be a
// whole entry.
func fileLines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		t.Fatalf("file ends inside a line: %q", raw[max(0, len(raw)-80):])
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		if l == "" {
			continue
		}
		var e HistoryEntry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("damaged line %q: %v", l, err)
		}
		out = append(out, e.Text)
	}
	return out
}

func TestHistoryPath(t *testing.T) {
	p := HistoryPath("/home/r", "/work/proj")
	if !regexp.MustCompile(`^/home/r/history/[0-9a-f]{16}\.jsonl$`).MatchString(filepath.ToSlash(p)) {
		t.Errorf("path %s", p)
	}
	if HistoryPath("/home/r", "/work/proj/") != p || HistoryPath("/home/r", "/work/proj/sub/..") != p {
		t.Error("the same workspace spelt differently has another history")
	}
	if HistoryPath("/home/r", "/work/other") == p {
		t.Error("two workspaces share a history")
	}
}

func TestHistoryAppendAndLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history", "p.jsonl")
	h := NewHistory(path, 0)
	if got := texts(t, h); len(got) != 0 {
		t.Fatalf("missing file loaded %q", got)
	}
	multi := "first line\nsecond line with <html> & \"quotes\""
	add(t, h, "fix the bug", "  ", "", multi, "/goal ship it")
	want := []string{"fix the bug", multi, "/goal ship it"}
	if got := texts(t, h); !equal(got, want) {
		t.Fatalf("loaded %q, want %q", got, want)
	}
	// A new History on the same file (the next run) sees them.
	if got := texts(t, NewHistory(path, 0)); !equal(got, want) {
		t.Fatalf("reloaded %q", got)
	}
	if lines := fileLines(t, path); len(lines) != 3 {
		t.Fatalf("file has %d lines", len(lines))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 && filepath.Separator == '/' {
		t.Errorf("history file mode %v: prompts are private", perm)
	}
	// A prompt too long to remember is not written.
	add(t, h, strings.Repeat("x", maxHistoryText+1))
	if lines := fileLines(t, path); len(lines) != 3 {
		t.Errorf("an oversized prompt was written")
	}
}

func TestHistoryDuplicates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	h := NewHistory(path, 0)
	add(t, h, "a", "a", "b", "a", "a")
	if got, want := texts(t, h), []string{"a", "b", "a"}; !equal(got, want) {
		t.Fatalf("loaded %q, want %q", got, want)
	}
	// Another process (here another History) repeating the newest entry
	// adds nothing either; a different one is added.
	other := NewHistory(path, 0)
	add(t, other, "a", "c")
	add(t, h, "c", "d")
	if got, want := fileLines(t, path), []string{"a", "b", "a", "c", "d"}; !equal(got, want) {
		t.Fatalf("file %q, want %q", got, want)
	}
	// Duplicates that reached the file anyway (an old writer) are
	// collapsed on load.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2025-01-01T00:00:00Z","text":"d"}` + "\n")
	f.Close()
	if got, want := texts(t, h), []string{"a", "b", "a", "c", "d"}; !equal(got, want) {
		t.Fatalf("loaded %q, want %q", got, want)
	}
}

func TestHistoryCapAndCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	h := NewHistory(path, 5)
	var all []string
	for i := range 10 {
		all = append(all, fmt.Sprintf("prompt %d", i))
	}
	add(t, h, all...)
	// Up to twice the cap the file only grows; Load gives the newest cap.
	if n := len(fileLines(t, path)); n != 10 {
		t.Fatalf("file has %d lines before compaction, want 10", n)
	}
	if got := texts(t, h); !equal(got, all[5:]) {
		t.Fatalf("loaded %q, want %q", got, all[5:])
	}
	// The entry past twice the cap rewrites the file with the newest cap.
	add(t, h, "prompt 10")
	all = append(all, "prompt 10")
	if got := fileLines(t, path); !equal(got, all[6:]) {
		t.Fatalf("after compaction the file is %q, want %q", got, all[6:])
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
	// It goes on growing from there, and compacts again.
	for i := 11; i < 22; i++ {
		s := fmt.Sprintf("prompt %d", i)
		add(t, h, s)
		all = append(all, s)
	}
	if got := fileLines(t, path); len(got) > 10 || !equal(got[len(got)-5:], all[len(all)-5:]) {
		t.Fatalf("file %q", got)
	}
	if got := texts(t, h); !equal(got, all[len(all)-5:]) {
		t.Fatalf("loaded %q", got)
	}
}

func TestHistoryTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	good := `{"time":"2025-01-01T00:00:00Z","text":"one"}` + "\n" +
		`not json at all` + "\n" +
		`{"time":"2025-01-01T00:00:01Z","text":"two"}` + "\n"
	torn := `{"time":"2025-01-01T00:00:02Z","text":"thr`
	if err := os.WriteFile(path, []byte(good+torn), 0o600); err != nil {
		t.Fatal(err)
	}
	h := NewHistory(path, 0)
	if got, want := texts(t, h), []string{"one", "two"}; !equal(got, want) {
		t.Fatalf("loaded %q, want %q", got, want)
	}
	// An append after a torn tail starts on a line of its own.
	add(t, h, "three")
	if got, want := texts(t, h), []string{"one", "two", "three"}; !equal(got, want) {
		t.Fatalf("loaded %q, want %q", got, want)
	}
	raw, _ := os.ReadFile(path)
	if !bytes.HasSuffix(raw, []byte("\"text\":\"thr\n{")) && !bytes.Contains(raw, []byte("thr\n{")) {
		t.Errorf("the new line was glued to the torn one:\n%s", raw)
	}
}

// TestHistoryTwoWriters: two processes (two Histories on one file) adding
// at once never tear or lose a line, with and without compactions.
func TestHistoryTwoWriters(t *testing.T) {
	const n = 200
	write := func(t *testing.T, limit int) (string, [2][]string) {
		path := filepath.Join(t.TempDir(), "h.jsonl")
		var added [2][]string
		var wg sync.WaitGroup
		for w := range 2 {
			h := NewHistory(path, limit)
			wg.Go(func() {
				for i := range n {
					s := fmt.Sprintf("writer %d prompt %d\nwith a second line %s", w, i, strings.Repeat("x", i))
					if err := h.Add(s); err != nil {
						t.Error(err)
						return
					}
					added[w] = append(added[w], s)
				}
			})
		}
		wg.Wait()
		return path, added
	}
	t.Run("no compaction", func(t *testing.T) {
		path, added := write(t, 1000)
		lines := fileLines(t, path)
		if len(lines) != 2*n {
			t.Fatalf("file has %d lines, want %d", len(lines), 2*n)
		}
		// Each writer's lines are all there, in its order.
		for w := range 2 {
			var got []string
			for _, l := range lines {
				if strings.HasPrefix(l, fmt.Sprintf("writer %d ", w)) {
					got = append(got, l)
				}
			}
			if !equal(got, added[w]) {
				t.Errorf("writer %d: %d of %d lines, in order: %v", w, len(got), len(added[w]), equal(got, added[w]))
			}
		}
	})
	t.Run("compactions", func(t *testing.T) {
		const limit = 15
		path, added := write(t, limit)
		lines := fileLines(t, path)
		if len(lines) > 2*limit {
			t.Fatalf("file has %d lines, over twice the cap", len(lines))
		}
		// No line is lost to a rewrite: what the file holds of each
		// writer is that writer's newest lines, in order, and the newest
		// line of the file is one writer's last.
		last := lines[len(lines)-1]
		if last != added[0][n-1] && last != added[1][n-1] {
			t.Errorf("newest line %q is no writer's last", last)
		}
		for w := range 2 {
			var got []string
			for _, l := range lines {
				if strings.HasPrefix(l, fmt.Sprintf("writer %d ", w)) {
					got = append(got, l)
				}
			}
			if !equal(got, added[w][n-len(got):]) {
				t.Errorf("writer %d: file holds %d lines that are not its newest in order", w, len(got))
			}
		}
		if got := texts(t, NewHistory(path, limit)); len(got) != limit {
			t.Errorf("loaded %d entries, want %d", len(got), limit)
		}
	})
}

// TestHistoryReplacedUnderneath: after another process rewrote the file,
// an Add lands in the new file, not the old one.
func TestHistoryReplacedUnderneath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	a, b := NewHistory(path, 3), NewHistory(path, 3)
	add(t, a, "a1")
	for i := range 7 {
		add(t, b, fmt.Sprintf("b%d", i))
	}
	add(t, a, "a2")
	if got, want := texts(t, a), []string{"b5", "b6", "a2"}; !equal(got, want) {
		t.Fatalf("loaded %q, want %q", got, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
