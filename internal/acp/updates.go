package acp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
)

// Publish turns one event into session updates. It receives every event
// of every engine the host opened: events of a session's subagents go to
// that session as tool calls; only the conversation's own text becomes
// the agent's message.
func (s *Server) Publish(e events.Event) {
	if e.Session == "" && (e.Type == events.ApprovalRequest || e.Type == events.ApprovalResolved) {
		s.sessionless(e)
		return
	}
	ss, main := s.route(e)
	if ss == nil {
		switch e.Type {
		case events.Notice, events.Compacted, events.Error:
			if s.unrouted != nil {
				s.unrouted(e)
			}
		}
		return
	}
	switch e.Type {
	case events.TextDelta:
		if main && e.Text != "" {
			s.update(ss.id, sdk.UpdateAgentMessageText(e.Text))
		}
	case events.ReasoningDelta:
		if main && e.Text != "" {
			s.update(ss.id, sdk.UpdateAgentThoughtText(e.Text))
		}
	case events.ToolStart:
		s.toolStart(ss, e)
	case events.ToolEnd:
		s.toolEnd(ss, e)
	case events.ApprovalRequest:
		s.ask(ss, e)
	case events.QuestionRequest:
		s.question(ss, e)
	case events.QuestionResolved:
		if q := e.Question; q != nil {
			s.settled(q.ID)
			answer := "Answer: " + q.Answer
			if q.Answer == "" || q.Answer == events.QuestionSkipped {
				answer = "Not answered: the model goes on under an assumption it states."
			}
			s.update(ss.id, sdk.UpdateToolCall(questionID(e.Session, q.ID), sdk.WithUpdateStatus(sdk.ToolCallStatusCompleted),
				sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text.Clip(answer, maxResult)))})))
		}
	case events.ApprovalResolved:
		if a := e.Approval; a != nil {
			s.settled(a.ID)
		}
		if a := e.Approval; a != nil && a.Choice != "" && a.Choice != events.ChoiceDeny && a.CallID != "" {
			s.update(ss.id, sdk.UpdateToolCall(callID(e.Session, a.CallID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
		}
	case events.TodoUpdate:
		s.update(ss.id, sdk.UpdatePlan(todoEntries(e.Todos)...))
	case events.PlanReady:
		if e.Plan != nil {
			s.update(ss.id, sdk.UpdatePlan(planEntries(*e.Plan)...))
		}
	case events.Notice, events.Compacted:
		if e.Text != "" {
			s.update(ss.id, sdk.UpdateAgentThoughtText("\n[reasonix] "+e.Text+"\n"))
		}
	case events.Error:
		if main && e.Error != "" {
			s.update(ss.id, sdk.UpdateAgentMessageText("\n\nError: "+e.Error+"\n"))
		}
	case events.History:
		if main {
			s.replay(ss, e.Session, e.Messages)
		}
	}
}

// route finds the ACP session an event belongs to, and whether it came
// from the conversation itself rather than one of its subagents.
func (s *Server) route(e events.Event) (*session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[e.Session]; ss != nil {
		return ss, true
	}
	if id, ok := s.owner[e.Session]; ok {
		return s.sessions[id], s.speaks[e.Session]
	}
	if e.Parent != "" {
		root := e.Parent
		if id, ok := s.owner[root]; ok {
			root = id
		}
		if ss := s.sessions[root]; ss != nil {
			s.owner[e.Session] = root
			return ss, false
		}
	}
	// The planner and executor sessions of a plan prompt have no parent:
	// they belong to the session planning, and their text is its answer.
	if s.planning != nil && e.Session != "" {
		s.owner[e.Session] = s.planning.id
		s.speaks[e.Session] = true
		return s.planning, true
	}
	return nil, false
}

// callID names a tool call uniquely within an ACP session: model call ids
// repeat across subagent sessions.
func callID(session, call string) sdk.ToolCallId {
	return sdk.ToolCallId(session + "/" + call)
}

func kindOf(k string) sdk.ToolKind {
	switch k {
	case "read":
		return sdk.ToolKindRead
	case "write":
		return sdk.ToolKindEdit
	case "execute":
		return sdk.ToolKindExecute
	case "network":
		return sdk.ToolKindFetch
	case "delegate":
		return sdk.ToolKindThink
	}
	return sdk.ToolKindOther
}

func title(name, subject string) string {
	if subject == "" {
		return name
	}
	return name + ": " + text.Clip(text.OneLine(subject), 120)
}

func (s *Server) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.host.Workspace(), p)
}

