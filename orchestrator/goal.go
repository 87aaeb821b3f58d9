package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/hooks"
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
	// ReasonPromptBlocked is events.ReasonPromptBlocked.
	ReasonPromptBlocked = events.ReasonPromptBlocked
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

// saveGoal makes st the goal of w's session: it is published as
// GoalUpdate and written to the session file at once (a goal survives a
// crash between turns).
func (c *Coordinator) saveGoal(w *worker, st *GoalState) error {
	st.Updated = time.Now().UTC()
	w.setGoal(st)
	snap := *st
	c.rt.Sink.Publish(events.Event{Type: events.GoalUpdate, Session: w.ID(), Goal: &snap})
	if w.log == nil {
		return nil
	}
	if err := w.log.EndStep(); err != nil {
		return fmt.Errorf("save goal: %w", err)
	}
	return nil
}

// newestGoal finds the newest top-level session whose goal is not done
// (any goal when unfinished is false).
func newestGoal(dir string, unfinished bool) (store.Summary, bool, error) {
	if dir == "" {
		return store.Summary{}, false, nil
	}
	list, _, err := store.List(dir, false)
	if err != nil {
		return store.Summary{}, false, err
	}
	for _, s := range list {
		if s.Goal == "" || (unfinished && s.GoalStatus == GoalDone) {
			continue
		}
		return s, true, nil
	}
	return store.Summary{}, false, nil
}

// CurrentGoal returns the goal of the newest session that has one.
func (c *Coordinator) CurrentGoal() (GoalState, bool, error) {
	s, ok, err := newestGoal(c.SessionsDir(), false)
	if err != nil || !ok {
		return GoalState{}, false, err
	}
	l, err := c.seals.Load(s.Path, store.Refuse)
	if err != nil {
		return GoalState{}, false, err
	}
	if l.Meta.Goal == nil {
		return GoalState{}, false, nil
	}
	return *l.Meta.Goal, true, nil
}

// ClearGoal forgets the goal of the newest session that has one (--goal
// clear); no goal is not an error.
func (c *Coordinator) ClearGoal() error {
	_, err := ClearSavedGoal(c.rt.StateDir, c.rt.Home)
	if err == nil {
		c.rt.Sink.Publish(events.Event{Type: events.GoalUpdate})
	}
	return err
}

// ClearSavedGoal forgets the goal of the newest session under stateDir
// that has one, by appending its state without the goal; it needs no
// model. It reports whether there was a goal. home is the Reasonix home,
// which keeps the sessions' seals: a session file changed outside
// Reasonix is refused, not written back sealed.
func ClearSavedGoal(stateDir, home string) (bool, error) {
	if stateDir == "" {
		return false, nil
	}
	s, ok, err := newestGoal(filepath.Join(stateDir, "sessions"), false)
	if err != nil || !ok {
		return false, err
	}
	l, err := store.NewSeals(home, filepath.Join(stateDir, "sessions")).Load(s.Path, store.Refuse)
	if err != nil {
		return false, err
	}
	t, err := store.Open(l)
	if err != nil {
		return false, err
	}
	m := l.Meta
	m.Type, m.Updated, m.Goal = store.TypeMeta, time.Now().UTC(), nil
	err = t.Record(m)
	if err == nil {
		// On disk before the caller says the goal is cleared: a power
		// cut must not bring it back.
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("clear goal: %w", err)
	}
	return true, nil
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
	return c.openGoalSessionWith(nil, "", "")
}

// openGoalSessionWith is openGoalSession resuming a saved session (when
// r is set), or opening one under id when it is not empty, on modelRef
// ("" is the executor's model).
func (c *Coordinator) openGoalSessionWith(r *resumeState, id, modelRef string) (*worker, error) {
	w, err := c.openExecutorWith(nil, r, id, modelRef, goalStatusTool{})
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
	text, research := goalMode(text)
	st := &GoalState{Goal: text, Status: GoalActive, MaxTurns: c.goalMaxTurns(), SessionID: w.ID(), Transcript: w.path, Started: now}
	if research {
		if st.Research, err = c.startResearchLog(w.ID(), text); err != nil {
			return GoalResult{GoalState: *st}, err
		}
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: w.ID(), Role: roles.Executor,
			Text: "research goal: hypotheses, experiments and results are kept in " + st.Research + " (--simple runs a plain goal)"})
	}
	if err := c.saveGoal(w, st); err != nil {
		return GoalResult{GoalState: *st}, err
	}
	return c.goalLoop(ctx, w, st, goalFirstTurn(text)+c.researchNote(st, true))
}

