// Package agents runs one isolated session: its message history, its
// cache-stable prefix and the tool loop (stream → gate → execute → append).
// A session knows nothing of other sessions; the orchestrator composes them.
package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/repair"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/tools"
)

// Recorder persists a session's messages as they are appended.
type Recorder interface {
	Append(m providers.Message) error
}

// StepRecorder is a Recorder told when each step ends, the moments the
// history is whole (every call has its result): it writes the session's
// state there and syncs it to disk, at the latest by the end of the next
// step.
type StepRecorder interface {
	Recorder
	EndStep() error
}

// StepStarter is a Recorder told when a step's request is about to be
// sent: from then on the step will end (EndStep comes, whatever the
// request does), so a recorder may get ready for it meanwhile.
type StepStarter interface {
	Recorder
	StartStep()
}

// NestedRules finds the rules files of folders below the working
// directory that a session's file tools reach (rules.Nested).
type NestedRules interface {
	// Attach returns the rules files of the folders paths reach that
	// the session does not hold yet, as text to append to the call's
	// result ("" when there is none), and the files that text holds,
	// which the result's message records (providers.Message.Rules).
	Attach(paths []string) (text string, files []string)
	// Hold makes what the session holds the prefix's files and files,
	// those recorded on the tool results its history carries: told
	// after a restored history and after a compaction, which may have
	// taken some away. The results' text is never the evidence: a file
	// the model read may imitate an attachment.
	Hold(files []string)
}

// Config assembles a session.
type Config struct {
	// NestedRules, when set, finds the rules files of the folders a
	// file tool's call just reached that the session does not hold (a
	// subfolder's CLAUDE.md, as Claude Code reads it once work gets
	// there); they are appended to that call's result, so the prefix
	// stays as it was.
	NestedRules NestedRules
	ID          string
	Role        string
	Parent      string
	// Step is the plan step this session works on ("" outside plan
	// runs); the gate names it in approval requests.
	Step string

	Provider    providers.Provider
	Model       string
	System      string
	Tools       *tools.Registry
	Env         *tools.Env
	Gate        tools.Authorizer // nil allows everything
	MaxSteps    int              // default 50
	MaxTokens   int
	Temperature *float64
	// ReasoningEffort, when set, overrides the provider's configured
	// reasoning_effort for this session's requests (a person's /effort).
	ReasoningEffort string
	Sink            events.Sink // nil discards
	Transcript      Recorder    // nil keeps history in memory only
	// BeforeChange, when set, runs before each call of a tool that is not
	// read-only, once it is allowed (the coordinator checkpoints the
	// workspace there, once per turn). An error refuses the call.
	BeforeChange func(ctx context.Context) error
	// ContextWindow is the model's context size in tokens; 0 turns the
	// size check and compaction off. CompactRatio (default 0.8) is the
	// share of it that triggers compaction (compact.go).
	ContextWindow int
	CompactRatio  float64
	// OnCompact, when set, is told about each compaction before the
	// session goes on with the compacted history (the coordinator
	// archives the originals and records it, and returns the archive's
	// path); an error stops the run.
	OnCompact func(Compaction) (archive string, err error)
	// RefreshTools, when set, is asked after each compaction for the
	// tools the session should offer from then on, given the current
	// ones (MCP servers may have added or dropped tools since the session
	// opened). A compaction already throws the cached prefix away, so it
	// is the one point where the tool list may change; nil keeps it.
	RefreshTools func(current *tools.Registry) *tools.Registry
	// Restate, when set, returns state a digest must carry whatever the
	// model wrote (the goal); the todo list is always carried.
	Restate func() string
	// Guard, when set, watches each call of a tool that is not read-only
	// (permission.ControlGuard): it undoes changes to control files that
	// no person approved, and the call's result says so.
	Guard ChangeGuard
	// Hooks, when set, runs the user's PreToolUse hooks before the gate
	// (a block refuses the call without asking anyone) and PostToolUse
	// hooks after the call.
	Hooks ToolHooks
	// BeforeCompact, when set, is called before a compaction with its
	// trigger, "auto" or "manual" (PreCompact hooks).
	BeforeCompact func(ctx context.Context, trigger string)
	// FlattenSchemas advertises deep tool schemas flattened to dot-paths
	// and re-nests the arguments before the tool runs (flatten.go).
	FlattenSchemas bool
	// Price, when known, prices each request (Usage.Cost); Budget, when
	// set, is the run's spending limit, shared with other sessions
	// (cost.go).
	Price  *providers.Price
	Budget *Budget
}