func (s *Server) locations(paths []string) []sdk.ToolCallLocation {
	var out []sdk.ToolCallLocation
	for _, p := range paths {
		out = append(out, sdk.ToolCallLocation{Path: s.abs(p)})
	}
	return out
}

func (s *Server) toolStart(ss *session, e events.Event) {
	t := e.Tool
	if t == nil {
		return
	}
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(kindOf(t.Kind)), sdk.WithStartStatus(sdk.ToolCallStatusPending)}
	if l := s.locations(t.Paths); len(l) > 0 {
		opts = append(opts, sdk.WithStartLocations(l))
	}
	if t.Args != nil {
		opts = append(opts, sdk.WithStartRawInput(t.Args))
	}
	id := callID(e.Session, t.CallID)
	s.update(ss.id, sdk.StartToolCall(id, title(t.Name, t.Subject), opts...))
	if t.Kind != "write" || len(t.Paths) == 0 {
		return
	}
	// Keep the files as they are now, so the end of the call can show
	// what it changed as a diff the editor renders.
	var before []fileText
	for _, p := range t.Paths {
		before = append(before, readText(s.abs(p)))
	}
	ss.mu.Lock()
	if ss.before == nil {
		ss.before = map[string][]fileText{}
	}
	ss.before[string(id)] = before
	ss.mu.Unlock()
}

// readText reads a regular text file of bounded size; ok is false when
// it does not exist, is too big or is not text.
func readText(path string) fileText {
	ft := fileText{path: path}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxDiffFile {
		return ft
	}
	b, err := os.ReadFile(path)
	if err != nil || strings.IndexByte(string(b), 0) >= 0 {
		return ft
	}
	ft.text, ft.ok = string(b), true
	return ft
}

func (s *Server) toolEnd(ss *session, e events.Event) {
	t := e.Tool
	if t == nil {
		return
	}
	id := callID(e.Session, t.CallID)
	ss.mu.Lock()
	before := ss.before[string(id)]
	delete(ss.before, string(id))
	ss.mu.Unlock()
	status := sdk.ToolCallStatusCompleted
	if t.IsError || t.Denied {
		status = sdk.ToolCallStatusFailed
	}
	var content []sdk.ToolCallContent
	if status == sdk.ToolCallStatusCompleted {
		for _, old := range before {
			now := readText(old.path)
			if !now.ok || (old.ok && old.text == now.text) {
				continue
			}
			if old.ok {
				content = append(content, sdk.ToolDiffContent(old.path, now.text, old.text))
			} else {
				content = append(content, sdk.ToolDiffContent(old.path, now.text))
			}
		}
	}
	if r := strings.TrimSpace(t.Result); r != "" {
		content = append(content, sdk.ToolContent(sdk.TextBlock(text.Clip(r, maxResult))))
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	if len(content) > 0 {
		opts = append(opts, sdk.WithUpdateContent(content))
	}
	s.update(ss.id, sdk.UpdateToolCall(id, opts...))
}

// startAsk counts a request to the editor in flight, which Serve waits
// for, registers it under id for the session, and returns the connection
// to send it on with the request's own context, ended by [Server.withdraw]
// and [Server.settled]. It is false, counting nothing, once the connection
// is closing: Serve cancels ctx under s.mu, so no request is counted after
// its wait has begun. The caller runs the request on a goroutine that
// calls done when it returns.
func (s *Server) startAsk(ss *session, id string, refuse func()) (conn *sdk.AgentSideConnection, ctx context.Context, done func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil || s.ctx.Err() != nil {
		return nil, nil, nil, false
	}
	s.asks.Add(1)
	ctx, cancel := context.WithCancel(s.ctx)
	a := &editorAsk{session: ss, cancel: cancel, refuse: refuse}
	s.inflight[id] = a
	done = func() {
		s.mu.Lock()
		if s.inflight[id] == a {
			delete(s.inflight, id)
		}
		s.mu.Unlock()
		cancel()
		s.asks.Done()
	}
	return s.conn, ctx, done, true
}

// ask forwards an approval question to the editor and the editor's
// choice back to the engine. It does not block the publisher: the
// question waits for a person.
func (s *Server) ask(ss *session, e events.Event) {
	a := e.Approval
	eng := ss.engine()
	if a == nil || eng == nil {
		return
	}
	conn, ctx, done, ok := s.startAsk(ss, a.ID, func() { _ = eng.Answer(a.ID, events.ChoiceDeny, "the prompt was cancelled in the editor") })
	if !ok {
		_ = eng.Answer(a.ID, events.ChoiceDeny, "the editor disconnected")
		return
	}
	req := sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(ss.id),
		Options:   options(a),
		ToolCall:  s.approvalCall(e.Session, a),
	}
	go func() {
		defer done()
		choice, reason := events.ChoiceDeny, "cancelled in the editor"
		resp, err := conn.RequestPermission(ctx, req)
		switch {
		case err != nil:
			reason = "the editor did not answer: " + err.Error()
		case resp.Outcome.Selected != nil && a.Offers(string(resp.Outcome.Selected.OptionId)):
			choice, reason = string(resp.Outcome.Selected.OptionId), ""
		}
		// After a withdrawal the approval is no longer pending and this
		// answer is refused, which is what is wanted.
		_ = eng.Answer(a.ID, choice, reason)
	}()
}

