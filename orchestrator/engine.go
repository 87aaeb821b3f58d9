package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
)

// Answerer answers approval requests by id: the permission broker.
type Answerer interface {
	Answer(id, choice, reason string) error
}

// Engine is the command side of the event stream: what every interactive
// front end (the TUI, `run --input-format stream-json`, later editors and
// the browser) sends back to the core. Front ends subscribe to events and
// call these methods; none of them touches the coordinator. Turns share
// one conversation, so they share one cache-stable prefix.
type Engine struct {
	c      *Coordinator
	hub    *events.Hub
	answer Answerer

	mu      sync.Mutex
	conv    *Conversation
	running map[int]context.CancelFunc
	next    int
	// model and effort are what a person chose this run (SetModel,
	// SetEffort), given to conversations the engine opens later.
	model, effort string
}

// maxRecord bounds one record's report in the next turn.
const maxRecord = 4 << 10

// record notes what ran outside the conversation (an executed plan, a
// skill run as a subagent) for its next turn (see [Conversation.Note]).
func (e *Engine) record(what string, res Result, err error) {
	var b strings.Builder
	b.WriteString(what)
	switch {
	case errors.Is(err, events.ErrPlanRejected):
		b.WriteString(": rejected; nothing was changed.")
	case err != nil:
		fmt.Fprintf(&b, ": failed: %s.", text.Clip(err.Error(), 500))
	default:
		b.WriteString(": done.")
	}
	if r := strings.TrimSpace(res.Text); r != "" {
		b.WriteString("\nReport:\n" + text.Clip(r, maxRecord))
	}
	if len(res.Files) > 0 {
		b.WriteString("\nFiles changed: " + strings.Join(res.Files, ", "))
	}
	e.conversation().Note(b.String())
}

// NewEngine opens a conversation on c. hub is the sink c publishes to;
// answer receives approval answers (nil: every Answer fails, as in a run
// that asks no one).
func NewEngine(c *Coordinator, hub *events.Hub, answer Answerer) (*Engine, error) {
	conv, err := c.Converse()
	if err != nil {
		return nil, err
	}
	return &Engine{c: c, hub: hub, answer: answer, conv: conv, running: map[int]context.CancelFunc{}}, nil
}

// Subscribe delivers every later event to s (and, to the first
// subscriber, those published before it). It returns the unsubscribe
// function.
func (e *Engine) Subscribe(s events.Sink) func() {
	if e.hub == nil {
		return func() {}
	}
	return e.hub.Subscribe(s)
}

// track runs f under a context Interrupt can cancel.
func (e *Engine) track(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e.mu.Lock()
	id := e.next
	e.next++
	e.running[id] = cancel
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.running, id)
		e.mu.Unlock()
	}()
	return f(ctx)
}

// fresh returns the conversation, first reopened when no turn has run in
// it yet and the extension tools have changed since it opened (MCP
// servers that came up after the front end started): nothing is cached
// yet, so the first request may as well carry them. It is reopened under
// its own id: a front end knows the conversation by it (an editor's ACP
// session is the conversation of the same id) and routes its events by
// it.
func (e *Engine) fresh() *Conversation {
	conv := e.conversation()
	if conv.used() || e.c.rt.Extensions == nil || sameNames(conv.extNames, toolNames(e.c.extensionTools())) {
		return conv
	}
	if next, err := e.c.converse(conv.ID()); err == nil {
		e.adopt(next)
		e.replace(next)
		return next
	}
	return conv
}

func (e *Engine) conversation() *Conversation {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conv
}

