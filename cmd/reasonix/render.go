package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
)

// textRenderer streams the answer of the top-level session to out and one
// line per tool call to errOut, so `reasonix run ... > answer.txt` captures
// just the answer.
type textRenderer struct {
	mu      sync.Mutex
	out     *bufio.Writer
	errOut  io.Writer
	midLine bool
	// showPlan prints a ready plan to errOut; `reasonix plan` without
	// --execute prints it to stdout itself instead.
	showPlan bool
	errMid   bool
}

func newTextRenderer(out, errOut io.Writer) *textRenderer {
	return &textRenderer{out: bufio.NewWriterSize(out, 4096), errOut: errOut}
}

func (r *textRenderer) Publish(e events.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Sessions started by another (subagents, tasks) are workers: their
	// text is not the answer.
	// Plan workers run in parallel: their text is progress, and the
	// run's answer is the summary of their steps.
	worker := e.Parent != "" || e.Step != ""
	switch e.Type {
	case events.StepUpdate:
		r.endLine()
		if s := e.StepResult; s != nil {
			line := s.Status
			switch {
			case s.Status == events.StepRunning && s.Summary == "":
				line += ": " + text.OneLine(s.Title)
			case s.Summary != "":
				line += ": " + text.Clip(text.OneLine(s.Summary), 160)
			}
			fmt.Fprintf(r.errOut, "[step %s] %s\n", s.Step, line)
		}
	case events.TextDelta:
		if worker {
			return
		}
		if e.Role == "planner" {
			// The planner's thinking aloud is progress, not the answer.
			io.WriteString(r.errOut, e.Text)
			r.errMid = !strings.HasSuffix(e.Text, "\n")
			return
		}
		r.out.WriteString(e.Text)
		r.midLine = !strings.HasSuffix(e.Text, "\n")
		// Flush per delta so the answer streams; bufio only merges the
		// writes inside one delta.
		r.out.Flush()
	case events.ToolStart:
		r.endLine()
		fmt.Fprintf(r.errOut, "%s %s %s\n", r.prefix(e), "→", toolLine(e.Tool))
	case events.ToolEnd:
		if e.Tool.IsError {
			first := e.Tool.Result
			if i := strings.IndexByte(first, '\n'); i >= 0 {
				first = first[:i]
			}
			fmt.Fprintf(r.errOut, "%s   ✗ %s\n", r.prefix(e), text.Clip(first, 160))
		} else if e.Tool.Summary != "" {
			fmt.Fprintf(r.errOut, "%s   ✓ %s\n", r.prefix(e), text.Clip(e.Tool.Summary, 160))
		}
	case events.Notice, events.Compacted:
		r.endLine()
		fmt.Fprintf(r.errOut, "%s note: %s\n", r.prefix(e), e.Text)
	case events.HookRun:
		// Quiet hooks stay quiet; a hook that blocked or failed is shown.
		if h := e.Hook; h != nil && h.Outcome != events.HookOK && h.Outcome != events.HookSkipped {
			r.endLine()
			fmt.Fprintf(r.errOut, "%s hook %s %s: %s %s\n", r.prefix(e), h.Event, h.Outcome, text.Clip(h.Command, 60), text.Clip(h.Message, 160))
		}
	case events.Validation:
		r.endLine()
		if v := e.Validation; v != nil {
			fmt.Fprintf(r.errOut, "%s validation: %s: %s\n", r.prefix(e), v.Command, validationOutcome(v))
		}
	case events.JobUpdate:
		// Started is the bash call's own line; output counts are for
		// live views.
		if j := e.Job; j != nil && !j.Running() {
			r.endLine()
			what := j.State
			if j.State == events.JobExited {
				what = fmt.Sprintf("exited with code %d", j.Code)
			}
			fmt.Fprintf(r.errOut, "%s background %s %s: %s\n", r.prefix(e), j.ID, what, text.Clip(text.OneLine(j.Command), 80))
		}
	case events.Error:
		r.endLine()
		fmt.Fprintf(r.errOut, "%s error: %s\n", r.prefix(e), e.Error)
	case events.PlanReady:
		r.endLine()
		if r.showPlan && e.Plan != nil {
			fmt.Fprintf(r.errOut, "\n%s\n", e.Plan.Markdown())
		}
	case events.SessionStart:
		if e.Parent != "" {
			fmt.Fprintf(r.errOut, "[%s %s] started\n", e.Role, shortID(e.Session))
		}
	case events.Done:
		if !worker {
			r.endLine()
		}
	}
}

func (r *textRenderer) prefix(e events.Event) string {
	if e.Step != "" {
		return fmt.Sprintf("[step %s]", e.Step)
	}
	if e.Parent != "" {
		return fmt.Sprintf("[%s %s]", e.Role, shortID(e.Session))
	}
	return "  "
}

func (r *textRenderer) endLine() {
	if r.errMid {
		io.WriteString(r.errOut, "\n")
		r.errMid = false
	}
	if r.midLine {
		r.out.WriteString("\n")
		r.midLine = false
	}
	r.out.Flush()
}

// Close flushes pending output.
func (r *textRenderer) Close() {
	r.mu.Lock()
	r.endLine()
	r.mu.Unlock()
}

func shortID(id string) string {
	if i := strings.LastIndexByte(id, '-'); i >= 0 && len(id)-i > 4 {
		return id[i+1:]
	}
	return id
}

// toolLine renders a call as one readable line (events.Tool.Brief).
func toolLine(t *events.Tool) string { return t.Brief() }

