package main

import (
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EQuotedAtPathWithSpaces: a file whose path has spaces is attached
// when quoted, @"my docs/a b.md" as Claude Code writes it, in a headless
// run; unquoted, it stays text as before.
func TestE2EQuotedAtPathWithSpaces(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "Read it."})
	e.write("my docs/a b.md", "SPACED-FILE-CONTENT\n")
	r := e.run("", "run", `summarise @"my docs/a b.md", please`)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0]), "SPACED-FILE-CONTENT") {
		t.Fatalf("the quoted @path was not attached")
	}
}

// TestTUIAtMenuQuotesPathsWithSpaces: the @ menu takes a folder or file
// whose name has spaces as a quoted reference, goes on listing inside the
// quoted folder, closes the quote on the file, and what it wrote attaches
// the file.
func TestTUIAtMenuQuotesPathsWithSpaces(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "Got the spaced file."})
	e.write("my docs/a b.md", "SPACED-FILE-CONTENT\n")
	e.write("my docs/other.md", "other\n")
	tt := startTUI(t, e, "chat")
	tt.tmux("send-keys", "-t", "rx", "-l", "read @my")
	tt.waitFor("my docs/")
	tt.keys("Tab")
	tt.waitFor(`read @"my docs/`, "a b.md", "other.md")
	tt.tmux("send-keys", "-t", "rx", "-l", "a")
	tt.keys("Tab")
	tt.waitFor(`read @"my docs/a b.md"`)
	tt.keys("Enter")
	tt.waitFor("Got the spaced file.")
	reqs := e.srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0]), "SPACED-FILE-CONTENT") {
		t.Fatalf("the file the menu quoted was not attached")
	}
	tt.quit()
}
