// Package hooks runs the user's hook commands at points of a run: before
// and after a tool call, when a prompt is submitted, when a session starts,
// stops or compacts. The hooks come from [[hooks]] in reasonix.toml and the
// "hooks" block of Claude Code settings files, and they speak Claude Code's
// protocol: a JSON payload on stdin, exit code 2 to block, JSON output with
// decision and reason. A project's hooks are someone else's code until a
// person trusts them (trust.go).
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/tools"
)

// Event names, as Claude Code spells them.
const (
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	UserPromptSubmit = "UserPromptSubmit"
	Stop             = "Stop"
	SubagentStop     = "SubagentStop"
	SessionStart     = "SessionStart"
	PreCompact       = "PreCompact"
)

// Events lists the events Reasonix runs hooks for.
var Events = []string{PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart, PreCompact}

// Known reports whether Reasonix runs hooks for event.
func Known(event string) bool {
	for _, e := range Events {
		if e == event {
			return true
		}
	}
	return false
}

// DefaultTimeout is a hook's time limit when it names none (Claude Code's).
const DefaultTimeout = 60 * time.Second

// outputCap bounds what is kept of a hook's stdout and stderr.
const outputCap = 64 << 10

// Hook is one configured hook command.
type Hook struct {
	Event string
	// Matcher selects tools for PreToolUse and PostToolUse: a tool name,
	// Claude Code's (Edit|Write) or Reasonix's (edit_file), or a regular
	// expression over them; empty or * matches every tool.
	Matcher string
	Command string
	// Timeout is the time limit; 0 means DefaultTimeout.
	Timeout time.Duration
	// Source is the file that defined it, Line its line there (0 when
	// unknown).
	Source string
	Line   int
	// Project is set for hooks from the project's own files, which run
	// only once a person trusted them.
	Project bool
}

// ClaudeName is the Claude Code name of a Reasonix tool, or the tool's own
// name when Claude Code has no such tool (MCP tools share one spelling).
func ClaudeName(tool string) string {
	// A hook written for Claude Code names its tools; patch and move_file
	// edit files as Edit does.
	switch tool {
	case "bash":
		return "Bash"
	case "read_file":
		return "Read"
	case "write_file":
		return "Write"
	case "edit_file", "patch", "move_file":
		return "Edit"
	case "multi_edit":
		return "MultiEdit"
	case "glob":
		return "Glob"
	case "grep":
		return "Grep"
	case "ls":
		return "LS"
	case "task":
		return "Task"
	case "skill":
		return "Skill"
	case "todo_write":
		return "TodoWrite"
	}
	return tool
}

// claudeInput adds to a file tool's arguments the field Claude Code's
// Read, Write, Edit and MultiEdit inputs name their file by, file_path
// (absolute), which hook scripts written for Claude Code read; Reasonix's
// own fields stay. A move is an Edit of its destination. Other input is
// returned as it is.
func claudeInput(tool string, in json.RawMessage, cwd string) json.RawMessage {
	key := "path"
	switch tool {
	case "read_file", "write_file", "edit_file", "multi_edit":
	case "move_file":
		key = "destination"
	default:
		return in
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(in, &m) != nil || m == nil || m["file_path"] != nil {
		return in
	}
	var p string
	if json.Unmarshal(m[key], &p) != nil || p == "" {
		return in
	}
	if !filepath.IsAbs(p) && cwd != "" {
		p = filepath.Join(cwd, p)
	}
	m["file_path"], _ = json.Marshal(p)
	out, err := json.Marshal(m)
	if err != nil {
		return in
	}
	return out
}

// Payload is the JSON a hook reads on stdin, in Claude Code's field names.
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// Tool events: the Claude Code name of the tool (Bash, Edit), its
	// input, and (PostToolUse) its response; ReasonixTool is the Reasonix
	// tool id (edit_file).
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse any             `json:"tool_response,omitempty"`
	ReasonixTool string          `json:"reasonix_tool,omitempty"`
	// UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`
	// Stop and SubagentStop: whether this stop already follows a hook's
	// request to go on.
	StopHookActive *bool `json:"stop_hook_active,omitempty"`
	// SessionStart: startup, resume, clear or compact.
	Source string `json:"source,omitempty"`
	// PreCompact: manual or auto.
	Trigger            string  `json:"trigger,omitempty"`
	CustomInstructions *string `json:"custom_instructions,omitempty"`
}

// Outcome is what the hooks of one event decided together.
type Outcome struct {
	// Block is set when a hook blocked a blocking event (exit 2, or a
	// block or deny decision); Reason is what the model (or, for a
	// blocked prompt, the person) is told.
	Block  bool
	Reason string
	// Context is text the hooks add to the conversation: stdout of
	// UserPromptSubmit and SessionStart hooks, additionalContext, and the
	// reasons of PostToolUse hooks.
	Context string
}

