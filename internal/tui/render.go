package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/roles"
)

// renderState is what the transcript needs to remember between events.
// It belongs to the UI goroutine.
type renderState struct {
	// md renders the streamed answer; nil between answers.
	md *mdStream
	// tools are the calls started and not yet ended, by call id.
	tools map[string]string
	// steps are the plan steps running now, by id, with their titles.
	steps map[string]string
}

func newRenderState() renderState {
	return renderState{tools: map[string]string{}, steps: map[string]string{}}
}

// runningSteps names the plan steps in flight, for the status line, in
// format (a count and the ids).
func (r *renderState) runningSteps(format string) string {
	if len(r.steps) == 0 {
		return ""
	}
	ids := make([]string, 0, len(r.steps))
	for id := range r.steps {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return fmt.Sprintf(format, len(ids), strings.Join(ids, ", "))
}

// running names one call in flight, for the status line.
func (r *renderState) running() string {
	return oneLine(firstInFlight(r.tools), 60)
}

// Publish implements events.Sink. It never blocks: the event is rendered
// on the UI goroutine with the next frame.
func (a *App) Publish(e events.Event) {
	a.post(func() {
		a.countCost(e)
		a.render(e)
	})
}

// render adds one event to the transcript. It runs on the UI goroutine.
func (a *App) render(e events.Event) {
	worker := e.Parent != "" || e.Step != ""
	if e.Type == events.SessionStart && e.Role == roles.Planner && !worker {
		a.model = e.Text
	}
	if e.Type == events.UsageUpdate {
		if e.Usage != nil {
			a.usage.Add(*e.Usage)
		}
		if e.Context != nil && !worker {
			a.window = e.Context
		}
	}
	if e.Type == events.SessionStart && worker {
		a.workers[e.Session] = true
		if e.Title != "" {
			a.titles[e.Session] = e.Title
		}
	}
	if e.Type == events.Done {
		delete(a.workers, e.Session)
	}
	// Subagents, the planner and plan steps are blocks of their own,
	// live while they run (blocks.go); a worker's prose is its report
	// to its parent, not the answer.
	if a.agentEvent(e) {
		return
	}
	switch e.Type {
	case events.TextDelta:
		if worker {
			return
		}
		a.flushThought()
		a.streamText(e.Text)
		return
	case events.ReasoningDelta:
		if worker {
			return
		}
		a.endStream()
		a.reason(e.Text)
		return
	case events.UsageUpdate:
		return
	case events.ApprovalRequest:
		if e.Approval != nil {
			a.openApproval(e)
		}
		return
	case events.ApprovalResolved:
		if e.Approval != nil {
			a.closeApproval(e.Approval.ID)
		}
		return
	case events.QuestionRequest:
		if e.Question != nil {
			a.openQuestion(e)
		}
		return
	case events.QuestionResolved:
		if e.Question != nil {
			a.closeApproval(e.Question.ID)
		}
		return
	case events.ElicitationRequest:
		if e.Elicitation != nil {
			a.openElicitation(e)
		}
		return
	case events.ElicitationResolved:
		if e.Elicitation != nil {
			a.closeApproval(e.Elicitation.ID)
		}
		return
	case events.GoalUpdate:
		a.goal = e.Goal
		return
	case events.JobUpdate:
		a.jobEvent(e)
		return
	case events.History:
		a.endStream()
		a.flushThought()
		a.history(e)
		return
	}
	a.endStream()
	a.flushThought()
	prefix := ""
	if worker {
		prefix = "  [blue]" + escape(a.workerTag(e)) + "[-] "
	}
	switch e.Type {
	case events.SessionStart:
		if !worker {
			a.model = e.Text
		}
	case events.ToolStart:
		if e.Tool != nil {
			a.rs.tools[e.Tool.CallID] = e.Tool.Brief()
		}
	case events.ToolEnd:
		if e.Tool == nil {
			return
		}
		delete(a.rs.tools, e.Tool.CallID)
		who := ""
		if worker {
			who = a.workerTag(e)
		}
		a.keepCall(who, *e.Tool)
		if e.Tool.Diff != "" && !e.Tool.IsError && !e.Tool.Denied {
			a.diffBlock(prefix, e.Tool)
			return
		}
		a.line(prefix + toolLine(e.Tool))
		if e.Role != events.RoleUser {
			for _, l := range bashTail(e.Tool, 3) {
				a.line(prefix + "    [gray]│ " + escape(oneLine(l, 200)) + "[-]")
			}
		}
		if e.Role == events.RoleUser && !e.Tool.Denied {
			// A person's own "!cmd": they want to read what it printed.
			a.line(prefix + "[gray]" + escape(strings.TrimRight(e.Tool.Result, "\n")) + "[-]")
		}
	case events.TodoUpdate:
		if !worker {
			a.todos = e.Todos
		}
		a.line(prefix + "[::b]" + a.tr("todos") + "[::-]")
		for _, t := range e.Todos {
			a.line(prefix + "  " + todoLine(t))
		}
	case events.PlanReady:
		a.planLine(e)
	case events.StepUpdate:
		a.stepEvent(e)
	case events.Notice:
		a.line(prefix + "[yellow]" + a.tr("note:") + "[-] " + escape(e.Text))
	case events.HookRun:
		if h := e.Hook; h != nil && h.Outcome != events.HookOK && h.Outcome != events.HookSkipped {
			a.line(prefix + a.trf("[yellow]hook %s %s:[-] ", h.Event, h.Outcome) + escape(oneLine(h.Message, 160)))
		}
	case events.Compacted:
		if !worker && e.Context != nil {
			a.window = e.Context
		}
		a.line(prefix + "[blue]" + a.tr("compacted:") + "[-] " + escape(e.Text))
	case events.Validation:
		if v := e.Validation; v != nil {
			a.line(prefix + a.validationLine(v))
		}
	case events.Error:
		a.line(prefix + "[red]" + a.tr("error:") + "[-] " + escape(e.Error))
	case events.Done:
		if !worker && e.Text == "max_steps" {
			a.line("[yellow]" + a.tr("note:") + "[-] " + a.tr("stopped at the step limit; raise agent.max_steps (or --max-steps) to let it continue"))
		}
	}
}

// workerTag is the label of a worker session: "[role: what it does]"
// when its task call described it, else "[role id]"; "[step id]" for a
// plan worker.
func (a *App) workerTag(e events.Event) string {
	if e.Step != "" {
		return "[" + a.tr("step") + " " + e.Step + "]"
	}
	if t := a.titles[e.Session]; t != "" {
		return "[" + e.Role + ": " + oneLine(t, 48) + "]"
	}
	return "[" + e.Role + " " + shortID(e.Session) + "]"
}

// shortID is the random tail of a session id.
func shortID(id string) string {
	if i := strings.LastIndexByte(id, '-'); i >= 0 && len(id)-i > 4 {
		return id[i+1:]
	}
	return id
}

// ago says how long ago t was, compactly.
func (a *App) ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return a.tr("just now")
	case d < time.Hour:
		return a.trf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return a.trf("%dh ago", int(d.Hours()))
	}
	return a.trf("%dd ago", int(d.Hours()/24))
}

