package permission

import (
	"context"
	"fmt"

	"github.com/reasonix/reasonix/events"
)

type pendingElicit struct {
	reply   chan events.ElicitAnswer
	req     *events.Elicitation
	session string
}

// Elicit puts an MCP server's request for input to a person the way
// Approve puts a tool call: it publishes an ElicitationRequest with an
// id and waits until a front end answers that id through
// [Broker.AnswerElicitation], or ctx ends (then the request is withdrawn
// with an ElicitationResolved event and ctx's error returned). session
// is the session the server's tool call serves, "" when unknown. After
// Close every request is declined unasked.
func (b *Broker) Elicit(ctx context.Context, session string, e events.Elicitation) (events.ElicitAnswer, error) {
	b.mu.Lock()
	if b.closed != "" {
		b.mu.Unlock()
		return events.ElicitAnswer{Action: events.ElicitDecline}, nil
	}
	if b.elicits == nil {
		b.elicits = map[string]*pendingElicit{}
	}
	b.nextElicit++
	e.ID = fmt.Sprintf("el-%d", b.nextElicit)
	e.Action = ""
	p := &pendingElicit{reply: make(chan events.ElicitAnswer, 1), req: &e, session: session}
	b.elicits[e.ID] = p
	shown := e
	b.mu.Unlock()

	b.publish(events.Event{Type: events.ElicitationRequest, Session: session, Elicitation: &shown})
	select {
	case a := <-p.reply:
		return a, nil
	case <-ctx.Done():
		b.mu.Lock()
		_, open := b.elicits[e.ID]
		delete(b.elicits, e.ID)
		b.mu.Unlock()
		if open {
			b.elicitResolved(p, "")
		}
		return events.ElicitAnswer{}, ctx.Err()
	}
}

// AnswerElicitation answers the pending request for input id: accept
// (with the form's values), decline or cancel. An accepted form's values
// are checked against its fields first; when they do not pass, the
// request stays open, is published again with the reason in its Error,
// and the returned error says what is wrong.
func (b *Broker) AnswerElicitation(id string, a events.ElicitAnswer) error {
	switch a.Action {
	case events.ElicitAccept, events.ElicitDecline, events.ElicitCancel:
	default:
		return fmt.Errorf("request for input %s: action %q: want accept, decline or cancel", id, a.Action)
	}
	b.mu.Lock()
	p := b.elicits[id]
	if p == nil {
		b.mu.Unlock()
		return fmt.Errorf("no pending request for input %q", id)
	}
	switch {
	case a.Action != events.ElicitAccept || p.req.Mode == events.ElicitURL:
		a.Content = nil
	default:
		content, err := p.req.Check(a.Content)
		if err != nil {
			p.req.Error = err.Error()
			again := *p.req
			b.mu.Unlock()
			b.publish(events.Event{Type: events.ElicitationRequest, Session: p.session, Elicitation: &again})
			return fmt.Errorf("request for input %s: %w (it is asked again)", id, err)
		}
		a.Content = content
	}
	delete(b.elicits, id)
	b.mu.Unlock()
	b.elicitResolved(p, a.Action)
	p.reply <- a
	return nil
}

func (b *Broker) elicitResolved(p *pendingElicit, action string) {
	done := *p.req
	done.Action = action
	b.publish(events.Event{Type: events.ElicitationResolved, Session: p.session, Elicitation: &done})
}

// declineElicits declines every pending request for input (Close).
func (b *Broker) declineElicits() {
	b.mu.Lock()
	ps := b.elicits
	b.elicits = nil
	b.mu.Unlock()
	for _, p := range ps {
		b.elicitResolved(p, events.ElicitDecline)
		p.reply <- events.ElicitAnswer{Action: events.ElicitDecline}
	}
}
