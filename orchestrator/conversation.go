package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

// Conversation is one executor session kept open across user turns, for
// interactive front ends. Its tools include goal_status from the start,
// so a /goal can run inside it without changing its cached prefix.
type Conversation struct {
	c  *Coordinator
	mu sync.Mutex // one turn at a time: a session is not safe for concurrent Sends
	w  *worker
	// extNames are the extension tools the session opened with; sent is
	// set once a turn ran (or the session was resumed with history).
	extNames []string
	sent     atomic.Bool
}

// used reports whether the conversation has anything of its own that
// opening it again would lose: a turn ran (or it was resumed with
// history), or something waits for its next turn (a note) or was saved
// (its file exists).
func (cv *Conversation) used() bool {
	return cv.sent.Load() || len(cv.w.notesSnapshot()) > 0 || cv.w.log != nil && cv.w.log.begun()
}

func toolNames(ts []tools.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name()
	}
	return out
}

func sameNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Converse opens an interactive executor session.
func (c *Coordinator) Converse() (*Conversation, error) { return c.converse("") }

// converse opens an interactive executor session under id, or a new id
// when it is "".
func (c *Coordinator) converse(id string) (*Conversation, error) {
	names := toolNames(c.extensionTools())
	w, err := c.openGoalSessionWith(nil, id, "")
	if err != nil {
		return nil, err
	}
	c.settleToolChanges()
	return &Conversation{c: c, w: w, extNames: names}, nil
}

// ID returns the session id.
func (cv *Conversation) ID() string { return cv.w.ID() }

// Send runs one user turn.
func (cv *Conversation) Send(ctx context.Context, text string) (Result, error) {
	return cv.SendOn(ctx, text, "", "")
}

// SendOn runs one user turn on the model modelRef ("" is the
// conversation's own), which the custom command named by command asks
// for. Only this turn goes there: the conversation's model, its prefix
// and what its session file saves are unchanged for the turns after it.
func (cv *Conversation) SendOn(ctx context.Context, text, modelRef, command string) (Result, error) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.sent.Store(true)
	defer cv.c.borrowModel(cv.w, modelRef, command)()
	return cv.c.run(ctx, cv.w, earlierWork(cv.w.takeNotes(), text))
}

// Note records something that happened outside the conversation since
// its last turn (a person's ! line, a skill run as a subagent, an
// executed plan). The next turn carries it in front of its text, so "fix
// what the review found" works and the cached prefix is untouched. Notes
// are saved with the session's state, so the next turn may come from
// another process (`reasonix run --continue`).
func (cv *Conversation) Note(text string) {
	cv.w.addNote(text)
	if cv.w.log != nil {
		if err := cv.w.log.EndStep(); err != nil {
			cv.c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: cv.ID(),
				Text: "the note for the next turn was not saved: " + err.Error()})
		}
	}
}

// checkpointNextTurn checkpoints the workspace for the conversation's
// next user turn, before work done outside the conversation (a plan run)
// whose record that turn will carry: rewinding to it restores the files
// as they were before that work.
func (cv *Conversation) checkpointNextTurn(ctx context.Context) {
	w := cv.w
	if w.fam == nil || w.fam.turn == nil || w.log == nil {
		return
	}
	w.checkpointer(w.log.turnCount() + 1)(ctx)
}

// earlierWork puts notes in front of a turn's text.
func earlierWork(notes []string, turn string) string {
	if len(notes) == 0 {
		return turn
	}
	var b strings.Builder
	b.WriteString("<earlier-work>\nSince your last turn, this happened outside this conversation:\n")
	for _, r := range notes {
		b.WriteString("\n- " + strings.ReplaceAll(r, "\n", "\n  ") + "\n")
	}
	b.WriteString("</earlier-work>\n\n")
	b.WriteString(turn)
	return b.String()
}

// Goal pursues text inside this conversation, with the same stopping rules
// as Coordinator.Goal, and saves its state under the conversation's id.
func (cv *Conversation) Goal(ctx context.Context, text string) (GoalResult, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return GoalResult{}, errors.New("goal is empty")
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.sent.Store(true)
	st := &GoalState{Goal: text, Status: GoalActive, MaxTurns: cv.c.goalMaxTurns(), SessionID: cv.w.ID(),
		Transcript: cv.w.path, Started: time.Now().UTC()}
	if err := cv.c.saveGoal(cv.w, st); err != nil {
		return GoalResult{GoalState: *st}, fmt.Errorf("start goal: %w", err)
	}
	return cv.c.goalLoop(ctx, cv.w, st, goalFirstTurn(text))
}

// ResumeGoal continues this conversation's goal (/goal resume).
func (cv *Conversation) ResumeGoal(ctx context.Context) (GoalResult, error) {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.sent.Store(true)
	return cv.c.resumeGoal(ctx, cv.w)
}

// CurrentGoal returns this conversation's goal, if it has one.
func (cv *Conversation) CurrentGoal() (GoalState, bool) {
	g := cv.w.goalState()
	if g == nil {
		return GoalState{}, false
	}
	return *g, true
}

// ClearGoal forgets this conversation's goal. It waits for a running turn.
func (cv *Conversation) ClearGoal() error {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.w.setGoal(nil)
	cv.c.rt.Sink.Publish(events.Event{Type: events.GoalUpdate, Session: cv.w.ID()})
	if cv.w.log == nil {
		return nil
	}
	return cv.w.log.EndStep()
}

// Close closes the session's transcript. It waits for a running turn to
// end (cancel its context first), so the turn's last messages reach the
// transcript instead of failing against a closed file.
func (cv *Conversation) Close() {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.w.close()
}
