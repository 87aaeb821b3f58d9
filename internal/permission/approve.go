package permission

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

// Answer is a person's reply to an approval request; its values are the
// choices of events.Approval.
type Answer string

// Answers.
const (
	AllowOnce    Answer = events.ChoiceAllow
	AllowSession Answer = events.ChoiceAllowSession
	AllowAlways  Answer = events.ChoiceAllowAlways
	DenyAnswer   Answer = events.ChoiceDeny
)

// ParseAnswer reads an answer as a front end sends it; it accepts the
// choice names and short forms (y, once, session, always, n, no).
func ParseAnswer(s string) (Answer, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "allow", "allow_once", "once", "y", "yes":
		return AllowOnce, nil
	case "allow_session", "session":
		return AllowSession, nil
	case "allow_always", "always":
		return AllowAlways, nil
	case "deny", "n", "no":
		return DenyAnswer, nil
	}
	return "", fmt.Errorf("approval answer %q: want allow, allow_session, allow_always or deny", s)
}

// Reply is an answer with the person's optional reason, which a refused
// call passes on to the model.
type Reply struct {
	Answer Answer
	Reason string
}

// Request is what a person is asked to approve.
type Request struct {
	Session string
	Role    string
	// CallID is the tool call asked about.
	CallID string
	// Step is the plan step whose worker asks ("" outside plan runs).
	Step string
	Tool string
	// Subject is the command or the paths, one line.
	Subject string
	// Command is the exact bash command line (bash only).
	Command string
	// Preview is the structured view of an edit, when the tool offers one.
	Preview []tools.Preview
	// Reason is the text the model gave before the call.
	Reason string
	// Impact says what the call would do, in a sentence.
	Impact string
	// Dangerous is set for the dangerous class: the answer only ever
	// applies to this one call.
	Dangerous bool
	// Rules are what "always allow" would save (empty when dangerous).
	Rules []string
	// Choices are the answers the gate accepts for this request.
	Choices []Answer
}

// Approver asks a person. Headless runs have none. Approve must honour
// ctx.
type Approver interface {
	Approve(ctx context.Context, req Request) (Reply, error)
}

// Broker is the one way a person is asked: it publishes each request as
// an ApprovalRequest event with an id and the choices the gate offers,
// and waits until a front end answers that id through [Broker.Answer]
// (the TUI's overlay, a stream-json answer line, an editor). When the
// call's context ends first, the request is withdrawn with an
// ApprovalResolved event, so front ends can close what they show.
type Broker struct {
	publish func(events.Event)

	mu      sync.Mutex
	next    int
	pending map[string]*pendingApproval
	closed  string
	// elicits are the MCP servers' requests for input waiting for an
	// answer (elicit.go).
	nextElicit int
	elicits    map[string]*pendingElicit
}

type pendingApproval struct {
	reply   chan Reply
	req     *events.Approval
	session string
	role    string
}

// NewBroker returns a broker publishing to publish.
func NewBroker(publish func(events.Event)) *Broker {
	return &Broker{publish: publish, pending: map[string]*pendingApproval{}}
}

// Approve publishes req and waits for its answer or for ctx.
func (b *Broker) Approve(ctx context.Context, req Request) (Reply, error) {
	ev := &events.Approval{CallID: req.CallID, Tool: req.Tool, Subject: req.Subject, Command: req.Command, Reason: req.Reason,
		Impact: req.Impact, Dangerous: req.Dangerous, Preview: req.Preview, Rules: req.Rules, Step: req.Step}
	for _, c := range req.Choices {
		ev.Choices = append(ev.Choices, string(c))
	}
	if len(ev.Choices) == 0 {
		ev.Choices = []string{events.ChoiceAllow, events.ChoiceDeny}
	}
	b.mu.Lock()
	if b.closed != "" {
		reason := b.closed
		b.mu.Unlock()
		return Reply{Answer: DenyAnswer, Reason: reason}, nil
	}
	b.next++
	ev.ID = fmt.Sprintf("ap-%d", b.next)
	p := &pendingApproval{reply: make(chan Reply, 1), req: ev, session: req.Session, role: req.Role}
	b.pending[ev.ID] = p
	b.mu.Unlock()

	b.publish(events.Event{Type: events.ApprovalRequest, Session: req.Session, Role: req.Role, Step: req.Step, Approval: ev})
	select {
	case r := <-p.reply:
		return r, nil
	case <-ctx.Done():
		if b.take(ev.ID) != nil {
			b.resolved(p, "")
		}
		return Reply{}, ctx.Err()
	}
}

func (b *Broker) take(id string) *pendingApproval {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.pending[id]
	delete(b.pending, id)
	return p
}

func (b *Broker) resolved(p *pendingApproval, choice string) {
	done := *p.req
	done.Choice = choice
	b.publish(events.Event{Type: events.ApprovalResolved, Session: p.session, Role: p.role, Step: done.Step, Approval: &done})
}

// Answer answers the pending request id with one of the choices it
// offered; reason is passed to the model when the call is refused.
func (b *Broker) Answer(id, choice, reason string) error {
	ans, err := ParseAnswer(choice)
	if err != nil {
		return err
	}
	b.mu.Lock()
	p := b.pending[id]
	if p == nil {
		b.mu.Unlock()
		return fmt.Errorf("no pending approval request %q", id)
	}
	if !p.req.Offers(string(ans)) {
		b.mu.Unlock()
		return fmt.Errorf("approval %s does not offer %q; choices: %s", id, choice, strings.Join(p.req.Choices, ", "))
	}
	delete(b.pending, id)
	b.mu.Unlock()
	b.resolved(p, string(ans))
	p.reply <- Reply{Answer: ans, Reason: strings.TrimSpace(reason)}
	return nil
}

// Pending lists the ids of unanswered requests, oldest first.
func (b *Broker) Pending() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.pending))
	for id := range b.pending {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return idNum(out[i]) < idNum(out[j]) })
	return out
}

func idNum(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "ap-"))
	return n
}

// Close denies every pending and future request with reason, and
// declines every request for input: no one is left to answer (stdin
// closed, the front end quit).
func (b *Broker) Close(reason string) {
	b.mu.Lock()
	if reason == "" {
		reason = "no one is left to answer"
	}
	b.closed = reason
	ps := b.pending
	b.pending = map[string]*pendingApproval{}
	b.mu.Unlock()
	for _, p := range ps {
		b.resolved(p, string(DenyAnswer))
		p.reply <- Reply{Answer: DenyAnswer, Reason: reason}
	}
	b.declineElicits()
}