// history shows a resumed conversation: prompts, answers and the calls
// made, as the transcript showed them when they happened (in brief).
func (a *App) history(e events.Event) {
	for _, m := range e.Messages {
		switch m.Role {
		case providers.RoleUser:
			if a.transcript.GetOriginalLineCount() > 1 {
				a.write("\n")
			}
			a.line("[::b]›[::-] " + strings.ReplaceAll(escape(strings.TrimSpace(m.Content)), "\n", "\n  "))
		case providers.RoleAssistant:
			if t := strings.TrimSpace(m.Content); t != "" {
				md := a.newMarkdown()
				a.writeSoft(md.Feed(t) + md.Flush())
			}
			for _, c := range m.ToolCalls {
				a.line("[gray]→ " + escape(c.Function.Name) + "[-]")
			}
		}
	}
	a.notef("resumed session %s (%d turn(s))", shortID(e.Session), store.Turns(e.Messages))
}

// toolLine is one finished call: outcome mark, the call, and its summary
// or the first line of its error.
func toolLine(t *events.Tool) string {
	brief := escape(t.Brief())
	if t.IsError && t.Name == "bash" && strings.HasPrefix(t.Summary, "exit code") {
		// The command ran and failed: its exit code here, its last lines
		// below (bashTail).
		return "[red]✗[-] " + brief + " [red]· " + escape(t.Summary) + "[-]"
	}
	if t.IsError || t.Denied {
		first, _, _ := strings.Cut(strings.TrimSpace(t.Result), "\n")
		first = strings.TrimPrefix(first, "Error: ")
		return "[red]✗[-] " + brief + " [red]· " + escape(oneLine(first, 160)) + "[-]"
	}
	s := "[green]✓[-] " + brief
	if t.Summary != "" {
		s += " [gray]· " + escape(oneLine(t.Summary, 160)) + "[-]"
	}
	return s
}