// ResumeGoal continues the newest unfinished goal in its own session (the
// same id and file, with its history), so the model picks up where it
// left off. A goal stopped at the turn cap gets a fresh allowance.
func (c *Coordinator) ResumeGoal(ctx context.Context) (GoalResult, error) {
	s, ok, err := newestGoal(c.SessionsDir(), true)
	if err != nil {
		return GoalResult{}, err
	}
	if !ok {
		return GoalResult{}, errors.New("no unfinished goal to resume")
	}
	cv, err := c.Resume(s.Path, "")
	if err != nil {
		return GoalResult{}, fmt.Errorf("resume goal: %w", err)
	}
	defer cv.Close()
	return cv.ResumeGoal(ctx)
}

// resumeGoal continues w's goal.
func (c *Coordinator) resumeGoal(ctx context.Context, w *worker) (GoalResult, error) {
	cur := w.goalState()
	if cur == nil {
		return GoalResult{}, errors.New("this session has no goal to resume; /goal TEXT sets one")
	}
	st := *cur
	if st.Status == GoalDone {
		return GoalResult{GoalState: st}, fmt.Errorf("goal %q is already done; /goal clear forgets it", text.Clip(st.Goal, 60))
	}
	if st.Reason == ReasonMaxTurns || st.MaxTurns <= st.Turns {
		st.MaxTurns = st.Turns + c.goalMaxTurns()
	}
	if st.Status == GoalBlocked {
		st.BlockedCount, st.BlockedKey = 0, ""
	}
	st.Status, st.Reason = GoalActive, ""
	st.SessionID, st.Transcript = w.ID(), w.path
	if err := c.saveGoal(w, &st); err != nil {
		return GoalResult{GoalState: st}, err
	}
	first := goalFirstTurn(st.Goal) + c.researchNote(&st, true)
	if len(w.Messages()) > 1 {
		first = goalContinueTurn(&st) + c.researchNote(&st, false)
	}
	return c.goalLoop(ctx, w, &st, first)
}

