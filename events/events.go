// Package events defines the typed event stream every session publishes and
// every front end (TUI, plain text, stream-json) renders. It sits at the
// bottom of the import graph so tools, the permission gate and sessions can
// all publish without importing one another.
package events

import (
	"encoding/json"
	"sync"

	"github.com/reasonix/reasonix/providers"
)

// RoleUser is the role of events about work a person started directly,
// with no model involved: the shell command of a "!" line or of a
// command file's !`cmd` span.
const RoleUser = "user"

// Type names an event kind.
type Type string

// Event types.
const (
	TextDelta       Type = "text_delta"
	ReasoningDelta  Type = "reasoning_delta"
	ToolStart       Type = "tool_start"
	ToolEnd         Type = "tool_end"
	ApprovalRequest Type = "approval_request"
	// ApprovalResolved says a request was answered or withdrawn, so every
	// front end showing it can close it.
	ApprovalResolved Type = "approval_resolved"
	PlanReady        Type = "plan_ready"
	// GoalUpdate carries a goal's state each time it is saved (nil Goal: cleared).
	GoalUpdate   Type = "goal_update"
	TodoUpdate   Type = "todo_update"
	UsageUpdate  Type = "usage"
	Notice       Type = "notice"
	Error        Type = "error"
	Done         Type = "done"
	SessionStart Type = "session_start"
	// History carries the conversation of a resumed session (Messages),
	// so a front end can show what came before.
	History Type = "history"
	// HookRun reports one hook command that ran (or was skipped) and how
	// it ended (Hook).
	HookRun Type = "hook"
	// StepUpdate reports a plan step's state (StepResult) each time it
	// changes: running when a worker takes it, then its outcome.
	StepUpdate Type = "step_update"
	// Compacted says a session compacted its history (Context holds the
	// sizes before and after): the one deliberate reset of its cached
	// prefix.
	Compacted Type = "compaction"
	// Validation reports one run of the validation command (Validation).
	Validation Type = "validation"
	// QuestionRequest is a question the model asks a person (ask tool);
	// QuestionResolved says it was answered or withdrawn.
	QuestionRequest  Type = "question"
	QuestionResolved Type = "question_resolved"
	// ElicitationRequest is an MCP server's request for input from a
	// person (Elicitation); ElicitationResolved says it was answered or
	// withdrawn.
	ElicitationRequest  Type = "elicitation_request"
	ElicitationResolved Type = "elicitation_resolved"
	// JobUpdate reports a background job's state (Job): started, more
	// output, exited with its code, or killed.
	JobUpdate Type = "job"
)

// Event is one thing that happened in a session, tagged with the session's
// id and role. Only the fields relevant to Type are set.
type Event struct {
	Type    Type   `json:"type"`
	Session string `json:"session,omitempty"`
	Role    string `json:"role,omitempty"`
	Parent  string `json:"parent,omitempty"`
	// Step is the plan step the publishing session works on (plan
	// workers only), so front ends can group a run's events by step.
	Step string `json:"step,omitempty"`
	// Title is what a subagent session was started to do, in the words
	// of its task call's description (SessionStart only), so front ends
	// can name a worker by its job rather than its id.
	Title string `json:"title,omitempty"`
	Text  string `json:"text,omitempty"`
	Tool  *Tool  `json:"tool,omitempty"`
	// Usage is the usage of one request (UsageUpdate) or of the whole
	// session (Done).
	Usage *providers.Usage `json:"usage,omitempty"`
	// Total, on UsageUpdate, is the session's running total (tokens,
	// cost, cache hits), for status lines.
	Total *providers.Usage `json:"total,omitempty"`
	// Model is the "provider/model" a request went to (UsageUpdate), so
	// front ends can show the cost per model.
	Model    string     `json:"model,omitempty"`
	Todos    []Todo     `json:"todos,omitempty"`
	Plan     *Plan      `json:"plan,omitempty"`
	Goal     *GoalState `json:"goal,omitempty"`
	Approval *Approval  `json:"approval,omitempty"`
	Hook     *Hook      `json:"hook,omitempty"`
	// Messages is the conversation of a resumed session (History).
	Messages []providers.Message `json:"messages,omitempty"`
	// Question is the ask tool's question (QuestionRequest/Resolved).
	Question *Question `json:"question,omitempty"`
	// Elicitation is an MCP server's request for input
	// (ElicitationRequest/Resolved).
	Elicitation *Elicitation `json:"elicitation,omitempty"`
	// StepResult is a plan step's state (StepUpdate).
	StepResult *StepResult `json:"step_result,omitempty"`
	// Context is how full the session's window is (UsageUpdate,
	// Compacted).
	Context *ContextInfo `json:"context,omitempty"`
	// Validation is one validation run (Validation).
	Validation *ValidationRun `json:"validation,omitempty"`
	// Job is a background job's state (JobUpdate).
	Job   *Job   `json:"job,omitempty"`
	Error string `json:"error,omitempty"`
}

// Tool describes a tool call for ToolStart and ToolEnd.
type Tool struct {
	CallID string          `json:"call_id"`
	Name   string          `json:"name"`
	Args   json.RawMessage `json:"args,omitempty"`
	// Kind and Subject come from the tool's own description of the call
	// (tools.Access): read, write, execute, network, delegate or other,
	// and what it acts on (the command, the paths, the agent).
	Kind    string `json:"kind,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Paths are the files the call names, written ones first, as the
	// model gave them (relative to the workspace or absolute).
	Paths   []string `json:"paths,omitempty"`
	Summary string   `json:"summary,omitempty"` // one line for humans
	Result  string   `json:"result,omitempty"`  // ToolEnd only
	// Diff is what a file tool changed, as a unified diff (ToolEnd of
	// edit_file, multi_edit, write_file, apply_patch), for display.
	Diff    string `json:"diff,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	Denied  bool   `json:"denied,omitempty"`
	Millis  int64  `json:"ms,omitempty"`
}

// Todo is one item of a session's todo list.
type Todo struct {
	Content    string `json:"content"`
	ActiveForm string `json:"activeForm,omitempty"`
	Status     string `json:"status"` // pending | in_progress | completed
}

// Sink receives events. Implementations must be safe for concurrent use:
// parallel tools and sessions publish at the same time.
type Sink interface {
	Publish(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Publish calls f(e).
func (f SinkFunc) Publish(e Event) { f(e) }

// Discard drops every event.
var Discard Sink = SinkFunc(func(Event) {})

// Serial wraps a sink so that Publish calls never overlap.
func Serial(s Sink) Sink { return &serial{s: s} }

type serial struct {
	mu sync.Mutex
	s  Sink
}

func (s *serial) Publish(e Event) {
	s.mu.Lock()
	s.s.Publish(e)
	s.mu.Unlock()
}

// Recorder keeps every event it receives; for tests.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Publish records e.
func (r *Recorder) Publish(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of what was recorded.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}
