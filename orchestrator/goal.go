package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/roles"
)

// Goal states and stop reasons; see [events.GoalState].
const (
	GoalActive  = events.GoalActive
	GoalStopped = events.GoalStopped

	ReasonDone      = events.ReasonDone
	ReasonBlocked   = events.ReasonBlocked
	ReasonMaxTurns  = events.ReasonMaxTurns
	ReasonCancelled = events.ReasonCancelled
)

// blockedRepeats is how many identical blocked reports end a goal.
const blockedRepeats = 3

// GoalState is the saved progress of a goal; it lives in events so front
// ends show it without importing the coordinator.
type GoalState = events.GoalState

// GoalResult is the end of a goal run.
type GoalResult struct {
	GoalState
	// Text is the executor's last answer; Usage sums every turn, Total
	// adds the subagents it started.
	Text  string
	Usage providers.Usage
	Total providers.Usage
}

// GoalPath is where the current goal of a state directory is saved.
func GoalPath(stateDir string) string { return filepath.Join(stateDir, "goals", "current.json") }

// LoadGoal reads the saved goal; ok is false when there is none.
func LoadGoal(stateDir string) (st GoalState, ok bool, err error) {
	if stateDir == "" {
		return st, false, nil
	}
	data, err := os.ReadFile(GoalPath(stateDir))
	if errors.Is(err, fs.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("load goal: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, false, fmt.Errorf("load goal %s: %w", GoalPath(stateDir), err)
	}
	return st, true, nil
}

func (c *Coordinator) saveGoal(st *GoalState) error {
	st.Updated = time.Now().UTC()
	snap := *st
	c.rt.Sink.Publish(events.Event{Type: events.GoalUpdate, Session: st.SessionID, Goal: &snap})
	if c.rt.StateDir == "" {
		return nil
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("save goal: %w", err)
	}
	if err := store.EnsureIgnored(filepath.Dir(GoalPath(c.rt.StateDir))); err != nil {
		return fmt.Errorf("save goal: %w", err)
	}
	if err := store.WriteFileAtomic(GoalPath(c.rt.StateDir), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save goal: %w", err)
	}
	return nil
}

// CurrentGoal returns the saved goal, if any.
func (c *Coordinator) CurrentGoal() (GoalState, bool, error) { return LoadGoal(c.rt.StateDir) }

// ClearGoal forgets the saved goal (/goal clear). No goal is not an error.
func (c *Coordinator) ClearGoal() error {
	if c.rt.StateDir == "" {
		return nil
	}
	if err := os.Remove(GoalPath(c.rt.StateDir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear goal: %w", err)
	}
	c.rt.Sink.Publish(events.Event{Type: events.GoalUpdate})
	return nil
}

func (c *Coordinator) goalMaxTurns() int {
	if n := c.rt.Settings.GoalMaxTurns; n > 0 {
		return n
	}
	return DefaultGoalMaxTurns
}

// openGoalSession opens the executor session a goal runs in: the
// executor's tools plus goal_status, with the executor's unchanged system
// prompt, because the goal rides in user turns, never in the prefix.
func (c *Coordinator) openGoalSession() (*worker, error) {
	w, err := c.openExecutor(nil, goalStatusTool{})
	if err != nil {
		return nil, fmt.Errorf("start goal session: %w", err)
	}
	return w, nil
}

// Goal works on text until the model reports done through goal_status,
// reports the same blocked state three times, ctx ends, or
// agent.goal_max_turns turns have run. It replaces any saved goal.
func (c *Coordinator) Goal(ctx context.Context, text string) (GoalResult, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return GoalResult{}, errors.New("goal is empty")
	}
	w, err := c.openGoalSession()
	if err != nil {
		return GoalResult{}, err
	}
	defer w.close()
	now := time.Now().UTC()
	st := &GoalState{Goal: text, Status: GoalActive, MaxTurns: c.goalMaxTurns(), SessionID: w.ID(), Transcript: w.path, Started: now}
	if err := c.saveGoal(st); err != nil {
		return GoalResult{GoalState: *st}, err
	}
	return c.goalLoop(ctx, w, st, goalFirstTurn(text))
}

// ResumeGoal continues the saved goal in a new executor session that
// carries the old session's history, so the model picks up where it left
// off. A goal stopped at the turn cap gets a fresh allowance of turns.
func (c *Coordinator) ResumeGoal(ctx context.Context) (GoalResult, error) {
	st, ok, err := LoadGoal(c.rt.StateDir)
	if err != nil {
		return GoalResult{}, err
	}
	if !ok {
		return GoalResult{}, errors.New("no saved goal to resume")
	}
	if st.Status == GoalDone {
		return GoalResult{GoalState: st}, fmt.Errorf("goal %q is already done; /goal clear forgets it", text.Clip(st.Goal, 60))
	}
	var history []providers.Message
	if st.Transcript != "" {
		_, msgs, err := store.Read(st.Transcript)
		if err != nil {
			return GoalResult{GoalState: st}, fmt.Errorf("resume goal: %w", err)
		}
		history = completeTurns(msgs)
	}
	w, err := c.openGoalSession()
	if err != nil {
		return GoalResult{GoalState: st}, err
	}
	defer w.close()
	if err := w.Restore(history); err != nil {
		return GoalResult{GoalState: st}, fmt.Errorf("resume goal: %w", err)
	}
	// Restore keeps history in memory only; copy it into the new
	// transcript so a later resume finds it there.
	if w.transcript != nil {
		for _, m := range history {
			if m.Role == providers.RoleSystem {
				continue
			}
			if err := w.transcript.Append(m); err != nil {
				return GoalResult{GoalState: st}, fmt.Errorf("resume goal: %w", err)
			}
		}
	}
	if st.Reason == ReasonMaxTurns || st.MaxTurns <= st.Turns {
		st.MaxTurns = st.Turns + c.goalMaxTurns()
	}
	if st.Status == GoalBlocked {
		st.BlockedCount, st.BlockedKey = 0, ""
	}
	st.Status, st.Reason = GoalActive, ""
	st.SessionID, st.Transcript = w.ID(), w.path
	if err := c.saveGoal(&st); err != nil {
		return GoalResult{GoalState: st}, err
	}
	first := goalFirstTurn(st.Goal)
	if len(history) > 0 {
		first = goalContinueTurn(&st)
	}
	return c.goalLoop(ctx, w, &st, first)
}

// completeTurns drops a trailing assistant message whose tool calls have
// no results (a crash mid-step), since providers reject such a history.
func completeTurns(msgs []providers.Message) []providers.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != providers.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		if len(msgs)-1-i < len(m.ToolCalls) {
			return msgs[:i]
		}
		break
	}
	return msgs
}

