package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/reasonix/reasonix/events"
)

// Asker puts a model's question to a person and waits for the answer.
// An Env without one is a run no one watches.
type Asker interface {
	// Ask asks for the session env works for; its question events go out
	// through env.Publish when set, so they name the session's role,
	// parent and plan step as its other events do.
	Ask(ctx context.Context, env *Env, q events.Question) (string, error)
}

// ErrNoOneToAsk is what an Asker returns when no person will answer the
// question after all (a front end that can only offer choices got one
// without, or the person's front end withdrew it): the ask tool then
// answers as in a run no one watches.
var ErrNoOneToAsk = errors.New("no one to ask")

// Questions is the Asker of interactive runs: it publishes a
// QuestionRequest and waits for Answer from whichever front end shows it.
type Questions struct {
	publish func(events.Event)
	// choicesOnly declines questions without choices (see
	// NewChoiceQuestions).
	choicesOnly bool
	mu          sync.Mutex
	next        int
	pending     map[string]chan answer
}

// answer is an answer, or none (Decline).
type answer struct {
	text string
	none bool
}

// NewQuestions returns a question broker publishing to publish.
func NewQuestions(publish func(events.Event)) *Questions {
	return &Questions{publish: publish, pending: map[string]chan answer{}}
}

// NewChoiceQuestions returns a question broker for front ends that can
// put a question only as a pick among its choices (an editor over ACP,
// whose permission request carries options but no text field): a
// question without choices is not published, and Ask returns
// ErrNoOneToAsk at once.
func NewChoiceQuestions(publish func(events.Event)) *Questions {
	b := NewQuestions(publish)
	b.choicesOnly = true
	return b
}

// Ask publishes q and waits for its answer or for ctx. It returns
// ErrNoOneToAsk when the question is declined (see Decline and
// NewChoiceQuestions).
func (b *Questions) Ask(ctx context.Context, env *Env, q events.Question) (string, error) {
	if b.choicesOnly && len(q.Choices) == 0 {
		return "", ErrNoOneToAsk
	}
	publish, session := b.publish, ""
	if env != nil {
		session = env.Session
		if env.Publish != nil {
			publish = env.Publish
		}
	}
	b.mu.Lock()
	b.next++
	q.ID = fmt.Sprintf("q-%d", b.next)
	ch := make(chan answer, 1)
	b.pending[q.ID] = ch
	b.mu.Unlock()
	cp := q
	publish(events.Event{Type: events.QuestionRequest, Session: session, Question: &cp})
	select {
	case a := <-ch:
		done := q
		done.Answer = a.text
		publish(events.Event{Type: events.QuestionResolved, Session: session, Question: &done})
		if a.none {
			return "", ErrNoOneToAsk
		}
		return a.text, nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, q.ID)
		b.mu.Unlock()
		publish(events.Event{Type: events.QuestionResolved, Session: session, Question: &q})
		return "", ctx.Err()
	}
}

// Answer answers the pending question id.
func (b *Questions) Answer(id, ans string) error {
	if strings.TrimSpace(ans) == "" {
		return fmt.Errorf("question %s: the answer is empty", id)
	}
	return b.resolve(id, answer{text: ans})
}

// Decline ends the pending question id without an answer: no one will
// give one (the person's front end withdrew it). Its Ask returns
// ErrNoOneToAsk.
func (b *Questions) Decline(id string) error { return b.resolve(id, answer{none: true}) }

func (b *Questions) resolve(id string, a answer) error {
	b.mu.Lock()
	ch, ok := b.pending[id]
	delete(b.pending, id)
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("no pending question %q", id)
	}
	ch <- a
	return nil
}