// ToolHooks runs hooks around tool calls (internal/hooks through the
// coordinator).
type ToolHooks interface {
	// Before may block a call; reason is what the model is told.
	Before(ctx context.Context, session, tool string, args json.RawMessage) (block bool, reason string)
	// After returns text to append to the call's result, or "".
	After(ctx context.Context, session, tool string, args json.RawMessage, res tools.Result) string
}

// ChangeGuard watches what a call changes on disk.
type ChangeGuard interface {
	// Watch is called just before a call runs; the function it returns
	// just after, with whether a person approved this very call. A
	// non-empty return is a refused change, appended to the result.
	Watch(session, role, tool string) func(v tools.Verdict) string
}

// Stop reasons reported in Outcome.Stop.
const (
	StopDone     = "done"
	StopMaxSteps = "max_steps"
	StopHalted   = "halted" // a tool handed over the final answer
)

// CallRecord is one executed tool call.
type CallRecord struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Args    json.RawMessage `json:"args"`
	Summary string          `json:"summary,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	Denied  bool            `json:"denied,omitempty"`
	// Writes are the paths the call described as written (tools.Access),
	// set only when it succeeded.
	Writes []string `json:"writes,omitempty"`
}

// Outcome is the result of one Send.
type Outcome struct {
	Text  string
	Steps int
	Stop  string
	Usage providers.Usage
	Calls []CallRecord
	// HaltResult is the content of the tool result that halted the session.
	HaltResult string
	HaltTool   string
}

// Session is one conversation with a model. It is not safe for concurrent
// Sends; its tools may run concurrently inside one Send.
type Session struct {
	cfg       Config
	msgs      []providers.Message
	raw       []json.RawMessage
	toolsJSON json.RawMessage
	specs     []providers.ToolSpec
	usage     providers.Usage
	sink      events.Sink
	// ratio scales the bytes/4 estimate to the provider's tokens;
	// lastPrompt is the prompt tokens reported for the newest request of
	// the current history; stuckAt is the estimate at which a compaction
	// found nothing to do (compact.go).
	ratio      float64
	lastPrompt int
	stuckAt    int
	// windowUnknown is set while a compaction by hand runs on a stand-in
	// window (Compact), so what it reports names no window size.
	windowUnknown bool
	// finish is the finish reason of the newest response; shown and
	// held track how much of its answer reached the front ends while
	// tool markup is held back; storm stops repeated calls (repair.go).
	finish string
	shown  int
	held   bool
	storm  repair.Breaker
	// autoCompact is set while fit compacts, so BeforeCompact hears
	// "auto" rather than "manual".
	autoCompact bool
	// prefix is the fingerprint of the system prompt and tool schemas;
	// resetReason, when set, marks the next request as a cache reset
	// (cost.go). lastCost is the newest request's cost, the estimate of
	// the next one for the budget.
	prefix      string
	resetReason string
	lastCost    float64
	// flat names the tools advertised with a flattened schema.
	flat map[string]bool
}

// New builds a session and serialises its prefix (system prompt and tool
// schemas) once, so every request carries identical prefix bytes.
func New(cfg Config) (*Session, error) {
	if cfg.Provider == nil {
		return nil, errors.New("session: no provider")
	}
	if cfg.Tools == nil {
		cfg.Tools = tools.NewRegistry()
	}
	if cfg.Env == nil {
		cfg.Env = tools.NewEnv(".")
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 50
	}
	s := &Session{cfg: cfg, sink: cfg.Sink}
	if s.sink == nil {
		s.sink = events.Discard
	}
	// Each tool's description and schema are read once: a schema is a
	// copy of generated text, and the first session's on the way to the
	// first request.
	s.specs = cfg.Tools.Specs()
	if len(s.specs) > 0 {
		tj, err := providers.EncodeTools(s.specs)
		if err != nil {
			return nil, fmt.Errorf("session: encode tool schemas: %w", err)
		}
		s.toolsJSON = tj
	}
	if cfg.FlattenSchemas {
		if err := s.flattenSpecs(); err != nil {
			return nil, err
		}
	}
	if cfg.System != "" {
		if err := s.append(providers.Message{Role: providers.RoleSystem, Content: cfg.System}); err != nil {
			return nil, err
		}
	}
	s.resetCache("")
	return s, nil
}

// ID returns the session id.
func (s *Session) ID() string { return s.cfg.ID }

// Role returns the session role.
func (s *Session) Role() string { return s.cfg.Role }

// Parent returns the id of the session that started this one, or "".
func (s *Session) Parent() string { return s.cfg.Parent }

// Messages returns the history so far.
func (s *Session) Messages() []providers.Message { return s.msgs }

// Usage returns the usage accumulated over the session's lifetime.
func (s *Session) Usage() providers.Usage { return s.usage }

// Env returns the session's tool environment.
func (s *Session) Env() *tools.Env { return s.cfg.Env }

// Restore appends previously saved messages (a resumed session) without
// running anything.
func (s *Session) Restore(msgs []providers.Message) error {
	for _, m := range msgs {
		if m.Role == providers.RoleSystem && len(s.msgs) > 0 {
			continue
		}
		if err := s.appendMem(m); err != nil {
			return err
		}
	}
	s.holdNestedRules()
	return nil
}

// holdNestedRules tells NestedRules which rules files the history's
// tool results carry, as recorded on them when they were attached.
func (s *Session) holdNestedRules() {
	if s.cfg.NestedRules == nil {
		return
	}
	var files []string
	for _, m := range s.msgs {
		if m.Role == providers.RoleTool {
			files = append(files, m.Rules...)
		}
	}
	s.cfg.NestedRules.Hold(files)
}

func (s *Session) publish(e events.Event) {
	e.Session, e.Role, e.Parent = s.cfg.ID, s.cfg.Role, s.cfg.Parent
	s.sink.Publish(e)
}

func (s *Session) appendMem(m providers.Message) error {
	raw, err := providers.EncodeMessage(m)
	if err != nil {
		return fmt.Errorf("session: encode message: %w", err)
	}
	s.msgs = append(s.msgs, m)
	s.raw = append(s.raw, raw)
	return nil
}

// endStep tells a StepRecorder that the history is whole.
func (s *Session) endStep() error {
	if r, ok := s.cfg.Transcript.(StepRecorder); ok {
		if err := r.EndStep(); err != nil {
			return fmt.Errorf("session %s: %w", s.cfg.ID, err)
		}
	}
	return nil
}

func (s *Session) append(m providers.Message) error {
	if err := s.appendMem(m); err != nil {
		return err
	}
	if s.cfg.Transcript != nil {
		if err := s.cfg.Transcript.Append(m); err != nil {
			return fmt.Errorf("session %s: %w", s.cfg.ID, err)
		}
	}
	return nil
}

// Send appends a user turn and runs the tool loop until the model stops
// calling tools, a tool halts the session, or the step limit is reached.
// On error the Outcome still holds everything produced so far, including
// the partial text of a broken stream.
func (s *Session) Send(ctx context.Context, text string) (Outcome, error) {
	var out Outcome
	if err := s.append(providers.Message{Role: providers.RoleUser, Content: text}); err != nil {
		return out, err
	}
	s.storm.Reset() // a new user turn: earlier repeats are forgiven
	return s.loop(ctx, &out)
}

// FollowUp is Send for a turn the program writes rather than a person
// (a goal's "keep going", validation feedback, a hook asking to go on):
// earlier repeated calls still count, so a model looping across such
// turns is still stopped.
func (s *Session) FollowUp(ctx context.Context, text string) (Outcome, error) {
	var out Outcome
	if err := s.append(providers.Message{Role: providers.RoleUser, Content: text}); err != nil {
		return out, err
	}
	return s.loop(ctx, &out)
}

// Continue runs the loop without adding a user turn (after Restore).
func (s *Session) Continue(ctx context.Context) (Outcome, error) {
	var out Outcome
	return s.loop(ctx, &out)
}

func (s *Session) loop(ctx context.Context, out *Outcome) (res Outcome, err error) {
	defer func() {
		if serr := s.endStep(); serr != nil {
			res, err = *out, errors.Join(err, serr)
		}
	}()
	continued := false  // a cut answer is continued once per Send
	overflowed := false // a request too long for the context is compacted and sent again once per Send
	for out.Steps < s.cfg.MaxSteps {
		if err := ctx.Err(); err != nil {
			return *out, err
		}
		if err := s.fit(ctx, out); err != nil {
			return *out, err
		}
		if err := s.cfg.Budget.check(s.nextCost()); err != nil {
			return *out, err
		}
		out.Steps++
		if r, ok := s.cfg.Transcript.(StepStarter); ok {
			r.StartStep()
		}
		msg, usage, err := s.stream(ctx)
		if usage != nil {
			out.Usage.Add(*usage)
			s.usage.Add(*usage)
		}
		if err != nil && !overflowed && msg.Content == "" && msg.ReasoningContent == "" && len(msg.ToolCalls) == 0 {
			if limit, ok := contextOverflow(err); ok {
				overflowed = true
				rerr := s.recoverOverflow(ctx, out, limit)
				if rerr == nil {
					continue
				}
				err = fmt.Errorf("%w (compacting to fit failed: %v)", err, rerr)
			}
		}
		if err != nil {
			s.flushText(msg.Content, msg.Content)
			if msg.Content != "" || msg.ReasoningContent != "" {
				// Keep the partial answer in the history and transcript.
				msg.ToolCalls = nil
				if aerr := s.append(msg); aerr != nil {
					err = errors.Join(err, aerr)
				}
				out.Text = msg.Content
			}
			return *out, err
		}
		original := msg.Content
		s.repairTurn(&msg)
		s.flushText(original, msg.Content)
		if err := s.append(msg); err != nil {
			return *out, err
		}
		out.Text = msg.Content
		if len(msg.ToolCalls) == 0 {
			if s.finish == finishLength && !continued {
				continued = true
				s.publish(events.Event{Type: events.Notice, Text: "the answer was cut off at the output token limit; asking the model to continue"})
				if err := s.append(providers.Message{Role: providers.RoleUser, Content: continueCut}); err != nil {
					return *out, err
				}
				continue
			}
			out.Stop = StopDone
			return *out, nil
		}
		halted, err := s.runCalls(ctx, msg, out)
		if err != nil {
			return *out, err
		}
		if err := s.endStep(); err != nil {
			return *out, err
		}
		if halted {
			out.Stop = StopHalted
			return *out, nil
		}
	}
	out.Stop = StopMaxSteps
	s.publish(events.Event{Type: events.Notice, Text: fmt.Sprintf("stopped after %d steps (max_steps)", s.cfg.MaxSteps)})
	return *out, nil
}

// stream sends one request and collects the assistant message.
func (s *Session) stream(ctx context.Context) (providers.Message, *providers.Usage, error) {
	req := providers.Request{
		Model:        s.cfg.Model,
		Messages:     s.msgs,
		Encoded:      s.raw,
		Tools:        s.specs,
		EncodedTools: s.toolsJSON,
		MaxTokens:    s.cfg.MaxTokens,
		Temperature:  s.cfg.Temperature,
		Effort:       s.cfg.ReasoningEffort,
	}
	msg := providers.Message{Role: providers.RoleAssistant}
	size := 0
	if s.cfg.ContextWindow > 0 {
		size = s.requestBytes(asBytes(s.raw))
	}
	ch, err := s.cfg.Provider.Stream(ctx, req)
	if err != nil {
		return msg, nil, err // providers name themselves in their errors
	}
	var text, reasoning strings.Builder
	var usage *providers.Usage
	var streamErr error
	s.finish, s.shown, s.held = "", 0, false
	for c := range ch {
		if c.Reasoning != "" {
			reasoning.WriteString(c.Reasoning)
			s.publish(events.Event{Type: events.ReasoningDelta, Text: c.Reasoning})
		}
		if c.Text != "" {
			text.WriteString(c.Text)
			s.showText(text.String())
		}
		if c.FinishReason != "" {
			s.finish = c.FinishReason
		}
		msg.ToolCalls = append(msg.ToolCalls, c.ToolCalls...)
		if c.Usage != nil {
			u := *c.Usage
			usage = &u
		}
		if c.Err != nil {
			streamErr = c.Err
		}
	}
	msg.Content = text.String()
	msg.ReasoningContent = reasoning.String()
	if usage != nil {
		s.observe(size, usage)
		total := s.account(usage)
		var win *events.ContextInfo
		if w := s.cfg.ContextWindow; w > 0 && usage.PromptTokens > 0 {
			win = &events.ContextInfo{Used: usage.PromptTokens, Limit: w, Percent: events.Percent(usage.PromptTokens, w)}
		}
		s.publish(events.Event{Type: events.UsageUpdate, Usage: usage, Total: &total, Context: win, Model: s.ModelKey()})
	} else {
		// Recorded all the same: the request was sent with this prefix.
		s.account(&providers.Usage{})
	}
	if streamErr == nil && ctx.Err() != nil {
		streamErr = ctx.Err()
	}
	if streamErr != nil {
		return msg, usage, streamErr
	}
	for i := range msg.ToolCalls {
		if msg.ToolCalls[i].Type == "" {
			msg.ToolCalls[i].Type = "function"
		}
		if msg.ToolCalls[i].ID == "" {
			msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", len(s.msgs), i)
		}
	}
	return msg, usage, nil
}

type callResult struct {
	res    tools.Result
	denied bool
	// writes are the paths a successful call described as written.
	writes []string
	// rules are the rules files NestedRules attached to the result, and
	// rulesText the text it appended; the message records rules when
	// that text ends the result as it went into the history.
	rules     []string
	rulesText string
}

// runCalls executes the calls of one assistant message. Consecutive
// read-only calls run in parallel; writers run one at a time, in order.
// Results are appended in the order the model asked for them.
func (s *Session) runCalls(ctx context.Context, msg providers.Message, out *Outcome) (bool, error) {
	calls := msg.ToolCalls
	results := make([]callResult, len(calls))
	halted := false
	done := 0 // results[:done] are in the history
	flush := func(upto int) error {
		for ; done < upto; done++ {
			c, r := calls[done], results[done].res
			content := r.Content
			if r.IsError && !strings.HasPrefix(content, "Error") {
				content = "Error: " + content
			}
			m := providers.Message{Role: providers.RoleTool, ToolCallID: c.ID, Content: content}
			if rr := results[done]; len(rr.rules) > 0 && strings.HasSuffix(content, rr.rulesText) {
				// Cut by the output limit or changed by redaction, the
				// rules are not held whole: a later call attaches them.
				m.Rules = rr.rules
			}
			if err := s.append(m); err != nil {
				return err
			}
			out.Calls = append(out.Calls, CallRecord{ID: c.ID, Name: c.Function.Name, Args: recordArgs(c.Function.Arguments),
				Summary: r.Summary, IsError: r.IsError, Denied: results[done].denied, Writes: results[done].writes})
			if r.Halt && !r.IsError {
				halted = true
				out.HaltResult, out.HaltTool = r.Content, c.Function.Name
			}
		}
		return nil
	}
	blocked := s.admit(calls)
	for i := 0; i < len(calls); {
		if blocked[i] != nil {
			results[i] = *blocked[i]
			s.publishBlocked(calls[i], results[i])
			i++
			if err := flush(i); err != nil {
				return false, err
			}
			continue
		}
		j := i + 1
		if s.readOnly(calls[i]) {
			for j < len(calls) && s.readOnly(calls[j]) && blocked[j] == nil {
				j++
			}
		}
		if j-i == 1 {
			results[i] = s.runOne(ctx, calls[i], msg.Content)
		} else {
			var wg sync.WaitGroup
			for k := i; k < j; k++ {
				wg.Add(1)
				go func(k int) {
					defer wg.Done()
					results[k] = s.runOne(ctx, calls[k], msg.Content)
				}(k)
			}
			wg.Wait()
		}
		i = j
		// The results so far join the history (and the session file) in
		// call order before the next call starts: a crash during a long
		// command keeps the results that came before it.
		if err := flush(i); err != nil {
			return false, err
		}
	}
	// A cancelled run still records the results it has (so a resumed
	// session is well-formed) but stops here.
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return halted, nil
}

func (s *Session) readOnly(c providers.ToolCall) bool {
	t, ok := s.cfg.Tools.Get(c.Function.Name)
	return ok && t.ReadOnly()
}

func (s *Session) runOne(ctx context.Context, c providers.ToolCall, reason string) callResult {
	start := time.Now()
	args := json.RawMessage(c.Function.Arguments)
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	args = s.nest(c.Function.Name, args)
	info := &events.Tool{CallID: c.ID, Name: c.Function.Name, Args: nil}
	if json.Valid(args) {
		info.Args = args
	}
	// The tool's own description of the call names it for front ends,
	// drives the gate and records what was written.
	t, known := s.cfg.Tools.Get(c.Function.Name)
	var acc tools.Access
	var accErr error
	if known && info.Args != nil {
		acc, accErr = tools.Describe(t, args)
		if accErr == nil {
			info.Kind, info.Subject, info.Paths = string(acc.Kind), acc.Subject(), acc.Paths()
		}
	}
	s.publish(events.Event{Type: events.ToolStart, Tool: info})
	var r callResult
	finish := func() callResult {
		// Every result passes here: known secrets never reach the
		// history, the transcript, the provider or the front ends.
		r.res.Content = tools.Truncate(s.cfg.Env.Redact(r.res.Content), s.cfg.Env.Limit())
		r.res.Summary = s.cfg.Env.Redact(r.res.Summary)
		end := *info
		end.Result, end.IsError, end.Denied, end.Summary = r.res.Content, r.res.IsError, r.denied, r.res.Summary
		if r.res.Diff != "" && !r.res.IsError {
			end.Diff = s.cfg.Env.Redact(r.res.Diff)
		}
		end.Millis = time.Since(start).Milliseconds()
		s.publish(events.Event{Type: events.ToolEnd, Tool: &end})
		if r.res.Todos != nil {
			s.publish(events.Event{Type: events.TodoUpdate, Todos: r.res.Todos})
		}
		return r
	}
	if !known {
		r.res = tools.Result{IsError: true, Content: fmt.Sprintf("Error: unknown tool %q; available tools: %s",
			c.Function.Name, strings.Join(s.cfg.Tools.Names(), ", "))}
		return finish()
	}
	if !json.Valid(args) {
		r.res = s.badArgs(c)
		return finish()
	}
	if accErr != nil {
		r.denied = true
		r.res = tools.Result{IsError: true, Content: "Error: " + accErr.Error(), Summary: "refused"}
		return finish()
	}
	if p, ok := t.(tools.Preparer); ok && s.cfg.Env != nil {
		// Prepare runs while the hooks, the gate and the checkpoint do;
		// the call waits where it needs what Prepare holds, and runOne
		// returns only after Prepare has.
		var prep sync.WaitGroup
		defer prep.Wait()
		prep.Go(func() { p.Prepare(s.cfg.Env) })
	}
	if s.cfg.Hooks != nil {
		if block, reason := s.cfg.Hooks.Before(ctx, s.cfg.ID, c.Function.Name, args); block {
			r.denied = true
			r.res = tools.Result{IsError: true, Content: "Error: blocked by a PreToolUse hook: " + reason, Summary: "blocked by hook"}
			return finish()
		}
	}
	var verdict tools.Verdict
	if s.cfg.Gate != nil {
		v := s.cfg.Gate.Authorize(ctx, tools.Invocation{Session: s.cfg.ID, Role: s.cfg.Role, Step: s.cfg.Step, CallID: c.ID,
			Tool: t, Args: args, Access: acc, Env: s.cfg.Env, Reason: reason})
		if !v.Allow {
			r.denied = true
			r.res = tools.Result{IsError: true, Content: "Error: " + v.Message, Summary: "refused"}
			return finish()
		}
		verdict = v
	}
	if err := ctx.Err(); err != nil {
		r.res = tools.Result{IsError: true, Content: "Error: cancelled"}
		return finish()
	}
	if s.cfg.BeforeChange != nil && !t.ReadOnly() && !acc.SessionOnly {
		if err := s.cfg.BeforeChange(ctx); err != nil {
			r.res = tools.Result{IsError: true, Content: "Error: " + err.Error(), Summary: "refused"}
			return finish()
		}
	}
	var done func(tools.Verdict) string
	if s.cfg.Guard != nil && !t.ReadOnly() {
		done = s.cfg.Guard.Watch(s.cfg.ID, s.cfg.Role, c.Function.Name)
	}
	res, err := t.Execute(ctx, s.cfg.Env, args)
	if err != nil {
		res.IsError = true
		res.Content = "Error: " + err.Error()
	}
	if done != nil {
		if msg := done(verdict); msg != "" {
			// Appended: the tail survives truncation.
			res.IsError, res.Halt = true, false
			if res.Content == "" {
				res.Content = msg
			} else {
				res.Content += "\n\n" + msg
			}
			res.Summary = "control file change reverted"
		}
	}
	if s.cfg.Hooks != nil {
		if extra := s.cfg.Hooks.After(ctx, s.cfg.ID, c.Function.Name, args, res); extra != "" {
			res.Content += "\n\nPostToolUse hook: " + extra
		}
	}
	if s.cfg.NestedRules != nil && !res.IsError && (acc.Kind == tools.KindRead || acc.Kind == tools.KindWrite) {
		if extra, files := s.cfg.NestedRules.Attach(acc.Paths()); extra != "" {
			res.Content += "\n\n" + extra
			r.rules, r.rulesText = files, extra
		}
	}
	r.res = res
	if !res.IsError {
		r.writes = acc.Writes
	}
	return finish()
}
