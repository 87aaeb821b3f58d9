package permission

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/tools"
)

// fakeClock is a settable clock for the write window.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type windowFixture struct {
	t     *testing.T
	gate  *Gate
	ap    *ScriptedApprover
	clock *fakeClock
	ws    string
	log   string
}

func newWindowFixture(t *testing.T, allow, ask, deny []string) *windowFixture {
	t.Helper()
	ws := t.TempDir()
	f := &windowFixture{t: t, ap: &ScriptedApprover{Answers: []Answer{AllowOnce}},
		clock: &fakeClock{t: time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)}, ws: ws,
		log: filepath.Join(t.TempDir(), "permissions.log")}
	f.gate = NewGate(GateOptions{Policy: mustPolicy(t, "", allow, ask, deny), Approver: f.ap,
		Workspace: ws, LogPath: f.log, Now: f.clock.now})
	return f
}

func (f *windowFixture) edit(g *Gate, tool, p string) tools.Verdict {
	f.t.Helper()
	args := pathArgs(p)
	if tool == "move_file" {
		args = jsonArgs("source", p, "destination", p+".moved")
	}
	return g.Authorize(context.Background(), tools.Invocation{Session: "s1", Role: "executor",
		Tool: fakeTool{name: tool}, Args: args})
}

// prompts is the number of approval prompts so far.
func (f *windowFixture) prompts() int { return len(f.ap.Requests()) }

// lastBy is the "by" of the newest decision log line.
func (f *windowFixture) lastBy() string {
	f.t.Helper()
	file, err := os.Open(f.log)
	if err != nil {
		f.t.Fatal(err)
	}
	defer file.Close()
	var e logEntry
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			f.t.Fatal(err)
		}
	}
	return e.By
}

func TestWriteWindowAllowsEditsWithoutPromptUntilExpiry(t *testing.T) {
	f := newWindowFixture(t, nil, nil, nil)
	if v := f.edit(f.gate, "write_file", "a.go"); !v.Allow || f.prompts() != 1 {
		t.Fatalf("before the window: allow %v, prompts %d; want a prompt", v.Allow, f.prompts())
	}
	f.gate.OpenWriteWindow(10*time.Minute, nil)
	if _, open := f.gate.WriteWindowOpen(); !open {
		t.Fatal("window not reported open")
	}
	// Every Edit-family tool, from any view of the gate (a subagent's).
	sub := f.gate.ForRole("general", false)
	for _, tool := range []string{"write_file", "edit_file", "multi_edit", "move_file"} {
		if v := f.edit(sub, tool, "pkg/b.go"); !v.Allow {
			t.Fatalf("%s refused in the window: %s", tool, v.Message)
		}
		if by := f.lastBy(); by != "plan-window" {
			t.Errorf("%s logged by %q, want plan-window", tool, by)
		}
	}
	if f.prompts() != 1 {
		t.Fatalf("prompts in the window = %d, want none beyond the first", f.prompts()-1)
	}

	f.clock.advance(10*time.Minute - time.Second)
	if f.edit(f.gate, "edit_file", "c.go"); f.prompts() != 1 {
		t.Fatal("prompted before the window ended")
	}
	f.clock.advance(time.Second)
	if _, open := f.gate.WriteWindowOpen(); open {
		t.Fatal("window still open after its duration")
	}
	if v := f.edit(f.gate, "edit_file", "c.go"); !v.Allow || f.prompts() != 2 {
		t.Fatalf("after expiry: allow %v, prompts %d; want a fresh prompt", v.Allow, f.prompts())
	}
	if by := f.lastBy(); by != "user" {
		t.Errorf("after expiry logged by %q, want user", by)
	}
}

func TestWriteWindowCoversOnlyListedFiles(t *testing.T) {
	f := newWindowFixture(t, nil, nil, nil)
	f.gate.OpenWriteWindow(time.Minute, []string{"greet.go", "./docs/", "internal/*.go", "../escape.go", filepath.Join(f.ws, "abs.txt")})
	for _, p := range []string{"greet.go", "docs/a/b.md", "internal/x.go", "abs.txt", filepath.Join(f.ws, "greet.go")} {
		before := f.prompts()
		if v := f.edit(f.gate, "write_file", p); !v.Allow || f.prompts() != before {
			t.Errorf("listed %s: allow %v, prompted %v", p, v.Allow, f.prompts() != before)
		}
	}
	for _, p := range []string{"other.go", "sub/greet.go", "internal/deep/x.go", "../escape.go", "docsx/a.md"} {
		before := f.prompts()
		f.edit(f.gate, "write_file", p)
		if f.prompts() != before+1 {
			t.Errorf("unlisted %s was not prompted", p)
		}
	}
	// A move is covered only when both ends are.
	before := f.prompts()
	f.gate.Authorize(context.Background(), tools.Invocation{Tool: fakeTool{name: "move_file"},
		Args: jsonArgs("source", "greet.go", "destination", "elsewhere.go")})
	if f.prompts() != before+1 {
		t.Error("a move to an unlisted file was not prompted")
	}
}

func TestWriteWindowKeepsDenyAskPlanAndBash(t *testing.T) {
	f := newWindowFixture(t, nil, []string{"Edit(secrets/**)"}, []string{"Edit(vendor/**)"})
	f.gate.OpenWriteWindow(time.Hour, nil)
	if v := f.edit(f.gate, "write_file", "vendor/x.go"); v.Allow || f.prompts() != 0 {
		t.Fatalf("deny rule: allow %v prompts %d", v.Allow, f.prompts())
	}
	if f.edit(f.gate, "write_file", "secrets/key"); f.prompts() != 1 {
		t.Fatal("an explicit ask rule was skipped by the window")
	}
	if v := f.edit(f.gate.ForRole("planner", true), "write_file", "a.go"); v.Allow {
		t.Fatal("plan mode lifted by the window")
	}
	if f.gate.Authorize(context.Background(), bashInv("npm install x")); f.prompts() != 2 {
		t.Fatal("bash was covered by the window")
	}
	if f.gate.Authorize(context.Background(), bashInv("rm -rf build")); f.prompts() != 3 {
		t.Fatal("a dangerous command was covered by the window")
	}
	// Outside the workspace (allowed by confinement elsewhere) still asks.
	if f.edit(f.gate, "write_file", filepath.Join(t.TempDir(), "out.txt")); f.prompts() != 4 {
		t.Fatal("an edit outside the workspace was covered")
	}
}

func TestWriteWindowClose(t *testing.T) {
	f := newWindowFixture(t, nil, nil, nil)
	f.gate.OpenWriteWindow(time.Hour, nil)
	f.gate.CloseWriteWindow()
	if f.edit(f.gate, "write_file", "a.go"); f.prompts() != 1 {
		t.Fatal("closed window still allowed an edit")
	}
	f.gate.OpenWriteWindow(time.Hour, nil)
	f.gate.OpenWriteWindow(0, nil) // a zero duration closes, too
	if f.edit(f.gate, "write_file", "a.go"); f.prompts() != 2 {
		t.Fatal("zero-length window allowed an edit")
	}
}
