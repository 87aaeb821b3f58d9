package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EDemoHeadless: `reasonix demo --headless` runs the whole scripted
// session with no provider configured: reads, a todo list, the failing
// test, an approved edit, the passing test, and a Markdown answer; the
// user's home gets nothing.
func TestE2EDemoHeadless(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.env = withoutEnv(e.env, "REASONIX_MODEL", "REASONIX_API_KEY")
	r := e.run("", "demo", "--headless")
	if r.code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{"read_file greet.sh", "✗ FAIL: greet.sh printed", "edit_file greet.sh needs approval",
		"edited greet.sh (+1 -1)", "✓ exit code 0", "todos 3/3 done", "demo: done"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("demo trace lacks %q:\n%s", w, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "## Fixed") {
		t.Errorf("demo answer:\n%s", r.stdout)
	}
	if entries, _ := os.ReadDir(e.home); len(entries) != 0 {
		t.Errorf("the demo wrote to the user's home: %v", entries)
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "reasonix-demo-*", "greet", "greet.sh")); len(left) > 0 {
		// Other runs may be in flight; only this one's project must be
		// gone, which its path in the trace names.
		for _, p := range left {
			if strings.Contains(r.stderr, filepath.Dir(p)) {
				t.Errorf("the demo project was left behind: %s", p)
			}
		}
	}
}

// TestTUIDemo: `reasonix demo` is the real TUI: the prompt is sent by
// itself, the edit waits for the person's approval, and the session runs
// to its end.
func TestTUIDemo(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.env = withoutEnv(e.env, "REASONIX_MODEL", "REASONIX_API_KEY")
	tt := startTUI(t, e, "demo")
	tt.waitFor("› The test fails. Find the bug and fix it.", "approve edit_file?", "greet.sh")
	tt.keys("y")
	// The script reports usage shaped like a real run, so the status
	// line shows what a cached prefix saves: 22.9k of 28.7k prompt
	// tokens were cache hits.
	tt.waitFor("✓ edit_file greet.sh")
	s := tt.waitFor("That was a scripted demo", "cache 79%")
	if !strings.Contains(s, "scripted-demo") {
		t.Errorf("status line lacks the demo model:\n%s", s)
	}
	tt.quit()
}
