package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/tools"
)

// ValidationSettings are the [validation] knobs.
type ValidationSettings struct {
	// Enabled nil: on for goal turns, off for plain turns; true: on for
	// both; false: off (plans validate on their own).
	Enabled *bool
	// Command replaces the detected command.
	Command string
	// MaxAttempts bounds the fix rounds after one turn (0: 3).
	MaxAttempts int
}

// DefaultValidationAttempts is how many times a failing validation is
// fed back after one turn before the run goes on without it passing.
const DefaultValidationAttempts = 3

// validationTail bounds the output fed back to the model.
const validationTail = 4 << 10

// validationOn says whether turns of this kind validate.
func (c *Coordinator) validationOn(goal bool) bool {
	if e := c.rt.Settings.Validation.Enabled; e != nil {
		return *e
	}
	return goal
}

// validationCommand is [validation] command, else the detected one, and
// where it came from.
func (c *Coordinator) validationCommand() (string, string) {
	if cmd := strings.TrimSpace(c.rt.Settings.Validation.Command); cmd != "" {
		return cmd, "config"
	}
	if cmd := DetectValidation(c.rt.Workspace); cmd != "" {
		return cmd, "detected"
	}
	return "", ""
}

// changedFiles says whether calls wrote anything.
func changedFiles(calls []agents.CallRecord) bool {
	for _, c := range calls {
		if !c.IsError && !c.Denied && len(c.Writes) > 0 {
			return true
		}
		if !c.IsError && !c.Denied && c.Name == "bash" {
			// A command may change files without naming them.
			return true
		}
	}
	return false
}

// runValidation runs cmd as a bash call of session w through the gate and
// its sandbox, and publishes the run as a Validation event. ran is false
// when it could not run (no bash tool, refused by the gate).
func (c *Coordinator) runValidation(ctx context.Context, w *worker, cmd, source string, attempt int) (v events.ValidationRun, ran bool) {
	v = events.ValidationRun{Command: cmd, Source: source, Attempt: attempt, ExitCode: -1}
	publish := func() {
		vv := v
		c.rt.Sink.Publish(events.Event{Type: events.Validation, Session: w.ID(), Role: w.Role(), Parent: w.Parent(), Validation: &vv})
	}
	bash, ok := c.rt.Tools.Get("bash")
	if !ok {
		v.Output = "the bash tool is disabled"
		publish()
		return v, false
	}
	args, _ := json.Marshal(map[string]string{"command": cmd, "description": "validation"})
	env := w.Env()
	gate := c.rt.Gate
	if rg, ok := gate.(RoleGate); ok {
		if view, err := rg.RoleView(roles.Executor, false, "", nil, nil, nil); err == nil {
			gate = view
		}
	}
	if gate != nil {
		acc, _ := tools.Describe(bash, args)
		verdict := gate.Authorize(ctx, tools.Invocation{Session: w.ID(), Role: w.Role(), Tool: bash, Args: args, Access: acc, Env: env,
			Reason: "validation after a turn that changed files (" + source + ")"})
		if !verdict.Allow {
			v.Output = "not run: " + verdict.Message
			publish()
			return v, false
		}
	}
	start := time.Now()
	res, err := bash.Execute(ctx, env, args)
	if err != nil {
		res = tools.Result{IsError: true, Content: err.Error()}
	}
	v.Millis = time.Since(start).Milliseconds()
	out := env.Redact(res.Content)
	v.Passed = !res.IsError
	v.ExitCode = exitCodeOf(out, res.IsError)
	v.Output = tail(out, validationTail)
	publish()
	return v, ctx.Err() == nil
}

// exitCodeOf reads the "exit code: N" line bash results carry.
func exitCodeOf(out string, failed bool) int {
	if i := strings.LastIndex(out, "exit code: "); i >= 0 {
		var n int
		if _, err := fmt.Sscanf(out[i+len("exit code: "):], "%d", &n); err == nil {
			return n
		}
	}
	if failed {
		return 1
	}
	return 0
}

// tail keeps the last n bytes of s, cut at a line start when one is near.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	t := s[len(s)-n:]
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < 200 {
		t = t[i+1:]
	}
	return fmt.Sprintf("[… %d earlier bytes left out]\n", len(s)-len(t)) + t
}

// validationFeedback is the user turn that hands a failure back.
func validationFeedback(v events.ValidationRun, maxAttempts int) string {
	return fmt.Sprintf("<validation>\nThe validation command `%s` failed (exit code %d, attempt %d of %d) after your changes. Its output (the end):\n\n%s\n</validation>\n\n"+
		"Fix the cause; the command runs again after your next changes. Do not change the tests to make them pass unless they are wrong.",
		v.Command, v.ExitCode, v.Attempt, maxAttempts, strings.TrimRight(v.Output, "\n"))
}

// validateTurn runs the validation loop after a top-level turn: while the
// command fails, its output goes back to the session as a new turn, until
// it passes, the attempts run out, a turn changes nothing, a turn ends at
// the step limit or fails, or ctx ends. out accumulates the extra turns.
// failed is the last failing run when the loop ended without a pass.
func (c *Coordinator) validateTurn(ctx context.Context, w *worker, out *agents.Outcome) (failed *events.ValidationRun, err error) {
	cmd, source := c.validationCommand()
	if cmd == "" || !changedFiles(out.Calls) {
		return nil, nil
	}
	maxAttempts := c.rt.Settings.Validation.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultValidationAttempts
	}
	for attempt := 1; ; attempt++ {
		v, ran := c.runValidation(ctx, w, cmd, source, attempt)
		if !ran || v.Passed {
			return nil, ctx.Err()
		}
		if attempt >= maxAttempts {
			c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: w.ID(), Role: w.Role(),
				Text: fmt.Sprintf("validation `%s` still fails after %d attempt(s); stopping the fix rounds", cmd, attempt)})
			return &v, nil
		}
		more, err := w.FollowUp(ctx, validationFeedback(v, maxAttempts))
		out.Steps += more.Steps
		out.Usage.Add(more.Usage)
		out.Calls = append(out.Calls, more.Calls...)
		if more.Text != "" {
			out.Text = more.Text
		}
		out.Stop, out.HaltResult, out.HaltTool = more.Stop, more.HaltResult, more.HaltTool
		if err != nil || more.Stop == agents.StopMaxSteps {
			return &v, err
		}
		if !changedFiles(more.Calls) {
			c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: w.ID(), Role: w.Role(),
				Text: fmt.Sprintf("validation `%s` fails and the last turn changed nothing: %s", cmd, text.Clip(text.OneLine(more.Text), 200))})
			return &v, nil
		}
	}
}
