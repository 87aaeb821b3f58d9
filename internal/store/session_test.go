package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers"
)

func newTranscript(t *testing.T) (*Transcript, Header) {
	t.Helper()
	h := Header{ID: "s1", Role: "executor", Parent: "p0", Model: "deepseek-chat",
		Created: time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC), Title: "fix <b> & friends"}
	tr, err := (*Seals)(nil).Create(filepath.Join(t.TempDir(), "sessions"), h)
	if err != nil {
		t.Fatal(err)
	}
	return tr, h
}

func TestTranscriptRoundTrip(t *testing.T) {
	tr, h := newTranscript(t)
	want := []providers.Message{
		{Role: providers.RoleUser, Content: "if a < b && c > d"},
		{Role: providers.RoleAssistant, ReasoningContent: "think", ToolCalls: []providers.ToolCall{
			{ID: "c1", Type: "function", Function: providers.FunctionCall{Name: "bash", Arguments: `{"cmd":"ls"}`}}}},
		{Role: providers.RoleTool, ToolCallID: "c1", Content: "a\nb\n", Name: "bash"},
		{Role: providers.RoleAssistant, Content: "done", ReasoningContent: "kept in the transcript"},
	}
	for _, m := range want {
		if err := tr.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if filepath.Base(tr.Path()) != "s1.jsonl" {
		t.Fatalf("path %s", tr.Path())
	}
	raw, _ := os.ReadFile(tr.Path())
	// One line per record, and code stays readable (no \u003c escapes).
	if n := strings.Count(string(raw), "\n"); n != len(want)+1 {
		t.Fatalf("%d lines, want %d:\n%s", n, len(want)+1, raw)
	}
	if strings.Contains(string(raw), `\u003c`) {
		t.Fatalf("HTML-escaped transcript:\n%s", raw)
	}

	gotH, got, err := Read(tr.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !gotH.Created.Equal(h.Created) {
		t.Fatalf("created %v want %v", gotH.Created, h.Created)
	}
	gotH.Created = h.Created
	h.Type = "session"
	if gotH != h {
		t.Fatalf("header %+v want %+v", gotH, h)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("messages\n got %+v\nwant %+v", got, want)
	}
}

func TestCreateRefusesExistingID(t *testing.T) {
	dir := t.TempDir()
	h := Header{ID: "dup"}
	tr, err := (*Seals)(nil).Create(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	tr.Append(providers.Message{Role: "user", Content: "keep me"})
	tr.Close()
	// A second session with the same id must not clobber the first.
	if _, err := (*Seals)(nil).Create(dir, h); err == nil {
		t.Fatal("second Create with the same id succeeded")
	}
	if _, msgs, err := Read(filepath.Join(dir, "dup.jsonl")); err != nil || len(msgs) != 1 {
		t.Fatalf("first transcript damaged: %v %v", msgs, err)
	}
}

// TestCreateWritesFirstRecordsWhole: the header and the first records
// are in the file as soon as it exists under its name (they are written
// beside it and renamed into place), the file is appended to after them,
// and no temporary file is left in the directory.
func TestCreateWritesFirstRecordsWhole(t *testing.T) {
	dir := t.TempDir()
	first := providers.Message{Role: providers.RoleUser, Content: "the prompt"}
	tr, err := (*Seals)(nil).Create(dir, Header{ID: "s2", Role: "executor"}, first, Meta{Type: TypeMeta, Title: "the prompt", Turns: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Before anything else is written (a kill here keeps the prompt).
	l, err := Load(tr.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Messages) != 1 || l.Messages[0].Content != "the prompt" || l.Meta.Turns != 1 || len(l.Notices) != 0 {
		t.Fatalf("a new file holds %+v, meta %+v, notices %v", l.Messages, l.Meta, l.Notices)
	}
	if err := tr.Append(providers.Message{Role: providers.RoleAssistant, Content: "the answer"}); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	if _, msgs, err := Read(tr.Path()); err != nil || len(msgs) != 2 || msgs[1].Content != "the answer" {
		t.Fatalf("after an append: %+v %v", msgs, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("directory holds %v, want the session file alone", names)
	}
	if st, err := os.Stat(tr.Path()); err != nil || (runtime.GOOS != "windows" && st.Mode().Perm() != 0o600) {
		t.Fatalf("mode %v %v, want 0600", st.Mode(), err)
	}
}

func TestTranscriptConcurrentAppend(t *testing.T) {
	tr, _ := newTranscript(t)
	const workers, per = 8, 50
	// Long contents make torn or interleaved writes visible.
	pad := strings.Repeat("x", 4096)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if err := tr.Append(providers.Message{Role: "user", Content: fmt.Sprintf("w%d-%d %s", w, i, pad)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	tr.Close()
	_, msgs, err := Read(tr.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != workers*per {
		t.Fatalf("read %d messages, want %d", len(msgs), workers*per)
	}
	seen := map[string]bool{}
	lastPerWorker := map[string]int{}
	for _, m := range msgs {
		key, rest, _ := strings.Cut(m.Content, " ")
		if rest != pad {
			t.Fatalf("message %q damaged", key)
		}
		if seen[key] {
			t.Fatalf("duplicate %s", key)
		}
		seen[key] = true
		// Each goroutine's own messages stay in its order.
		var w, i int
		fmt.Sscanf(key, "w%d-%d", &w, &i)
		wk := fmt.Sprint(w)
		if prev, ok := lastPerWorker[wk]; ok && i != prev+1 {
			t.Fatalf("worker %d: %d after %d", w, i, prev)
		}
		lastPerWorker[wk] = i
	}
}

// writeLines builds a transcript by hand so tests can damage it.
func writeLines(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadDamage(t *testing.T) {
	const (
		hdr = `{"id":"s1","role":"executor","created":"2025-05-01T12:00:00Z"}` + "\n"
		m1  = `{"role":"user","content":"one"}` + "\n"
		m2  = `{"role":"assistant","content":"two"}` + "\n"
		m3  = `{"role":"user","content":"three"}` + "\n"
	)
	cases := []struct {
		name      string
		content   string
		wantMsgs  []string
		wantID    string
		wantErrAt string // "" means no error; otherwise ":<line>:" in the error
	}{
		{name: "intact", content: hdr + m1 + m2 + m3, wantMsgs: []string{"one", "two", "three"}, wantID: "s1"},
		{name: "torn tail mid-line", content: hdr + m1 + m2 + m3[:15], wantMsgs: []string{"one", "two"}, wantID: "s1"},
		{name: "torn tail one byte", content: hdr + m1 + m2 + "{", wantMsgs: []string{"one", "two"}, wantID: "s1"},
		{name: "whole line without newline counts", content: hdr + m1 + strings.TrimSuffix(m2, "\n"), wantMsgs: []string{"one", "two"}, wantID: "s1"},
		{name: "header only", content: hdr, wantID: "s1"},
		{name: "torn header", content: hdr[:10], wantErrAt: ":1:"},
		{name: "empty file", content: "", wantErrAt: ":1:"},
		{name: "damaged middle line", content: hdr + m1 + `{"role":"user","con` + "\n" + m3, wantErrAt: ":3:"},
		{name: "blank middle line", content: hdr + m1 + "\n" + m2, wantErrAt: ":3:"},
		{name: "damaged header", content: "not json\n" + m1, wantErrAt: ":1:"},
		{name: "wrong type in message", content: hdr + `{"role":7}` + "\n" + m1, wantErrAt: ":2:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeLines(t, c.content)
			h, msgs, err := Read(p)
			if c.wantErrAt == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if h.ID != c.wantID {
					t.Fatalf("header id %q want %q", h.ID, c.wantID)
				}
			} else if err == nil || !strings.Contains(err.Error(), p+c.wantErrAt) {
				t.Fatalf("error %v, want it to name %s%s", err, p, c.wantErrAt)
			}
			var got []string
			for _, m := range msgs {
				got = append(got, m.Content)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.wantMsgs) {
				t.Fatalf("messages %q want %q", got, c.wantMsgs)
			}
		})
	}
}

// TestReadAfterCrash truncates a real transcript at every byte offset of
// its last line, as a crash mid-append would, and checks that Read always
// returns every complete message and no error.
func TestReadAfterCrash(t *testing.T) {
	tr, _ := newTranscript(t)
	for i := range 3 {
		tr.Append(providers.Message{Role: "user", Content: fmt.Sprintf("m%d ünïcödé", i)})
	}
	tr.Close()
	full, _ := os.ReadFile(tr.Path())
	lastStart := strings.LastIndex(strings.TrimSuffix(string(full), "\n"), "\n") + 1
	for cut := lastStart; cut < len(full); cut++ {
		if err := os.WriteFile(tr.Path(), full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		_, msgs, err := Read(tr.Path())
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		// Only a cut right before the final newline leaves the last
		// record whole.
		want := 2
		if cut == len(full)-1 {
			want = 3
		}
		if len(msgs) != want {
			t.Fatalf("cut at %d: %d messages, want %d", cut, len(msgs), want)
		}
	}
}

func TestReadMissingFile(t *testing.T) {
	_, _, err := Read(filepath.Join(t.TempDir(), "nope.jsonl"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	t.Run("creates parents and sets perm", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "a", "b", "plan.json")
		if err := WriteFileAtomic(p, []byte("v1"), 0o600); err != nil {
			t.Fatal(err)
		}
		assertFile(t, p, "v1")
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Fatalf("perm %v", fi.Mode().Perm())
		}
		assertNoTemp(t, filepath.Dir(p), "plan.json")
	})
	t.Run("replaces existing content", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "goal.json")
		for _, v := range []string{"first", "second, longer", "3"} {
			if err := WriteFileAtomic(p, []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
			assertFile(t, p, v)
		}
		assertNoTemp(t, dir, "goal.json")
	})
	t.Run("failed rename keeps target and leaves no temp", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "target")
		// A non-empty directory cannot be replaced by a file rename.
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "old"), []byte("old content"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := WriteFileAtomic(p, []byte("new"), 0o644)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Fatalf("err = %v, want an error naming %s", err, p)
		}
		assertFile(t, filepath.Join(p, "old"), "old content")
		assertNoTemp(t, dir, "target")
	})
	t.Run("parent is a file", func(t *testing.T) {
		dir := t.TempDir()
		f := filepath.Join(dir, "file")
		os.WriteFile(f, []byte("x"), 0o644)
		if err := WriteFileAtomic(filepath.Join(f, "child"), []byte("y"), 0o644); err == nil {
			t.Fatal("write under a regular file succeeded")
		}
		assertFile(t, f, "x")
	})
}

func assertFile(t *testing.T, p, want string) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil || string(got) != want {
		t.Fatalf("%s = %q (%v), want %q", p, got, err, want)
	}
}

func assertNoTemp(t *testing.T, dir, base string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "."+base+".tmp") {
			t.Fatalf("temp file %s left in %s", e.Name(), dir)
		}
	}
}

func TestNewID(t *testing.T) {
	const n = 10000
	re := regexp.MustCompile(`^sub-\d{8}-\d{6}-[0-9a-f]+$`)
	ids := make([]string, n)
	seen := make(map[string]bool, n)
	for i := range ids {
		id := NewID("sub-")
		if !re.MatchString(id) {
			t.Fatalf("id %q has the wrong shape", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q after %d calls", id, i)
		}
		seen[id] = true
		ids[i] = id
	}
	// Ids sort by creation time at second granularity: the timestamp
	// part never goes backwards.
	stamps := make([]string, n)
	for i, id := range ids {
		stamps[i] = id[:len("sub-20060102-150405")]
	}
	if !sort.StringsAreSorted(stamps) {
		t.Fatal("timestamps out of order")
	}
}

func TestNewIDConcurrent(t *testing.T) {
	const workers, per = 16, 500
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				id := NewID("")
				mu.Lock()
				if seen[id] {
					t.Errorf("duplicate %s", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != workers*per {
		t.Fatalf("%d unique ids, want %d", len(seen), workers*per)
	}
}