// todoLine renders one todo as a checklist item.
func todoLine(t events.Todo) string {
	switch t.Status {
	case "completed":
		return "[green][x[][-] [gray]" + escape(t.Content) + "[-]"
	case "in_progress":
		text := t.Content
		if t.ActiveForm != "" {
			text = t.ActiveForm
		}
		return "[yellow][~[][-] " + escape(text)
	}
	return "[ [] " + escape(t.Content)
}

// planLine summarises a ready plan in the transcript; the overlay shows it
// whole.
func (a *App) planLine(e events.Event) {
	p := e.Plan
	if p == nil {
		a.line("[yellow]" + a.tr("plan ready") + "[-]")
		return
	}
	id := ""
	if e.Text != "" {
		id = " [gray]" + a.trf("(saved as %s)", escape(e.Text)) + "[-]"
	}
	a.line(a.trf("[::b]plan:[::-] %s%s", escape(p.Goal), id))
	for i, s := range p.Steps {
		a.line(fmt.Sprintf("  %d. %s", i+1, escape(s.Title)))
	}
}

// write appends markup to the transcript.
func (a *App) write(s string) {
	if strings.Contains(s, softMark) {
		s = stripSoft(s) // only the Markdown renderer writes soft lines
	}
	a.writeSoft(s)
}

// writeSoft appends markup that may hold soft lines (the Markdown
// renderer's): the transcript keeps them as they are, to lay them out
// again when the width changes, and shows them laid out for the width
// now.
func (a *App) writeSoft(s string) {
	s = guardLeadingBreak(s, a.atLineStart)
	a.atLineStart = strings.HasSuffix(s, "\n")
	if strings.Contains(s, softMark) {
		a.bl.soft = true
		a.show(layoutSoft(s, a.screenW))
	} else {
		a.show(s)
	}
	a.bl.tail.WriteString(s)
	a.bl.lines += strings.Count(s, "\n")
	a.bl.trim(a.opts.MaxLines)
	if !a.follow {
		a.unseen = true
	}
}

// line appends one finished line of markup.
func (a *App) line(s string) {
	a.endStream()
	a.write(s + "\n")
}

// note appends a dim line of plain text.
func (a *App) note(s string) { a.line("[gray]" + escape(a.tr(s)) + "[-]") }

// streamText appends streamed answer text, rendered from Markdown as it
// arrives (markdown.go). The model's text never reaches the transcript as
// markup: it cannot style or hide anything.
func (a *App) streamText(s string) {
	if a.rs.md == nil {
		a.rs.md = a.newMarkdown()
	}
	if out := a.rs.md.Feed(s); out != "" {
		a.writeSoft(out)
	}
}

// newMarkdown is a Markdown stream that writes list items and quotes as
// soft lines, wrapped at the transcript's width (the screen's: it has no
// border) under the item's text, and again after a resize.
func (a *App) newMarkdown() *mdStream {
	md := newMarkdown(a.th)
	md.soft = true
	return md
}

// endStream finishes streamed text: what was held is written and the line
// ended, so what follows starts on a line of its own.
func (a *App) endStream() {
	if a.rs.md == nil {
		return
	}
	if out := a.rs.md.Flush(); out != "" {
		a.writeSoft(out)
	}
	a.rs.md = nil
}

// guardLeadingBreak works around tview's TextView, which parses appended
// text from the start of its last line with the state it had there: a
// line break that comes first on an empty last line is then misread as a
// space in front of the next line, and the blank line is lost (a blank
// line between turns, or between paragraphs when a chunk starts with
// one). A space before such a break keeps it a break, and a blank line
// holding a space looks the same. atLineStart says the transcript ends
// with a line break.
func guardLeadingBreak(s string, atLineStart bool) string {
	if !atLineStart {
		return s
	}
	// Skip the tags in front ("[::b]", "[-]", `["b1"]`).
	i := 0
	for i < len(s) && s[i] == '[' {
		j := i + 1
		for j < len(s) && strings.IndexByte(`abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:#,_"-`, s[j]) >= 0 {
			j++
		}
		if j >= len(s) || s[j] != ']' {
			return s // text, not a tag
		}
		i = j + 1
	}
	if i < len(s) && s[i] == '\n' {
		return s[:i] + " " + s[i:]
	}
	return s
}
