package tools

import (
	"context"
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

// Questions is the Asker of interactive runs: it publishes a
// QuestionRequest and waits for Answer from whichever front end shows it.
type Questions struct {
	publish func(events.Event)
	mu      sync.Mutex
	next    int
	pending map[string]chan string
}

// NewQuestions returns a question broker publishing to publish.
func NewQuestions(publish func(events.Event)) *Questions {
	return &Questions{publish: publish, pending: map[string]chan string{}}
}

// Ask publishes q and waits for its answer or for ctx.
func (b *Questions) Ask(ctx context.Context, env *Env, q events.Question) (string, error) {
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
	ch := make(chan string, 1)
	b.pending[q.ID] = ch
	b.mu.Unlock()
	cp := q
	publish(events.Event{Type: events.QuestionRequest, Session: session, Question: &cp})
	select {
	case a := <-ch:
		done := q
		done.Answer = a
		publish(events.Event{Type: events.QuestionResolved, Session: session, Question: &done})
		return a, nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, q.ID)
		b.mu.Unlock()
		publish(events.Event{Type: events.QuestionResolved, Session: session, Question: &q})
		return "", ctx.Err()
	}
}

// Answer answers the pending question id.
func (b *Questions) Answer(id, answer string) error {
	if strings.TrimSpace(answer) == "" {
		return fmt.Errorf("question %s: the answer is empty", id)
	}
	b.mu.Lock()
	ch, ok := b.pending[id]
	delete(b.pending, id)
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("no pending question %q", id)
	}
	ch <- answer
	return nil
}
