package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/tools"
)

// `reasonix run --input-format stream-json` reads one JSON object per
// line on stdin, so another program drives Reasonix as a person would
// (docs/SPEC.md, "stream-json input"):
//
//	{"type":"user","message":{"role":"user","content":"…"}}   a turn
//	{"type":"approval","id":"ap-1","decision":"allow"}          an answer
//	{"type":"answer","id":"q-1","text":"…"}                     answer an ask question
//	{"type":"elicitation","id":"el-1","action":"accept","content":{…}}  answer an MCP server's request for input
//	{"type":"interrupt"}                                         cancel the running turn
//	{"type":"set_model","model":"provider/model"}               switch the model from the next turn
//	{"type":"set_effort","effort":"high"}                        reasoning effort from the next turn
//
// Approval questions go out as approval_request events on stdout, the
// ask tool's as question events, MCP servers' requests for input as
// elicitation_request events; the run waits for the answer line. Turns run in order; the run ends when stdin is
// closed and the last turn is done.

// inputLine is every shape an input line may take.
type inputLine struct {
	Type    string          `json:"type"`
	Message json.RawMessage `json:"message"`
	// approval
	ID       string `json:"id"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	// answer (to an ask question)
	Text string `json:"text"`
	// elicitation (an answer to an MCP server's request for input)
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
	// set_model, set_effort
	Model  string `json:"model"`
	Effort string `json:"effort"`
}

// userMessage is Claude Code's stream-json user message: content is a
// string or a list of content blocks, of which text blocks are read.
type userMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (m userMessage) text() (string, error) {
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return "", errors.New("message.content must be a string or a list of content blocks")
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	if len(parts) == 0 {
		return "", errors.New("message.content has no text block")
	}
	return strings.Join(parts, "\n"), nil
}

// streamSession drives an engine from stdin lines.
type streamSession struct {
	eng    *orchestrator.Engine
	broker *permission.Broker
	out    *streamJSON
	turns  turnQueue
	// history keeps the user turns as the prompt history; nil keeps none.
	history *store.History
}

// push queues a user turn and saves it to the prompt history.
func (s *streamSession) push(text string) {
	s.turns.push(queued{text: text})
	rememberPrompt(s.history, text, s.out.Publish)
}

// queued is a user turn, or a switch of the model or effort that takes
// effect between the turns around it (set: it returns what to report).
type queued struct {
	text string
	set  func() (string, error)
}

// turnQueue holds turns in order without bound, so the reader never
// blocks on a busy run and can always deliver approval answers.
type turnQueue struct {
	mu     sync.Mutex
	items  []queued
	closed bool
	wake   chan struct{}
}

func newTurnQueue() turnQueue { return turnQueue{wake: make(chan struct{}, 1)} }

func (q *turnQueue) push(t queued) {
	q.mu.Lock()
	q.items = append(q.items, t)
	q.mu.Unlock()
	q.signal()
}

func (q *turnQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *turnQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// next returns the oldest turn; ok is false once the queue is closed and
// empty, or ctx ended.
func (q *turnQueue) next(ctx context.Context) (queued, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			t := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return t, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return queued{}, false
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			return queued{}, false
		}
	}
}

// maxInputLine bounds one stdin line (a pasted file in a prompt).
const maxInputLine = 16 << 20

// read parses stdin until it closes, queueing turns in order and
// answering or interrupting at once. It closes s.turns at the end and
// tells the broker no one is left to answer.
func (s *streamSession) read(ctx context.Context, in io.Reader) {
	defer s.turns.close()
	defer s.broker.Close("stdin was closed; no one can answer")
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxInputLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if err := s.handle(ctx, line); err != nil {
			s.out.lineError(n, err.Error())
		}
		if ctx.Err() != nil {
			return
		}
	}
	if err := sc.Err(); err != nil {
		s.out.lineError(n+1, "read stdin: "+err.Error())
	}
}

func (s *streamSession) handle(ctx context.Context, line string) error {
	var in inputLine
	dec := json.NewDecoder(strings.NewReader(line))
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	switch in.Type {
	case "user":
		var m userMessage
		if len(in.Message) == 0 || json.Unmarshal(in.Message, &m) != nil {
			return errors.New(`a user line needs "message": {"role":"user","content":"…"}`)
		}
		if m.Role != "" && m.Role != "user" {
			return fmt.Errorf("message.role %q: want user", m.Role)
		}
		text, err := m.text()
		if err != nil {
			return err
		}
		if strings.TrimSpace(text) == "" {
			return errors.New("message.content is empty")
		}
		s.push(text)
		return nil
	case "approval":
		if in.ID == "" || in.Decision == "" {
			return errors.New(`an approval line needs "id" and "decision" (allow, allow_session, allow_always or deny)`)
		}
		return s.eng.Answer(in.ID, in.Decision, in.Reason)
	case "answer":
		if in.ID == "" || strings.TrimSpace(in.Text) == "" {
			return errors.New(`an answer line needs "id" (the question's) and "text"`)
		}
		return s.eng.AnswerQuestion(in.ID, in.Text)
	case "elicitation":
		if in.ID == "" || in.Action == "" {
			return errors.New(`an elicitation line needs "id" (the request's) and "action" (accept, decline or cancel; accept with "content")`)
		}
		return s.eng.AnswerElicitation(in.ID, events.ElicitAnswer{Action: in.Action, Content: in.Content})
	case "interrupt":
		s.eng.Interrupt()
		return nil
	case "set_model":
		if strings.TrimSpace(in.Model) == "" {
			return errors.New(`a set_model line needs "model" (provider/model)`)
		}
		// In order with the turns: a switch waits for the turn before it.
		s.turns.push(queued{set: func() (string, error) {
			key, err := s.eng.SetModel(in.Model)
			return "model " + key + " from the next request, saved in the session (the provider's prompt cache starts afresh)", err
		}})
		return nil
	case "set_effort":
		if strings.TrimSpace(in.Effort) == "" {
			return errors.New(`a set_effort line needs "effort" (low, medium, high or default)`)
		}
		s.turns.push(queued{set: func() (string, error) {
			return "reasoning effort " + in.Effort + " from the next request, saved in the session", s.eng.SetEffort(in.Effort)
		}})
		return nil
	case "":
		return errors.New(`missing "type" (user, approval, answer, elicitation, interrupt, set_model or set_effort)`)
	}
	return fmt.Errorf("unknown type %q (want user, approval, answer, elicitation, interrupt, set_model or set_effort)", in.Type)
}