// Send runs one entry a person typed, expanded by [Coordinator.Expand]:
// chat text (its @references inlined), "/name args" for a custom command,
// a skill (a subagent skill in its own session, an inline one as this
// turn's instructions) or a prompt command, or "!cmd", which runs in the
// workspace without calling the model; its command, exit code and output
// ride in the next turn, so the cached prefix is untouched. An unknown
// /name is an [*UnknownCommandError] and nothing is sent.
func (e *Engine) Send(ctx context.Context, text string) error {
	return e.track(ctx, func(ctx context.Context) error {
		conv := e.fresh()
		ent, err := e.c.Expand(ctx, conv.ID(), text)
		var unknown *UnknownCommandError
		if errors.As(err, &unknown) {
			// The built-in commands every front end gets, unless a command
			// or skill of the same name took them.
			switch unknown.Name {
			case "compact":
				_, args, _ := slashCommand(text)
				return e.compact(ctx, conv, args)
			case "context":
				e.c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: conv.ID(), Text: ContextSummary(conv.Context())})
				return nil
			}
		}
		if err != nil {
			return err
		}
		switch {
		case ent.Shell != nil:
			conv.Note(ent.Shell.Record())
			return nil
		case ent.Subagent != "":
			res, err := e.c.RunSkill(ctx, ent.Subagent, ent.Args)
			e.record(fmt.Sprintf("The skill /%s ran as a subagent (%s)", ent.Subagent, quoted(ent.Args)), res, err)
			return err
		}
		release := e.c.PreApprove(conv.ID(), ent.Allow)
		defer release()
		_, err = conv.SendOn(ctx, e.c.withToolChanges(ent.Text), ent.Model, ent.Command)
		return err
	})
}

// slashCommand splits "/name args"; the name ends at white space.
func slashCommand(text string) (name, args string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") || len(t) < 2 {
		return "", "", false
	}
	name, args, _ = strings.Cut(t[1:], " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], name[i+1:]+" "+args
	}
	return name, strings.TrimSpace(args), true
}

// Plan plans text read-only, asks the plan approver, then executes the
// plan. A rejection returns events.ErrPlanRejected.
func (e *Engine) Plan(ctx context.Context, text string) error {
	if strings.TrimSpace(text) == "" {
		return errors.New("plan: nothing to plan")
	}
	return e.track(ctx, func(ctx context.Context) error {
		// The plan's workers are sessions of their own; the files they
		// change are checkpointed as part of the conversation's next turn,
		// which carries the plan's record, so rewinding to that turn
		// undoes the plan.
		res, err := e.c.planThenExecute(ctx, text, e.conversation().checkpointNextTurn)
		what := fmt.Sprintf("/plan %s", quoted(text))
		if res.Plan != nil {
			what += fmt.Sprintf(": the plan %q (%d steps) was approved and executed", res.Plan.Goal, len(res.Plan.Steps))
		}
		e.record(what, res, err)
		return err
	})
}

// Goal pursues text inside the conversation until it is done, blocked,
// out of turns or interrupted; each saved state is a GoalUpdate event.
// "resume" continues the conversation's goal.
func (e *Engine) Goal(ctx context.Context, text string) error {
	return e.track(ctx, func(ctx context.Context) error {
		var err error
		if strings.TrimSpace(text) == "resume" {
			_, err = e.conversation().ResumeGoal(ctx)
		} else {
			_, err = e.fresh().Goal(ctx, text)
		}
		return err
	})
}

// CurrentGoal returns the conversation's goal, if it has one.
func (e *Engine) CurrentGoal() (events.GoalState, bool, error) {
	g, ok := e.conversation().CurrentGoal()
	return g, ok, nil
}

// ClearGoal forgets the conversation's goal.
func (e *Engine) ClearGoal() error { return e.conversation().ClearGoal() }

// NewConversation replaces the conversation with a fresh session (a new
// prefix and history). Call it between turns.
func (e *Engine) NewConversation() error {
	conv, err := e.c.Converse()
	if err != nil {
		return err
	}
	e.adopt(conv)
	e.replace(conv)
	return nil
}

// replace makes conv the conversation and closes the one it replaces.
func (e *Engine) replace(conv *Conversation) {
	e.mu.Lock()
	old := e.conv
	e.conv = conv
	e.mu.Unlock()
	old.Close()
}

// Resume replaces the conversation with the saved session at path (the
// same id and file; see Coordinator.Resume) and publishes its history as
// a History event. Call it between turns.
func (e *Engine) Resume(path, modelRef string) error {
	conv, err := e.c.Resume(path, modelRef)
	if err != nil {
		return err
	}
	e.replace(conv)
	msgs := conv.w.Messages()
	e.c.rt.Sink.Publish(events.Event{Type: events.History, Session: conv.ID(), Role: conv.w.Role(),
		Messages: append([]providers.Message(nil), msgs...)})
	return nil
}

// Turns lists the user turns of the conversation, oldest first (for a
// rewind picker).
func (e *Engine) Turns() []string {
	var out []string
	for _, m := range e.conversation().w.Messages() {
		if m.Role == providers.RoleUser {
			out = append(out, personText(m.Content))
		}
	}
	return out
}

