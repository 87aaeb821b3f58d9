package orchestrator

import (
	"context"
	"strings"

	"fmt"
	"time"

	"github.com/reasonix/reasonix/events"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/internal/store"
)

// onCompact archives what a compaction replaced beside the session file
// and records the compacted history in it, so a resumed session starts
// from the compacted history and nothing is lost. Without a state
// directory there is nothing to write.
func (w *worker) onCompact(c agents.Compaction) (string, error) {
	if w.log == nil {
		return "", nil
	}
	return w.log.compact(c)
}

// compact writes the archive, then the record, and syncs. Call without
// l.mu held.
func (l *sessionLog) compact(c agents.Compaction) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, err := l.file()
	if err != nil {
		return "", err
	}
	rec := store.Compaction{Type: store.TypeCompaction, Time: time.Now().UTC(), BeforeTokens: c.BeforeTokens,
		AfterTokens: c.AfterTokens, Pruned: c.Pruned, Folded: c.Folded, Messages: c.Messages}
	// The archive first: a crash between the two leaves the originals
	// archived and the history uncompacted, never the reverse.
	if err := store.Archive(t.Path(), rec, c.Archived); err != nil {
		return "", err
	}
	if err := t.Record(rec); err != nil {
		return "", err
	}
	return store.ArchivePath(t.Path()), t.Sync()
}

// restate is the goal a digest must carry, whatever the model wrote.
func (w *worker) restate() string {
	g := w.goalState()
	if g == nil || g.Goal == "" {
		return ""
	}
	return fmt.Sprintf("Goal (%s, turn %d of %d): %s", g.Status, g.Turns, g.MaxTurns, g.Goal)
}

// Compact compacts the conversation's history now (/compact [focus]); the
// compaction is a Compacted event. It waits for a running turn.
func (cv *Conversation) Compact(ctx context.Context, focus string) (agents.Compaction, error) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.w.Compact(ctx, focus)
}

// Context reports how full the conversation's window is, with the system
// prompt split into the role's prompt, the rules and the skill index.
func (cv *Conversation) Context() events.ContextInfo {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	info := cv.w.ContextWindow()
	p, err := cv.c.Prefix(cv.w.Role())
	if err != nil || len(p.System) == 0 || len(info.Parts) == 0 || info.Parts[0].Name != "system" {
		return info
	}
	sys := info.Parts[0].Tokens
	share := func(n int) int { return int(int64(sys) * int64(n) / int64(len(p.System))) }
	rules, skills := share(len(p.Rules)), share(len(p.SkillIndex))
	parts := []events.ContextPart{{Name: "system", Tokens: max(sys-rules-skills, 0)}, {Name: "rules", Tokens: rules},
		{Name: "skills", Tokens: skills}}
	info.Parts = append(parts, info.Parts[1:]...)
	return info
}

// Compact compacts the conversation now; see [Conversation.Compact].
// "/compact [focus]" sent as a turn does the same in every front end.
func (e *Engine) Compact(ctx context.Context, focus string) error {
	return e.track(ctx, func(ctx context.Context) error { return e.compact(ctx, e.conversation(), focus) })
}

func (e *Engine) compact(ctx context.Context, conv *Conversation, focus string) error {
	c, err := conv.Compact(ctx, focus)
	if err == nil && c.Folded+c.Pruned == 0 {
		e.c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: conv.ID(),
			Text: "nothing to compact: the conversation has no earlier work to fold"})
	}
	return err
}

// ContextSummary is a window's fill on one line, with its parts: what
// "/context" sent as a turn publishes.
func ContextSummary(info events.ContextInfo) string {
	var b strings.Builder
	if info.Limit > 0 {
		fmt.Fprintf(&b, "context: %d of %d tokens (%d%%)", info.Used, info.Limit, info.Percent)
	} else {
		fmt.Fprintf(&b, "context: %d tokens; the window is unknown (context_window = 0), so nothing compacts on its own; /compact still folds", info.Used)
	}
	for i, p := range info.Parts {
		sep := ", "
		if i == 0 {
			sep = "; estimated parts: "
		}
		fmt.Fprintf(&b, "%s%s ~%d", sep, p.Name, p.Tokens)
	}
	return b.String()
}

// Context reports how full the conversation's window is (/context).
func (e *Engine) Context() events.ContextInfo { return e.conversation().Context() }