// SkipOption is the option id of a question's permission request that
// answers nothing, as Esc does in the TUI.
const SkipOption = "reasonix-skip"

// question puts the ask tool's question to the editor. ACP has no free
// question, so it goes as a permission request whose options are the
// question's choices (the option id and name are the choice) and a skip;
// the host's question broker only publishes questions with choices (see
// tools.NewChoiceQuestions). A cancelled or failed request declines the
// question: the model is told no one can answer.
func (s *Server) question(ss *session, e events.Event) {
	q := e.Question
	eng := ss.engine()
	if q == nil || eng == nil {
		return
	}
	conn, ctx, done, ok := s.startAsk(ss, q.ID, func() { _ = eng.DeclineQuestion(q.ID) })
	if !ok {
		_ = eng.DeclineQuestion(q.ID)
		return
	}
	opts := questionOptions(q)
	call := questionCall(e)
	// The question is a call of its own in the editor's list, shown
	// before it is asked about.
	s.update(ss.id, sdk.StartToolCall(call.ToolCallId, *call.Title, sdk.WithStartKind(sdk.ToolKindOther),
		sdk.WithStartStatus(sdk.ToolCallStatusPending), sdk.WithStartContent(call.Content)))
	req := sdk.RequestPermissionRequest{SessionId: sdk.SessionId(ss.id), Options: opts, ToolCall: call}
	go func() {
		defer done()
		resp, err := conn.RequestPermission(ctx, req)
		if err != nil || resp.Outcome.Selected == nil {
			_ = eng.DeclineQuestion(q.ID)
			return
		}
		picked := string(resp.Outcome.Selected.OptionId)
		if picked == SkipOption {
			_ = eng.AnswerQuestion(q.ID, events.QuestionSkipped)
			return
		}
		for _, o := range opts {
			if string(o.OptionId) == picked {
				_ = eng.AnswerQuestion(q.ID, picked)
				return
			}
		}
		_ = eng.DeclineQuestion(q.ID) // an option never offered
	}()
}

// questionOptions are a question's choices, each once, then the skip.
func questionOptions(q *events.Question) []sdk.PermissionOption {
	var out []sdk.PermissionOption
	seen := map[string]bool{SkipOption: true}
	for _, c := range q.Choices {
		if strings.TrimSpace(c) == "" || seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, sdk.PermissionOption{OptionId: sdk.PermissionOptionId(c), Name: c, Kind: sdk.PermissionOptionKindAllowOnce})
	}
	return append(out, sdk.PermissionOption{OptionId: SkipOption, Name: "Skip (let it assume)", Kind: sdk.PermissionOptionKindRejectOnce})
}

// questionID names a question's tool call: a question is not a call of
// its own in the editor's list, so it gets one.
func questionID(session, id string) sdk.ToolCallId {
	return sdk.ToolCallId(session + "/question/" + id)
}

