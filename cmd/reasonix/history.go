package main

import (
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
)

// history is the prompt history of the project a is working in:
// <home>/history/<workspace key>.jsonl, shared by chat and run.
func (a *app) history() *store.History {
	return store.NewHistory(store.HistoryPath(a.loaded.Home, a.workspace), 0)
}

// rememberPrompt saves text to h; a failure is a notice, never a failed
// run.
func rememberPrompt(h *store.History, text string, publish func(events.Event)) {
	if h == nil {
		return
	}
	if err := h.Add(text); err != nil {
		publish(events.Event{Type: events.Notice, Text: "the prompt was not saved to the history: " + err.Error()})
	}
}

// lateHistory is the TUI's prompt history. The TUI is built before
// assemble (which needs its plan approver) finds the home and workspace;
// set fills it in before the TUI runs and loads it.
type lateHistory struct{ h *store.History }

func (l *lateHistory) set(h *store.History) { l.h = h }

func (l *lateHistory) Load() ([]store.HistoryEntry, error) {
	if l.h == nil {
		return nil, nil
	}
	return l.h.Load()
}

func (l *lateHistory) Add(text string) error {
	if l.h == nil {
		return nil
	}
	return l.h.Add(text)
}
