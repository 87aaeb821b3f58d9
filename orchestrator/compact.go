package orchestrator

import (
	"fmt"
	"time"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/internal/store"
)

// onCompact archives what a compaction replaced beside the session file
// and records the compacted history in it, so a resumed session starts
// from the compacted history and nothing is lost. Without a state
// directory there is nothing to write.
func (w *worker) onCompact(c agents.Compaction) error {
	if w.log == nil {
		return nil
	}
	return w.log.compact(c)
}

// compact writes the archive, then the record, and syncs. Call without
// l.mu held.
func (l *sessionLog) compact(c agents.Compaction) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, err := l.file()
	if err != nil {
		return err
	}
	rec := store.Compaction{Type: store.TypeCompaction, Time: time.Now().UTC(), BeforeTokens: c.BeforeTokens,
		AfterTokens: c.AfterTokens, Pruned: c.Pruned, Folded: c.Folded, Messages: c.Messages}
	// The archive first: a crash between the two leaves the originals
	// archived and the history uncompacted, never the reverse.
	if err := store.Archive(t.Path(), rec, c.Archived); err != nil {
		return err
	}
	if err := t.Record(rec); err != nil {
		return err
	}
	return t.Sync()
}

// restate is the goal a digest must carry, whatever the model wrote.
func (w *worker) restate() string {
	g := w.goalState()
	if g == nil || g.Goal == "" {
		return ""
	}
	return fmt.Sprintf("Goal (%s, turn %d of %d): %s", g.Status, g.Turns, g.MaxTurns, g.Goal)
}