func (c *Coordinator) goalLoop(ctx context.Context, w *worker, st *GoalState, turn string) (GoalResult, error) {
	res := GoalResult{}
	acc := w.fam.beginRun()
	finish := func(status, reason string, runErr error) (GoalResult, error) {
		st.Status, st.Reason = status, reason
		err := c.saveGoal(w, st)
		res.GoalState = *st
		res.Total = res.Usage
		res.Total.Add(acc.get())
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: w.ID(), Role: roles.Executor,
			Text: fmt.Sprintf("goal %s after %s (%s)", status, text.Plural(st.Turns, "turn"), reason)})
		u := res.Usage
		c.rt.Sink.Publish(events.Event{Type: events.Done, Session: w.ID(), Role: roles.Executor, Usage: &u, Text: status})
		return res, errors.Join(runErr, err)
	}
	first := st.Turns
	// The person's /goal is their prompt: SessionStart and
	// UserPromptSubmit hooks see it (and may add context or block it)
	// once. The turns that keep the goal going are the loop's own, as
	// a Stop hook's continuation is, so they fire neither.
	// The goal is the person's turn for the control-file guard too; its
	// own continuation turns are not, so a change a running goal makes
	// between them is still judged against the goal's start.
	c.personTurnStarts()
	turn, err := c.goalPromptHooks(ctx, w, st, turn)
	if err != nil {
		return finish(GoalStopped, ReasonPromptBlocked, err)
	}
	stop := goalStop{}
	for {
		if st.Turns >= st.MaxTurns {
			if st.Turns > first {
				// The agent stops here too; the cap is the person's, so
				// a Stop hook sees it but cannot lift it.
				if reason, ok := c.goalStopHook(ctx, w, &stop); ok {
					c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: w.ID(), Role: roles.Executor,
						Text: "a Stop hook asked the goal to go on, but it reached its turn cap: " + text.Clip(text.OneLine(reason), 200)})
				}
			}
			return finish(GoalStopped, ReasonMaxTurns, nil)
		}
		// Checked before sending, so a Ctrl-C between turns neither counts
		// a turn that never ran nor leaves its user message in the history.
		if err := ctx.Err(); err != nil {
			return finish(GoalStopped, ReasonCancelled, err)
		}
		send := w.Send
		if st.Turns > first {
			send = w.FollowUp // the storm breaker's window spans the goal's own turns
		}
		out, err := send(ctx, turn)
		var failed *events.ValidationRun
		if err == nil && c.validationOn(true) {
			failed, err = c.validateTurn(ctx, w, &out)
		}
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
		if failed != nil && rep.Status == GoalDone {
			// Not done while the project's own check fails.
			rep = GoalReport{Status: GoalContinue, Summary: fmt.Sprintf("reported done, but validation `%s` still fails (exit code %d): %s",
				failed.Command, failed.ExitCode, text.Clip(text.OneLine(failed.Output), 300))}
		}
		st.Last = &rep
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: w.ID(), Role: roles.Executor,
			Text: fmt.Sprintf("goal turn %d/%d: %s: %s", st.Turns, st.MaxTurns, rep.Status, text.Clip(text.OneLine(rep.Summary), 200))})
		end, why := "", ""
		switch rep.Status {
		case GoalDone:
			end, why = GoalDone, ReasonDone
		case GoalBlocked:
			if key := normalizeBlocked(rep.Summary); key == st.BlockedKey {
				st.BlockedCount++
			} else {
				st.BlockedKey, st.BlockedCount = key, 1
			}
			if st.BlockedCount >= blockedRepeats {
				end, why = GoalBlocked, ReasonBlocked
			}
		}
		hookTurn := ""
		if end != "" {
			// The agent would stop: Stop hooks run, and one that blocks
			// sends it back to work with its reason, as in a chat turn.
			reason, ok := c.goalStopHook(ctx, w, &stop)
			if !ok {
				return finish(end, why, nil)
			}
			st.BlockedCount, st.BlockedKey = 0, ""
			st.Last = &GoalReport{Status: GoalContinue, Summary: "a Stop hook asked to go on: " + text.Clip(text.OneLine(reason), 300)}
			hookTurn = "A Stop hook asks you to go on: " + reason + "\n\n"
		}
		if err := c.saveGoal(w, st); err != nil {
			res.GoalState = *st
			return res, err
		}
		turn = hookTurn + goalContinueTurn(st) + c.researchNote(st, false)
	}
}

// goalStop is the Stop hook state of one goal run: whether a Stop hook
// already sent it back to work (stop_hook_active) and how often.
type goalStop struct {
	active bool
	n      int
}

// goalStopHook runs the Stop hooks when a goal would end and returns the
// reason of one that blocks the stop. After maxStopContinuations blocks
// in a run the stop goes through, should a hook ignore stop_hook_active.
func (c *Coordinator) goalStopHook(ctx context.Context, w *worker, s *goalStop) (string, bool) {
	r := c.rt.Hooks
	if r == nil || !r.Has(hooks.Stop, "") || ctx.Err() != nil {
		return "", false
	}
	flag := s.active
	o := r.Run(ctx, hooks.Stop, "", hooks.Payload{SessionID: w.ID(), StopHookActive: &flag})
	if !o.Block || ctx.Err() != nil || s.n >= maxStopContinuations {
		return "", false
	}
	s.active = true
	s.n++
	return o.Reason, true
}

// goalPromptHooks runs the prompt hooks for the turn that starts (or
// resumes) a goal, with the goal as the person wrote it, and returns the
// turn with their context added.
func (c *Coordinator) goalPromptHooks(ctx context.Context, w *worker, st *GoalState, turn string) (string, error) {
	if c.rt.Hooks == nil {
		return turn, nil
	}
	with, err := c.promptHooks(ctx, w, st.Goal)
	if err != nil {
		return "", err
	}
	return turn + strings.TrimPrefix(with, st.Goal), nil
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
