package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/internal/hooks"
	"github.com/reasonix/reasonix/tools"
)

// ErrPromptBlocked is returned when a UserPromptSubmit hook blocked the
// prompt; the prompt never reached the model.
var ErrPromptBlocked = errors.New("prompt blocked by a UserPromptSubmit hook")

// maxStopContinuations bounds how often Stop hooks may send a session back
// to work in one turn, should a hook ignore stop_hook_active.
const maxStopContinuations = 8

// toolHooks adapts the hook runner to a session's tool loop; cwd is the
// session's workspace when it is not the runner's (a plan worker's
// worktree), which relative paths in the input are read against.
type toolHooks struct {
	r   *hooks.Runner
	cwd string
}

var _ agents.ToolHooks = toolHooks{}

func (h toolHooks) Before(ctx context.Context, session, tool string, args json.RawMessage) (bool, string) {
	if !h.r.Has(hooks.PreToolUse, tool) {
		return false, ""
	}
	o := h.r.Run(ctx, hooks.PreToolUse, tool, hooks.Payload{SessionID: session, Cwd: h.cwd, ToolInput: args})
	return o.Block, o.Reason
}

func (h toolHooks) After(ctx context.Context, session, tool string, args json.RawMessage, res tools.Result) string {
	if !h.r.Has(hooks.PostToolUse, tool) {
		return ""
	}
	resp := map[string]any{"content": res.Content, "is_error": res.IsError}
	o := h.r.Run(ctx, hooks.PostToolUse, tool, hooks.Payload{SessionID: session, Cwd: h.cwd, ToolInput: args, ToolResponse: resp})
	return strings.TrimSpace(strings.Join([]string{o.Reason, o.Context}, "\n"))
}

// sessionHooks returns what a new session needs to run hooks, nil values
// when there are none; root is the session's workspace when it is not
// the runtime's ("" when it is).
func (c *Coordinator) sessionHooks(id, root string) (agents.ToolHooks, func(context.Context, string)) {
	r := c.rt.Hooks
	if r == nil {
		return nil, nil
	}
	before := func(ctx context.Context, trigger string) {
		if r.Has(hooks.PreCompact, "") {
			r.Run(ctx, hooks.PreCompact, "", hooks.Payload{SessionID: id, Cwd: root, Trigger: trigger})
		}
	}
	return toolHooks{r, root}, before
}

// promptHooks runs SessionStart (once per session) and UserPromptSubmit
// hooks for a person's turn and returns the turn to send: the prompt with
// the hooks' context after it, in the user turn so the cached prefix stays
// as it was.
func (c *Coordinator) promptHooks(ctx context.Context, w *worker, text string) (string, error) {
	r := c.rt.Hooks
	if r == nil {
		return text, nil
	}
	var extra []string
	if !w.started && r.Has(hooks.SessionStart, "") {
		source := "startup"
		if len(w.Messages()) > 1 {
			source = "resume"
		}
		if o := r.Run(ctx, hooks.SessionStart, "", hooks.Payload{SessionID: w.ID(), Cwd: w.root, Source: source}); o.Context != "" {
			extra = append(extra, o.Context)
		}
	}
	w.started = true
	if r.Has(hooks.UserPromptSubmit, "") {
		o := r.Run(ctx, hooks.UserPromptSubmit, "", hooks.Payload{SessionID: w.ID(), Cwd: w.root, Prompt: text})
		if o.Block {
			return "", fmt.Errorf("%w: %s", ErrPromptBlocked, o.Reason)
		}
		if o.Context != "" {
			extra = append(extra, o.Context)
		}
	}
	if len(extra) == 0 {
		return text, nil
	}
	return text + "\n\n<hook-context>\n" + strings.Join(extra, "\n") + "\n</hook-context>", nil
}

// stopHooks runs Stop (or, for a subagent, SubagentStop) hooks when a turn
// ended; a hook that blocks the stop sends its reason back as the next
// user turn, and the session goes on.
func (c *Coordinator) stopHooks(ctx context.Context, w *worker, out agents.Outcome, err error) (agents.Outcome, error) {
	r := c.rt.Hooks
	event := hooks.Stop
	if w.Parent() != "" {
		event = hooks.SubagentStop
	}
	if r == nil || !r.Has(event, "") {
		return out, err
	}
	active := false
	for i := 0; err == nil && i < maxStopContinuations; i++ {
		flag := active
		o := r.Run(ctx, event, "", hooks.Payload{SessionID: w.ID(), Cwd: w.root, StopHookActive: &flag})
		if !o.Block || ctx.Err() != nil {
			break
		}
		active = true
		more, mErr := w.FollowUp(ctx, "A "+event+" hook asks you to go on: "+o.Reason)
		more.Steps += out.Steps
		more.Usage.Add(out.Usage)
		more.Calls = append(out.Calls, more.Calls...)
		out, err = more, mErr
	}
	return out, err
}