// Options configure a [Runner].
type Options struct {
	Hooks     []Hook
	Workspace string
	// Secrets scrub the hooks' environment as they scrub bash's.
	Secrets *tools.Secrets
	// Publish receives a HookRun event for every hook run or skipped.
	Publish func(events.Event)
	// Trust is asked once, the first time a project hook would run, with
	// every project hook; false skips them for the rest of the run. nil
	// trusts nothing.
	Trust func(ctx context.Context, project []Hook) bool
	// Transcript returns the session file of a session id, for the
	// payload's transcript_path; nil leaves it empty.
	Transcript func(session string) string
	// PermissionMode is reported in payloads.
	PermissionMode string
	// PowerShell is set when the bash tool runs PowerShell ([tools.shell]
	// prefer): a matcher naming Claude Code's PowerShell tool then
	// matches it too.
	PowerShell bool
}

// Runner runs the configured hooks. A nil *Runner runs nothing, so callers
// need no checks.
type Runner struct {
	o Options

	mu      sync.Mutex
	res     map[string]*regexp.Regexp
	decided bool
	trusted bool
	// trustMu serialises the trust question: a second caller waits for
	// the first answer rather than asking again.
	trustMu sync.Mutex
}

// New returns a runner for o.Hooks, or nil when there are none.
func New(o Options) *Runner {
	if len(o.Hooks) == 0 {
		return nil
	}
	if o.Publish == nil {
		o.Publish = func(events.Event) {}
	}
	return &Runner{o: o, res: map[string]*regexp.Regexp{}}
}

// Hooks returns the configured hooks.
func (r *Runner) Hooks() []Hook {
	if r == nil {
		return nil
	}
	return r.o.Hooks
}

// Has reports whether any hook listens to event (for tool events, to the
// tool), so callers can skip building a payload.
func (r *Runner) Has(event, tool string) bool {
	if r == nil {
		return false
	}
	for _, h := range r.o.Hooks {
		if h.Event == event && r.matches(h, tool) {
			return true
		}
	}
	return false
}

// matches applies a hook's matcher to a tool; events without tools match
// every hook of the event.
func (r *Runner) matches(h Hook, tool string) bool {
	m := strings.TrimSpace(h.Matcher)
	if tool == "" || m == "" || m == "*" {
		return true
	}
	names := []string{tool, ClaudeName(tool)}
	if r.o.PowerShell && tool == "bash" {
		names = append(names, "PowerShell")
	}
	r.mu.Lock()
	re, seen := r.res[m]
	if !seen {
		// Claude Code treats the matcher as a regular expression over the
		// whole name; one that does not compile is compared as text.
		re, _ = regexp.Compile("^(?:" + m + ")$")
		r.res[m] = re
	}
	r.mu.Unlock()
	for _, n := range names {
		if re != nil && re.MatchString(n) {
			return true
		}
		if re == nil && n == m {
			return true
		}
	}
	return false
}

// blocking reports the events a hook can stop.
func blocking(event string) bool {
	switch event {
	case PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop:
		return true
	}
	return false
}

// Run runs every hook of event that matches tool (empty for events without
// a tool), one after another in the order configured, and folds their
// answers. p's event name, working directory and transcript are filled in.
func (r *Runner) Run(ctx context.Context, event, tool string, p Payload) Outcome {
	var out Outcome
	if r == nil {
		return out
	}
	p.HookEventName = event
	if p.Cwd == "" {
		p.Cwd = r.o.Workspace
	}
	if p.PermissionMode == "" {
		p.PermissionMode = r.o.PermissionMode
	}
	if p.TranscriptPath == "" && r.o.Transcript != nil && p.SessionID != "" {
		p.TranscriptPath = r.o.Transcript(p.SessionID)
	}
	if tool != "" {
		p.ToolName, p.ReasonixTool = ClaudeName(tool), tool
		p.ToolInput = claudeInput(tool, p.ToolInput, p.Cwd)
	}
	body, err := json.Marshal(p)
	if err != nil {
		return out
	}
	var reasons, contexts []string
	for _, h := range r.o.Hooks {
		if h.Event != event || !r.matches(h, tool) {
			continue
		}
		ev := &events.Hook{Event: event, Matcher: h.Matcher, Command: h.Command, Source: h.Source, Tool: tool}
		if h.Project && !r.trust(ctx) {
			ev.Outcome = events.HookSkipped
			ev.Message = "project hook not trusted"
			r.o.Publish(events.Event{Type: events.HookRun, Session: p.SessionID, Hook: ev})
			continue
		}
		res := r.exec(ctx, h, body)
		ev.Exit, ev.Millis = res.exit, res.millis
		block, reason, ctxText := interpret(event, res)
		switch {
		case res.startErr != nil:
			ev.Outcome, ev.Message = events.HookError, res.startErr.Error()
		case res.timedOut:
			ev.Outcome, ev.Message = events.HookTimeout, fmt.Sprintf("killed after %s", timeoutOf(h))
		case block && blocking(event):
			ev.Outcome, ev.Message = events.HookBlocked, reason
		case res.exit != 0:
			ev.Outcome, ev.Message = events.HookWarning, strings.TrimSpace(res.stderr)
		default:
			ev.Outcome = events.HookOK
		}
		ev.Message = text.Clip(ev.Message, 2000)
		r.o.Publish(events.Event{Type: events.HookRun, Session: p.SessionID, Hook: ev})
		if block && blocking(event) {
			out.Block = true
			if reason != "" {
				reasons = append(reasons, reason)
			}
		}
		if ctxText != "" {
			contexts = append(contexts, ctxText)
		}
		if ctx.Err() != nil {
			break
		}
	}
	out.Reason = strings.Join(reasons, "\n")
	out.Context = strings.Join(contexts, "\n")
	if out.Block && out.Reason == "" {
		out.Reason = "blocked by a " + event + " hook"
	}
	return out
}

