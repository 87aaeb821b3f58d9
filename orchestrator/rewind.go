package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/checkpoint"
	"github.com/reasonix/reasonix/internal/store"
)

// RewindOptions say what to rewind.
type RewindOptions struct {
	// Path is the session file.
	Path string
	// To is the user turn to go back to: the state just before it was
	// sent (1 is the start). 0 means the last turn.
	To int
	// Files and Conversation choose what is restored; both false means
	// both.
	Files, Conversation bool
	// Undo reverts the newest rewind still in effect instead.
	Undo bool
	// Checkpoints opens the workspace's checkpoint store.
	Checkpoints func() (*checkpoint.Store, error)
	// Seals keeps the session files' seals: a file changed outside
	// Reasonix is refused (nil checks nothing).
	Seals *store.Seals
}

// RewindReport says what a rewind did.
type RewindReport struct {
	Session string
	// To is the turn gone back to; Turns how many turns the session had.
	To, Turns int
	// Conversation is set when the conversation was cut back.
	Conversation bool
	// Files is the workspace restore, nil when files were not touched;
	// NoChanges is set when no turn from To on changed anything, so
	// there was nothing to restore.
	Files     *checkpoint.RestoreReport
	NoChanges bool
	Undone    bool
}

// Result is r as the event payload front ends show.
func (r *RewindReport) Result() events.RewindResult {
	out := events.RewindResult{Session: r.Session, To: r.To, Turns: r.Turns, Conversation: r.Conversation,
		Undone: r.Undone, NoChanges: r.NoChanges}
	if f := r.Files; f != nil {
		out.Restored, out.Created, out.Removed, out.Kept = f.Restored, f.Created, f.Removed, f.Kept
	}
	return out
}

// Rewind restores a session's conversation and/or the workspace to the
// moment before user turn To, or undoes the newest rewind. It needs no
// model. Every rewind first checkpoints the workspace, so it can be
// undone; the session file only grows (a rewind is a record).
func Rewind(ctx context.Context, o RewindOptions) (*RewindReport, error) {
	l, err := o.Seals.Load(o.Path, store.Refuse)
	if err != nil {
		return nil, err
	}
	if l.Header.Parent != "" {
		return nil, fmt.Errorf("session %s is a subagent of %s; rewind that one", l.Header.ID, l.Header.Parent)
	}
	if !o.Files && !o.Conversation {
		o.Files, o.Conversation = true, true
	}
	t, err := store.Open(l)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	rep := &RewindReport{Session: l.Header.ID, Turns: store.Turns(l.Messages)}
	if o.Undo {
		if len(l.Rewinds) == 0 {
			return nil, fmt.Errorf("session %s has no rewind to undo", l.Header.ID)
		}
		return rep, undoRewind(ctx, o, l, t, rep)
	}
	if rep.Turns == 0 {
		return nil, fmt.Errorf("session %s has no turns to rewind", l.Header.ID)
	}
	to := o.To
	if to == 0 {
		to = rep.Turns
	}
	if to < 1 || to > rep.Turns {
		return nil, fmt.Errorf("session %s has %d turn(s); --to must be between 1 and %d", l.Header.ID, rep.Turns, rep.Turns)
	}
	rep.To = to
	mark := store.Mark{Type: store.TypeRewind, Time: time.Now().UTC(), Turn: to, Keep: rep.Turns}
	if o.Files {
		// The first checkpoint at or after turn To holds the files as they
		// were before any change from that turn on.
		var cp *store.Mark
		for i := range l.Checkpoints {
			if c := &l.Checkpoints[i]; c.Turn >= to && (cp == nil || c.Turn < cp.Turn) {
				cp = c
			}
		}
		if cp == nil {
			rep.NoChanges = true
		} else {
			if o.Checkpoints == nil {
				return nil, errors.New("no checkpoint store in this run")
			}
			st, err := o.Checkpoints()
			if err != nil {
				return nil, err
			}
			r, err := st.Restore(ctx, cp.Checkpoint, checkpoint.Labels{Session: l.Header.ID, Turn: to,
				Note: fmt.Sprintf("before rewinding %s to turn %d", l.Header.ID, to)})
			if errors.Is(err, checkpoint.ErrNotFound) {
				return nil, fmt.Errorf("the checkpoint taken in turn %d is gone (pruned: a workspace keeps its newest %d); rewind the conversation only with --conversation-only", cp.Turn, keepCheckpoints)
			}
			rep.Files = r
			if r != nil {
				mark.Undo = r.Undo
			}
			if err != nil {
				// Record what was done, so --undo can still revert it.
				mark.Files = true
				_ = t.Record(mark)
				return rep, err
			}
			mark.Files = true
		}
	}
	if o.Conversation {
		mark.Keep = to - 1
		rep.Conversation = true
	}
	if err := t.Record(mark); err != nil {
		return rep, err
	}
	return rep, t.Sync()
}

// undoRewind reverts the newest rewind in effect: its files from the
// checkpoint taken just before it, its conversation by an unrewind record.
func undoRewind(ctx context.Context, o RewindOptions, l *store.Loaded, t *store.Transcript, rep *RewindReport) error {
	last := l.Rewinds[len(l.Rewinds)-1]
	rep.To, rep.Undone = last.Turn, true
	if last.Undo != "" {
		if o.Checkpoints == nil {
			return errors.New("no checkpoint store in this run")
		}
		st, err := o.Checkpoints()
		if err != nil {
			return err
		}
		r, err := st.Restore(ctx, last.Undo, checkpoint.Labels{Session: l.Header.ID, Note: "before undoing a rewind"})
		rep.Files = r
		if err != nil {
			return err
		}
	}
	rep.Conversation = true
	if err := t.Record(store.Mark{Type: store.TypeUnrewind, Time: time.Now().UTC()}); err != nil {
		return err
	}
	return t.Sync()
}