// run takes the turns in order. It returns the last turn's error, unless
// the turn was interrupted from stdin.
func (s *streamSession) run(ctx context.Context) error {
	var last error
	for {
		item, ok := s.turns.next(ctx)
		if !ok {
			break
		}
		if item.set != nil {
			if msg, err := item.set(); err != nil {
				s.out.Publish(events.Event{Type: events.Error, Error: err.Error()})
			} else {
				s.out.Publish(events.Event{Type: events.Notice, Text: msg})
			}
			continue
		}
		err := s.turn(ctx, item.text)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.Canceled):
			s.out.Publish(events.Event{Type: events.Notice, Text: "turn interrupted"})
			last = nil
		case errors.Is(err, events.ErrPlanRejected):
			// Rejecting a plan is the driver's decision, not a failure.
			s.out.Publish(events.Event{Type: events.Notice, Text: "plan rejected; nothing was changed"})
			last = nil
		case err != nil:
			s.out.Publish(events.Event{Type: events.Error, Error: err.Error()})
			last = err
		default:
			last = nil
		}
	}
	return last
}

// turn runs one user line: "/plan TEXT" plans, asks for approval and
// runs the plan's workers, "/goal TEXT" pursues a goal (as in the TUI and
// the browser), anything else is a typed entry for Engine.Send.
func (s *streamSession) turn(ctx context.Context, text string) error {
	cmd, arg, _ := strings.Cut(strings.TrimSpace(text), " ")
	arg = strings.TrimSpace(arg)
	switch {
	case cmd == "/plan" && arg != "":
		err := s.eng.Plan(ctx, arg)
		// The plan ran in sessions of its own; the conversation's done
		// ends the line, as it ends every other turn.
		stop := "done"
		switch {
		case errors.Is(err, events.ErrPlanRejected):
			stop = "rejected"
		case errors.Is(err, context.Canceled):
			stop = "interrupted"
		case err != nil:
			stop = "failed"
		}
		s.out.Publish(events.Event{Type: events.Done, Session: s.eng.SessionID(), Role: roles.Executor, Text: stop})
		return err
	case cmd == "/goal" && arg == "clear":
		if err := s.eng.ClearGoal(); err != nil {
			return err
		}
		s.out.Publish(events.Event{Type: events.Notice, Text: "goal cleared"})
		return nil
	case cmd == "/goal" && arg != "":
		return s.eng.Goal(ctx, arg)
	case cmd == "/plan" || cmd == "/goal":
		return fmt.Errorf("usage: %s TEXT", cmd)
	}
	return s.eng.Send(ctx, text)
}