// trust asks once whether the project's hooks may run.
func (r *Runner) trust(ctx context.Context) bool {
	r.trustMu.Lock()
	defer r.trustMu.Unlock()
	r.mu.Lock()
	decided, trusted := r.decided, r.trusted
	r.mu.Unlock()
	if decided {
		return trusted
	}
	ok := false
	if r.o.Trust != nil {
		var project []Hook
		for _, h := range r.o.Hooks {
			if h.Project {
				project = append(project, h)
			}
		}
		ok = r.o.Trust(ctx, project)
	}
	if ctx.Err() != nil {
		// An interrupted question is no answer: ask again next time.
		return false
	}
	r.mu.Lock()
	r.decided, r.trusted = true, ok
	r.mu.Unlock()
	return ok
}

func timeoutOf(h Hook) time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	return DefaultTimeout
}

// result is one hook process's end.
type result struct {
	exit           int
	stdout, stderr string
	timedOut       bool
	startErr       error
	millis         int64
}

// exec runs one hook with body on stdin, in the workspace, with a scrubbed
// environment, and kills its process group when its time is up.
func (r *Runner) exec(ctx context.Context, h Hook, body []byte) result {
	start := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, timeoutOf(h))
	defer cancel()
	cmd := shellCommand(h.Command, r.o.Workspace)
	cmd.Dir = r.o.Workspace
	// Never the inherited environment: provider keys stay out, as for bash.
	cmd.Env = append(r.o.Secrets.Environ(os.Environ()),
		"CLAUDE_PROJECT_DIR="+r.o.Workspace, "REASONIX_PROJECT_DIR="+r.o.Workspace)
	cmd.Stdin = bytes.NewReader(body)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return result{exit: -1, startErr: err}
	}
	stop := context.AfterFunc(runCtx, func() { killGroup(cmd) })
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Wait()
	stop()
	res := result{stdout: stdout.String(), stderr: r.o.Secrets.Redact(stderr.String()), millis: time.Since(start).Milliseconds()}
	res.stdout = r.o.Secrets.Redact(res.stdout)
	switch {
	case runCtx.Err() != nil:
		res.timedOut, res.exit = true, -1
	case cmd.ProcessState != nil:
		res.exit = cmd.ProcessState.ExitCode()
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		res.exit = -1
	}
	return res
}

// jsonOutput is the part of Claude Code's hook output Reasonix honours.
type jsonOutput struct {
	Continue    *bool  `json:"continue"`
	StopReason  string `json:"stopReason"`
	Decision    string `json:"decision"`
	Reason      string `json:"reason"`
	HookSpecifc struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// interpret reads a hook's end the way Claude Code does: exit 2 blocks
// with stderr as the reason; exit 0 with JSON on stdout may block with a
// decision; plain stdout of UserPromptSubmit and SessionStart is context.
func interpret(event string, res result) (block bool, reason, context string) {
	if res.startErr != nil || res.timedOut {
		return false, "", ""
	}
	if res.exit == 2 {
		return true, strings.TrimSpace(res.stderr), ""
	}
	if res.exit != 0 {
		return false, "", ""
	}
	out := strings.TrimSpace(res.stdout)
	var j jsonOutput
	if strings.HasPrefix(out, "{") && json.Unmarshal([]byte(out), &j) == nil {
		hs := j.HookSpecifc
		switch {
		case j.Continue != nil && !*j.Continue:
			block, reason = true, j.StopReason
		case j.Decision == "block" || j.Decision == "deny":
			block, reason = true, j.Reason
		case hs.PermissionDecision == "deny":
			block, reason = true, hs.PermissionDecisionReason
		}
		if reason == "" && block {
			reason = j.Reason
		}
		context = strings.TrimSpace(hs.AdditionalContext)
		if event == PostToolUse && block {
			// The call already ran: a block only tells the model why.
			context = strings.TrimSpace(strings.Join([]string{reason, context}, "\n"))
		}
		return block, reason, context
	}
	if event == UserPromptSubmit || event == SessionStart {
		return false, "", out
	}
	return false, "", ""
}

// capped keeps the first outputCap bytes written to it.
type capped struct{ b bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := outputCap - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string { return c.b.String() }
