package tui

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/internal/store"
)

// memHistory is a History in memory.
type memHistory struct {
	mu      sync.Mutex
	saved   []string
	added   []string
	loadErr error
	addErr  error
}

func (m *memHistory) Load() ([]store.HistoryEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.HistoryEntry
	for _, s := range m.saved {
		out = append(out, store.HistoryEntry{Time: time.Now(), Text: s})
	}
	return out, m.loadErr
}

func (m *memHistory) Add(text string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.addErr != nil {
		return m.addErr
	}
	m.added = append(m.added, text)
	return nil
}

func (m *memHistory) addedSoFar() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.added...)
}

// composerText is the composer's text, read on the UI goroutine.
func (h *harness) composerText() string {
	var s string
	h.app.app.QueueUpdate(func() { s = h.app.composer.GetText() })
	return s
}

// waitComposer waits until the composer holds want.
func (h *harness) waitComposer(want string) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := h.composerText()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("composer holds %q, want %q; screen:\n%s", got, want, h.text())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHistoryRecall: Up on the first line recalls earlier prompts, saved
// ones included, multi-line ones whole; Down goes back, to the draft that
// was being typed.
func TestHistoryRecall(t *testing.T) {
	hist := &memHistory{saved: []string{"first prompt", "two\nlines"}}
	h := start(t, Options{History: hist})
	h.typeText("my draft")
	h.key(tcell.KeyUp)
	h.waitComposer("two\nlines")
	h.waitFor("two", "lines")
	// The cursor is at the end, on the second line: Up moves it to the
	// first line, and the next Up goes on to the older prompt.
	h.key(tcell.KeyUp)
	h.key(tcell.KeyUp)
	h.waitComposer("first prompt")
	h.key(tcell.KeyUp) // nothing older: it stays
	h.key(tcell.KeyDown)
	h.waitComposer("two\nlines")
	h.key(tcell.KeyDown)
	h.waitComposer("my draft")
	h.waitFor("my draft")
	// Down on the draft is an ordinary key.
	h.key(tcell.KeyDown)
	h.typeText("!")
	h.waitComposer("my draft!")

	// Sent prompts join the history, slash commands included, and are
	// saved; a repeat of the newest is kept once.
	h.key(tcell.KeyCtrlC) // clears the draft, which stays in this run's history
	h.waitComposer("")
	h.waitFor("draft cleared (Up brings it back)")
	for range 2 {
		h.typeText("/help")
		h.key(tcell.KeyEnter)
		h.waitFor("Ctrl-R searches")
	}
	// Both reach the store (which drops the repeat: another run may have
	// saved a prompt in between).
	for deadline := time.Now().Add(5 * time.Second); len(hist.addedSoFar()) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("saved %q", hist.addedSoFar())
		}
	}
	if got := hist.addedSoFar(); got[0] != "/help" || got[1] != "/help" {
		t.Fatalf("saved %q", got)
	}
	h.key(tcell.KeyUp)
	h.waitComposer("/help")
	h.key(tcell.KeyUp)
	h.waitComposer("my draft!")
	h.key(tcell.KeyUp)
	h.waitComposer("two\nlines")
	if got := hist.addedSoFar(); len(got) != 2 {
		t.Fatalf("the cleared draft was saved to the history: %q", got)
	}
}

// TestHistoryEmptyComposerUp: with an empty composer Up recalls at once,
// and with no history Up and Down do nothing.
func TestHistoryEmptyComposerUp(t *testing.T) {
	h := start(t, Options{})
	h.key(tcell.KeyUp)
	h.key(tcell.KeyDown)
	h.typeText("/goal")
	h.key(tcell.KeyEnter)
	h.waitFor("no goal; /goal TEXT sets one")
	h.waitComposer("")
	h.key(tcell.KeyUp)
	h.waitComposer("/goal")
}

// TestHistorySearch: Ctrl-R lists the prompts containing what is typed,
// any case, newest first; Enter puts the chosen one in the composer,
// unsent; Esc closes.
func TestHistorySearch(t *testing.T) {
	hist := &memHistory{saved: []string{"fix the parser", "write docs", "Fix the lexer\nand its tests", "ship"}}
	h := start(t, Options{History: hist})
	h.typeText("draft")
	h.key(tcell.KeyCtrlR)
	h.waitFor("search prompts", "ship", "write docs", "Fix the lexer … (+1 lines)")
	h.typeText("FIX")
	s := h.waitFor("search: FIX", "Fix the lexer", "fix the parser")
	if strings.Contains(s, "write docs") || strings.Contains(s, "ship") {
		t.Fatalf("non-matching prompts listed:\n%s", s)
	}
	if strings.Index(s, "Fix the lexer") > strings.Index(s, "fix the parser") {
		t.Errorf("newest match not first:\n%s", s)
	}
	h.key(tcell.KeyDown)
	h.key(tcell.KeyEnter)
	h.waitComposer("fix the parser")
	waitGone(t, h, "search prompts")
	if got := hist.addedSoFar(); len(got) != 0 {
		t.Errorf("choosing a prompt sent it: %q", got)
	}
	if n := len(h.model.Requests()); n != 0 {
		t.Errorf("choosing a prompt sent it to the model: %d requests", n)
	}
	// Down goes on from the chosen prompt, back to the draft.
	h.key(tcell.KeyDown)
	h.waitComposer("write docs")
	h.key(tcell.KeyDown)
	h.key(tcell.KeyDown)
	h.key(tcell.KeyDown)
	h.waitComposer("draft")

	// Esc closes and leaves the composer alone; a search with no match
	// says so, and Enter then changes nothing.
	h.key(tcell.KeyCtrlR)
	h.waitFor("search prompts")
	h.key(tcell.KeyEscape)
	waitGone(t, h, "search prompts")
	h.waitComposer("draft")
	h.key(tcell.KeyCtrlR)
	h.typeText("zzz")
	h.waitFor("no prompt matches")
	h.key(tcell.KeyEnter)
	waitGone(t, h, "search prompts")
	h.waitComposer("draft")
	// Keys reach the composer again.
	h.typeText("!")
	h.waitComposer("draft!")
}

// TestHistoryFailures: a history that cannot be read or written is a
// notice; the prompt still runs, and the failure is told once.
func TestHistoryFailures(t *testing.T) {
	hist := &memHistory{loadErr: errors.New("disk on fire"), addErr: errors.New("read-only home")}
	h := start(t, Options{History: hist})
	h.waitFor("prompt history: disk on fire")
	h.typeText("/goal")
	h.key(tcell.KeyEnter)
	h.waitFor("no goal; /goal TEXT sets one", "not saved to the history: read-only home")
	// A second prompt (a short one, so the first notice stays on screen).
	h.typeText("/nosuch")
	h.key(tcell.KeyEnter)
	s := h.waitFor("unknown command /nosuch")
	if n := strings.Count(s, "read-only home"); n != 1 {
		t.Errorf("the save failure was told %d times:\n%s", n, s)
	}
	// It is still recalled in this run.
	h.key(tcell.KeyUp)
	h.waitComposer("/nosuch")
}