// questionCall is the tool call a question is shown as: who asks and the
// question.
func questionCall(e events.Event) sdk.ToolCallUpdate {
	q := e.Question
	who := "Question"
	switch {
	case e.Step != "":
		who = "Step " + e.Step + " asks"
	case e.Role != "" && e.Role != "executor":
		who = "The " + e.Role + " asks"
	}
	return sdk.ToolCallUpdate{
		ToolCallId: questionID(e.Session, q.ID),
		Title:      sdk.Ptr(title(who, q.Text)),
		Kind:       sdk.Ptr(sdk.ToolKindOther),
		Status:     sdk.Ptr(sdk.ToolCallStatusPending),
		Content:    []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text.Clip(q.Text, maxResult)))},
	}
}

// options are the gate's choices as ACP permission options; the option
// id is the choice itself.
func options(a *events.Approval) []sdk.PermissionOption {
	var out []sdk.PermissionOption
	for _, c := range a.Choices {
		o := sdk.PermissionOption{OptionId: sdk.PermissionOptionId(c)}
		switch c {
		case events.ChoiceAllow:
			o.Name, o.Kind = "Allow once", sdk.PermissionOptionKindAllowOnce
		case events.ChoiceAllowSession:
			o.Name, o.Kind = "Allow for this session", sdk.PermissionOptionKindAllowAlways
			if len(a.Rules) > 0 {
				o.Name += " (" + strings.Join(a.Rules, ", ") + ")"
			}
		case events.ChoiceAllowAlways:
			o.Name, o.Kind = "Always allow", sdk.PermissionOptionKindAllowAlways
			if len(a.Rules) > 0 {
				o.Name += " (saves " + strings.Join(a.Rules, ", ") + ")"
			}
		case events.ChoiceDeny:
			o.Name, o.Kind = "Deny", sdk.PermissionOptionKindRejectOnce
		default:
			o.Name, o.Kind = c, sdk.PermissionOptionKindRejectOnce
		}
		out = append(out, o)
	}
	return out
}

// approvalCall is the tool call a permission request is about, with what
// a person needs to decide: the command or the diff, the model's reason
// and the impact.
func (s *Server) approvalCall(session string, a *events.Approval) sdk.ToolCallUpdate {
	var b strings.Builder
	if a.Reason != "" {
		fmt.Fprintf(&b, "Why: %s\n", a.Reason)
	}
	if a.Impact != "" {
		fmt.Fprintf(&b, "Impact: %s\n", a.Impact)
	}
	if a.Command != "" {
		fmt.Fprintf(&b, "\n```sh\n%s\n```\n", a.Command)
	}
	for _, p := range a.Preview {
		if p.Diff != "" {
			fmt.Fprintf(&b, "\n```diff\n%s\n```\n", strings.TrimRight(text.Clip(p.Diff, maxResult), "\n"))
		}
	}
	if a.Dangerous {
		b.WriteString("\nThis is a dangerous command: an answer covers this one call only.\n")
	}
	call := sdk.ToolCallUpdate{
		ToolCallId: callID(session, a.CallID),
		Title:      sdk.Ptr(title(a.Tool, a.Subject)),
		Status:     sdk.Ptr(sdk.ToolCallStatusPending),
	}
	if a.CallID == "" {
		call.ToolCallId = sdk.ToolCallId(session + "/" + a.ID)
	}
	if b.Len() > 0 {
		call.Content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(strings.TrimSpace(b.String())))}
	}
	var paths []string
	for _, p := range a.Preview {
		paths = append(paths, p.Path)
	}
	call.Locations = s.locations(paths)
	return call
}

func todoEntries(todos []events.Todo) []sdk.PlanEntry {
	out := make([]sdk.PlanEntry, 0, len(todos))
	for _, t := range todos {
		st := sdk.PlanEntryStatusPending
		switch t.Status {
		case "in_progress":
			st = sdk.PlanEntryStatusInProgress
		case "completed":
			st = sdk.PlanEntryStatusCompleted
		}
		out = append(out, sdk.PlanEntry{Content: t.Content, Priority: sdk.PlanEntryPriorityMedium, Status: st})
	}
	return out
}

