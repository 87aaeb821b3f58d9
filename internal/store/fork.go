package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/reasonix/reasonix/providers"
)

// ErrForkInput marks a fork refused for what it was asked (a session
// that does not load, a turn out of range), not for a failed write.
var ErrForkInput = errors.New("fork")

// ForkReport says what Fork made.
type ForkReport struct {
	// ID and Path are the new session's; From is "ID" or "ID@TURN".
	ID, Path, From string
	Turns          int
	// Notices say what the load repaired or left out (the lines after a
	// change made outside Reasonix).
	Notices []string
}

// Fork writes a new session, sealed with s, beside the session file at
// path, holding its conversation as it stood before user turn at
// (all of it when at is 0). mode says what to take of a session changed
// outside Reasonix: the lines before the first that differs
// (KeepSealed) or the file as it stands (AcceptModified). The
// original is untouched; the fork is made whole through Create's rename
// and synced, directory included, so its id, once shown, survives a
// power cut.
func (s *Seals) Fork(path string, at int, mode LoadMode) (*ForkReport, error) {
	l, err := s.Load(path, mode)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrForkInput, err)
	}
	msgs := l.Messages
	if at != 0 {
		turns := Turns(msgs)
		if at < 1 || at > turns {
			return nil, fmt.Errorf("%w: session %s has %d turn(s); --at must be between 1 and %d", ErrForkInput, l.Header.ID, turns, turns)
		}
		msgs = msgs[:TurnStart(msgs, at)]
	}
	id := NewID("e-")
	title := l.Meta.Title
	if title == "" {
		title = l.Header.Title
	}
	from := l.Header.ID
	if at != 0 {
		from = fmt.Sprintf("%s@%d", l.Header.ID, at)
	}
	first := make([]any, 0, len(msgs)+1)
	for _, m := range msgs {
		if m.Role == providers.RoleSystem {
			continue // the resumed session writes its own system prompt
		}
		first = append(first, m)
	}
	first = append(first, Meta{Type: TypeMeta, Updated: time.Now().UTC(), Title: "fork of " + title, Model: l.Meta.Model, Turns: Turns(msgs)})
	t, err := s.Create(filepath.Dir(path), Header{ID: id, Role: l.Header.Role, Model: l.Header.Model, Cwd: l.Header.Cwd,
		Title: "fork of " + title, ForkOf: from}, first...)
	if err != nil {
		return nil, err
	}
	err = t.Sync()
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return &ForkReport{ID: id, Path: t.Path(), From: from, Turns: Turns(msgs), Notices: l.Notices}, nil
}