func (c *Coordinator) goalLoop(ctx context.Context, w *worker, st *GoalState, turn string) (GoalResult, error) {
	res := GoalResult{}
	acc := w.fam.beginRun()
	finish := func(status, reason string, runErr error) (GoalResult, error) {
		st.Status, st.Reason = status, reason
		err := c.saveGoal(st)
		res.GoalState = *st
		res.Total = res.Usage
		res.Total.Add(acc.get())
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: w.ID(), Role: roles.Executor,
			Text: fmt.Sprintf("goal %s after %d turns (%s)", status, st.Turns, reason)})
		u := res.Usage
		c.rt.Sink.Publish(events.Event{Type: events.Done, Session: w.ID(), Role: roles.Executor, Usage: &u, Text: status})
		return res, errors.Join(runErr, err)
	}
	for {
		if st.Turns >= st.MaxTurns {
			return finish(GoalStopped, ReasonMaxTurns, nil)
		}
		// Checked before sending, so a Ctrl-C between turns neither counts
		// a turn that never ran nor leaves its user message in the history.
		if err := ctx.Err(); err != nil {
			return finish(GoalStopped, ReasonCancelled, err)
		}
		out, err := w.Send(ctx, turn)
		st.Turns++
		res.Usage.Add(out.Usage)
		res.Text = out.Text
		if err != nil {
			if ctx.Err() != nil {
				return finish(GoalStopped, ReasonCancelled, err)
			}
			// A provider failure leaves the goal active, to resume later.
			return finish(GoalActive, "", err)
		}
		rep := GoalReport{Status: GoalContinue, Summary: text.Clip(text.OneLine(out.Text), 500)}
		if out.HaltTool == GoalStatusTool {
			if json.Unmarshal([]byte(out.HaltResult), &rep) != nil {
				rep = GoalReport{Status: GoalContinue}
			}
		}
		st.Last = &rep
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: w.ID(), Role: roles.Executor,
			Text: fmt.Sprintf("goal turn %d/%d: %s: %s", st.Turns, st.MaxTurns, rep.Status, text.Clip(text.OneLine(rep.Summary), 200))})
		switch rep.Status {
		case GoalDone:
			return finish(GoalDone, ReasonDone, nil)
		case GoalBlocked:
			if key := normalizeBlocked(rep.Summary); key == st.BlockedKey {
				st.BlockedCount++
			} else {
				st.BlockedKey, st.BlockedCount = key, 1
			}
			if st.BlockedCount >= blockedRepeats {
				return finish(GoalBlocked, ReasonBlocked, nil)
			}
		}
		if err := c.saveGoal(st); err != nil {
			res.GoalState = *st
			return res, err
		}
		turn = goalContinueTurn(st)
	}
}

const goalInstructions = "End every turn by calling goal_status: status done when the goal is met (with evidence), " +
	"blocked when you cannot make progress without the user (say exactly what blocks you), " +
	"continue when you made progress and there is more to do."

func goalFirstTurn(goal string) string {
	return "Goal:\n" + goal + "\n\nWork toward this goal; it may take several turns. " + goalInstructions
}

// goalContinueTurn is the user turn that keeps a goal going. It carries
// the goal and its state, so dynamic context stays out of the prefix.
func goalContinueTurn(st *GoalState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Continue working on the goal (turn %d of at most %d).\n\nGoal:\n%s\n\n", st.Turns+1, st.MaxTurns, st.Goal)
	switch {
	case st.Last == nil:
		b.WriteString("No status has been reported yet.\n\n")
	case st.Last.Status == GoalBlocked:
		fmt.Fprintf(&b, "Last status: blocked (%d time(s) in a row): %s\nIf you really cannot go on, report blocked again; otherwise find another way forward.\n\n",
			st.BlockedCount, text.OneLine(st.Last.Summary))
	default:
		fmt.Fprintf(&b, "Last status: %s: %s\n\n", st.Last.Status, text.OneLine(st.Last.Summary))
	}
	b.WriteString(goalInstructions)
	return b.String()
}

// normalizeBlocked makes blocked reports comparable: lower case, no
// punctuation, single spaces.
func normalizeBlocked(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsPunct(r) || unicode.IsSymbol(r):
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