// personText is a user turn less the blocks Reasonix put in front of
// what the person wrote (<earlier-work>, <tool-changes>), so a rewound
// prompt comes back as it was typed.
func personText(turn string) string {
	for {
		rest, ok := "", false
		for _, tag := range []string{"earlier-work", "tool-changes"} {
			if strings.HasPrefix(turn, "<"+tag+">\n") {
				if _, after, found := strings.Cut(turn, "\n</"+tag+">\n\n"); found {
					rest, ok = after, true
				}
			}
		}
		if !ok {
			return turn
		}
		turn = rest
	}
}

// Rewind takes the conversation and/or the workspace back to just before
// user turn to, or undoes the newest rewind (see [Rewind]), then reloads
// the conversation from its file. Call it between turns.
func (e *Engine) Rewind(ctx context.Context, to int, undo bool) (events.RewindResult, error) {
	conv := e.conversation()
	path := conv.w.path
	if path == "" || store.Turns(conv.w.Messages()) == 0 && !undo {
		return events.RewindResult{}, errors.New("this conversation has no turns to rewind")
	}
	rep, err := Rewind(ctx, RewindOptions{Path: path, To: to, Undo: undo, Checkpoints: e.c.rt.Checkpoints, Seals: e.c.seals})
	if rep == nil {
		return events.RewindResult{}, err
	}
	res := rep.Result()
	if rerr := e.Resume(path, ""); rerr != nil {
		return res, errors.Join(err, rerr)
	}
	return res, err
}

// Sessions lists this project's other conversations that have at least
// one turn, newest first.
func (e *Engine) Sessions() ([]store.Summary, error) {
	dir := e.c.SessionsDir()
	if dir == "" {
		return nil, nil
	}
	list, err := Conversations(dir)
	if err != nil {
		return nil, err
	}
	cur := e.SessionID()
	out := list[:0]
	for _, s := range list {
		if s.ID != cur { // the conversation in use is not one to resume
			out = append(out, s)
		}
	}
	return out, nil
}

// SessionID is the current conversation's id.
func (e *Engine) SessionID() string { return e.conversation().ID() }

// Commands lists the slash commands the engine runs through Send: custom
// commands, skills and prompt commands.
func (e *Engine) Commands() []events.Command { return e.c.Commands() }

// Answer answers the approval request id (see events.Approval.Choices).
func (e *Engine) Answer(id, choice, reason string) error {
	if e.answer == nil {
		return fmt.Errorf("no approval request %q: this run asks no one", id)
	}
	return e.answer.Answer(id, choice, reason)
}

// AnswerElicitation answers an MCP server's pending request for input id
// (events.Elicitation): accept with the form's values, decline or
// cancel. Values the form refuses are an error, and the request is asked
// again with the reason.
func (e *Engine) AnswerElicitation(id string, a events.ElicitAnswer) error {
	el, ok := e.answer.(interface {
		AnswerElicitation(id string, a events.ElicitAnswer) error
	})
	if !ok {
		return fmt.Errorf("no request for input %q: this run asks no one", id)
	}
	return el.AnswerElicitation(id, a)
}

// AnswerQuestion answers the ask tool's pending question id.
func (e *Engine) AnswerQuestion(id, answer string) error {
	q, ok := e.c.rt.Env.Asker.(interface{ Answer(id, answer string) error })
	if !ok {
		return fmt.Errorf("no question %q: this run asks no one", id)
	}
	return q.Answer(id, answer)
}

// DeclineQuestion ends the ask tool's pending question id without an
// answer (the front end withdrew it): the model is told no one can answer
// and goes on under an assumption it states.
func (e *Engine) DeclineQuestion(id string) error {
	q, ok := e.c.rt.Env.Asker.(interface{ Decline(id string) error })
	if !ok {
		return fmt.Errorf("no question %q: this run asks no one", id)
	}
	return q.Decline(id)
}

// Interrupt cancels every running turn, plan or goal.
func (e *Engine) Interrupt() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, cancel := range e.running {
		cancel()
	}
}

// Close closes the conversation; it waits for a running turn to end, so
// interrupt first.
func (e *Engine) Close() { e.conversation().Close() }

// quoted is s in quotes, shortened to one line.
func quoted(s string) string {
	return strconv.Quote(text.Clip(text.OneLine(s), 200))
}