// streamPlanApprover asks the program on stdin about a plan before it
// runs: an approval_request with tool "plan", the plan's goal as its
// subject and its Markdown as the reason, answered allow (run it) or
// deny (reject it).
type streamPlanApprover struct{ broker *permission.Broker }

// Approve implements orchestrator.PlanApprover.
func (a streamPlanApprover) Approve(ctx context.Context, p orchestrator.Plan) (orchestrator.Plan, orchestrator.PlanDecision, error) {
	reply, err := a.broker.Approve(ctx, permission.Request{Tool: "plan", Subject: text.OneLine(p.Goal), Reason: p.Markdown(),
		Impact:  fmt.Sprintf("runs the plan's %d step(s) with parallel workers", len(p.Steps)),
		Choices: []permission.Answer{permission.AllowOnce, permission.DenyAnswer}})
	if err != nil {
		return p, orchestrator.PlanReject, err
	}
	if reply.Answer == permission.AllowOnce {
		return p, orchestrator.PlanApprove, nil
	}
	return p, orchestrator.PlanReject, nil
}

// runStreamInput is `run --input-format stream-json`: prompt, when not
// empty, is the first turn.
func runStreamInput(ctx context.Context, f runFlags, prompt string, io stdio) error {
	out := newStreamJSON(io.out)
	hub := &events.Hub{}
	unsubscribe := hub.Subscribe(out)
	defer unsubscribe()
	broker := permission.NewBroker(hub.Publish)
	defer broker.Close("the run ended")
	questions := tools.NewQuestions(hub.Publish)
	// A project's untrusted MCP servers are asked about like in the
	// interactive front ends: the program on stdin answers for a person.
	var plans orchestrator.PlanApprover = streamPlanApprover{broker}
	if os.Getenv(planApprovalEnv) == "auto" {
		plans = nil
	}
	app, err := assemble(assembleOptions{flags: f, sink: hub, stderr: io.err, approver: broker, planApprover: plans,
		waitMCP: ctx, asker: questions, askMCPTrust: true, elicitor: broker})
	if err != nil {
		return err
	}
	defer app.Close()
	eng, err := orchestrator.NewEngine(app.coord, hub, broker)
	if err != nil {
		return err
	}
	defer eng.Close()
	if err := resumeEngine(app, eng, f); err != nil {
		return err
	}
	s := &streamSession{eng: eng, broker: broker, out: out, turns: newTurnQueue(), history: app.history()}
	if prompt != "" {
		s.push(prompt)
	}
	readCtx, stopReading := context.WithCancel(ctx)
	read := make(chan struct{})
	go func() {
		defer close(read)
		s.read(readCtx, io.in)
	}()
	err = s.run(ctx)
	// Stop the reader: an interrupted run leaves it blocked on stdin, so
	// its read is ended with a deadline where the file allows one (pipes
	// and terminals do); otherwise the process exit ends it.
	stopReading()
	if f, ok := io.in.(*os.File); ok && f.SetReadDeadline(time.Now()) == nil {
		<-read
	}
	var unknown *orchestrator.UnknownCommandError
	if errors.As(err, &unknown) {
		return usageError{err}
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("run failed: %w", err)
	}
	return err
}