func planEntries(p events.Plan) []sdk.PlanEntry {
	out := make([]sdk.PlanEntry, 0, len(p.Steps))
	for _, st := range p.Steps {
		c := st.Title
		if st.ID != "" {
			c = st.ID + ": " + c
		}
		out = append(out, sdk.PlanEntry{Content: c, Priority: sdk.PlanEntryPriorityMedium, Status: sdk.PlanEntryStatusPending})
	}
	return out
}

// replay sends a loaded conversation as updates, as session/load asks.
func (s *Server) replay(ss *session, session string, msgs []providers.Message) {
	for _, m := range msgs {
		switch m.Role {
		case providers.RoleUser:
			if m.Content != "" {
				s.update(ss.id, sdk.UpdateUserMessageText(m.Content))
			}
		case providers.RoleAssistant:
			if m.ReasoningContent != "" {
				s.update(ss.id, sdk.UpdateAgentThoughtText(m.ReasoningContent))
			}
			if m.Content != "" {
				s.update(ss.id, sdk.UpdateAgentMessageText(m.Content))
			}
			for _, c := range m.ToolCalls {
				s.update(ss.id, sdk.StartToolCall(callID(session, c.ID), c.Function.Name,
					sdk.WithStartStatus(sdk.ToolCallStatusCompleted)))
			}
		case providers.RoleTool:
			if m.ToolCallID != "" && m.Content != "" {
				s.update(ss.id, sdk.UpdateToolCall(callID(session, m.ToolCallID),
					sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text.Clip(m.Content, maxResult)))})))
			}
		}
	}
}

// planApprover asks the editor to approve the plan of the running plan
// prompt, with a permission request showing the plan.
type planApprover struct{ s *Server }

// PlanApprover returns the approver the coordinator's plans go through
// (its Approve method has orchestrator.PlanApprover's signature).
func (s *Server) PlanApprover() interface {
	Approve(ctx context.Context, p events.Plan) (events.Plan, events.PlanDecision, error)
} {
	return planApprover{s}
}

// Approve asks the editor whether to run p.
func (pa planApprover) Approve(ctx context.Context, p events.Plan) (events.Plan, events.PlanDecision, error) {
	s := pa.s
	s.mu.Lock()
	ss, conn := s.planning, s.conn
	s.nextPlan++
	n := s.nextPlan
	s.mu.Unlock()
	if ss == nil || conn == nil {
		return p, events.PlanReject, fmt.Errorf("no editor session is planning")
	}
	req := sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(ss.id),
		Options: []sdk.PermissionOption{
			{OptionId: "run", Name: "Run the plan", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: "reject", Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
		ToolCall: sdk.ToolCallUpdate{
			ToolCallId: sdk.ToolCallId(fmt.Sprintf("plan-%d", n)),
			Title:      sdk.Ptr("Run this plan: " + text.Clip(text.OneLine(p.Goal), 100)),
			Kind:       sdk.Ptr(sdk.ToolKindThink),
			Status:     sdk.Ptr(sdk.ToolCallStatusPending),
			Content:    []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(planMarkdown(p)))},
		},
	}
	resp, err := conn.RequestPermission(ctx, req)
	if err != nil {
		return p, events.PlanReject, fmt.Errorf("plan approval: %w", err)
	}
	if resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == "run" {
		return p, events.PlanApprove, nil
	}
	return p, events.PlanReject, nil
}

func planMarkdown(p events.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Goal:** %s\n\n", p.Goal)
	for i, st := range p.Steps {
		fmt.Fprintf(&b, "%d. %s", i+1, st.Title)
		if st.ID != "" {
			fmt.Fprintf(&b, " (`%s`", st.ID)
			if len(st.DependsOn) > 0 {
				fmt.Fprintf(&b, ", after %s", strings.Join(st.DependsOn, ", "))
			}
			b.WriteString(")")
		}
		if len(st.Files) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(st.Files, ", "))
		}
		b.WriteString("\n")
	}
	if len(p.Risks) > 0 {
		b.WriteString("\n**Risks:**\n")
		for _, r := range p.Risks {
			fmt.Fprintf(&b, "- %s\n", r)
		}
	}
	if p.Validation != "" {
		fmt.Fprintf(&b, "\n**Validation:** `%s`\n", p.Validation)
	}
	return b.String()
}