// streamJSON prints one event per line.
type streamJSON struct {
	mu  sync.Mutex
	enc *json.Encoder
	w   *bufio.Writer
}

func newStreamJSON(w io.Writer) *streamJSON {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &streamJSON{enc: enc, w: bw}
}

func (s *streamJSON) Publish(e events.Event) {
	var v any = e
	if e.Approval != nil && (e.Type == events.ApprovalRequest || e.Type == events.ApprovalResolved) {
		// Approval questions are flat objects a client answers by id:
		// {"type":"approval_request","id":…,"tool":…,"choices":[…]}.
		v = approvalLine{Type: e.Type, Session: e.Session, Role: e.Role, Parent: e.Parent, Approval: e.Approval}
	}
	if e.Question != nil && (e.Type == events.QuestionRequest || e.Type == events.QuestionResolved) {
		// Questions too: {"type":"question","id":…,"text":…,"choices":[…]}.
		v = questionLine{Type: e.Type, Session: e.Session, Role: e.Role, Parent: e.Parent, Step: e.Step, Question: e.Question}
	}
	if e.Elicitation != nil && (e.Type == events.ElicitationRequest || e.Type == events.ElicitationResolved) {
		// And requests for input: {"type":"elicitation_request","id":…,
		// "server":…,"mode":"form","fields":[…]}.
		v = elicitationLine{Type: e.Type, Session: e.Session, Role: e.Role, Parent: e.Parent, Elicitation: e.Elicitation}
	}
	s.emit(v)
}

// approvalLine is an approval event as one flat stream-json object.
type approvalLine struct {
	Type    events.Type `json:"type"`
	Session string      `json:"session,omitempty"`
	Role    string      `json:"role,omitempty"`
	Parent  string      `json:"parent,omitempty"`
	*events.Approval
}

// questionLine is an ask question as one flat stream-json object.
type questionLine struct {
	Type    events.Type `json:"type"`
	Session string      `json:"session,omitempty"`
	Role    string      `json:"role,omitempty"`
	Parent  string      `json:"parent,omitempty"`
	Step    string      `json:"step,omitempty"`
	*events.Question
}

// elicitationLine is a request for input as one flat stream-json object.
type elicitationLine struct {
	Type    events.Type `json:"type"`
	Session string      `json:"session,omitempty"`
	Role    string      `json:"role,omitempty"`
	Parent  string      `json:"parent,omitempty"`
	*events.Elicitation
}

// lineError reports a stdin line that could not be used; the run goes on.
func (s *streamJSON) lineError(line int, msg string) {
	s.emit(struct {
		Type    string `json:"type"`
		Line    int    `json:"line"`
		Message string `json:"message"`
	}{"error", line, msg})
}

func (s *streamJSON) emit(v any) {
	s.mu.Lock()
	_ = s.enc.Encode(v)
	s.w.Flush()
	s.mu.Unlock()
}

func (s *streamJSON) Close() {}

// jsonCollector keeps what the final JSON object needs: the notices (the
// run's error comes from its result).
type jsonCollector struct {
	mu    sync.Mutex
	notes []string
}

func (j *jsonCollector) Publish(e events.Event) {
	if e.Type != events.Notice && e.Type != events.Compacted {
		return
	}
	j.mu.Lock()
	j.notes = append(j.notes, e.Text)
	j.mu.Unlock()
}

func (j *jsonCollector) Close() {}

// finalJSON is the object `--output-format json` prints.
type finalJSON struct {
	Answer    string    `json:"answer"`
	Stop      string    `json:"stop,omitempty"`
	Steps     int       `json:"steps"`
	Session   string    `json:"session,omitempty"`
	Usage     usageJSON `json:"usage"`
	Cost      *float64  `json:"cost,omitempty"`
	Currency  string    `json:"currency,omitempty"`
	ToolCalls any       `json:"tool_calls"`
	PlanID    string    `json:"plan_id,omitempty"`
	Plan      any       `json:"plan,omitempty"`
	// PlanSteps are a plan run's steps with their outcomes.
	PlanSteps any      `json:"plan_steps,omitempty"`
	Goal      any      `json:"goal,omitempty"`
	Notices   []string `json:"notices,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// usageJSON is a run's usage as the json output shows it: the token
// counts, the cost, and the share of prompt tokens the cache served.
type usageJSON struct {
	providers.Usage
	CacheHitRatio float64 `json:"cache_hit_ratio"`
}

func newUsageJSON(u providers.Usage) usageJSON {
	return usageJSON{Usage: u, CacheHitRatio: round4(u.CacheHitRatio())}
}

func round4(f float64) float64 { return math.Round(f*10000) / 10000 }

// usageLine is the last line of a text run: tokens, cache hits, cost.
func usageLine(u providers.Usage) string {
	line := fmt.Sprintf("tokens: %d in (%d cached, %.1f%% hit), %d out", u.PromptTokens, u.CacheHitTokens, 100*u.CacheHitRatio(), u.CompletionTokens)
	if u.Cost > 0 || u.Currency != "" {
		line += " · cost " + agents.Money(u.Cost, u.Currency)
	}
	return line
}

// validationOutcome is one validation run on one line.
func validationOutcome(v *events.ValidationRun) string {
	if v.Passed {
		return fmt.Sprintf("passed (%d ms)", v.Millis)
	}
	return fmt.Sprintf("failed with exit code %d (attempt %d)", v.ExitCode, v.Attempt)
}
