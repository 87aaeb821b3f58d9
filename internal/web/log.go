package web

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/reasonix/reasonix/events"
)

// eventLog keeps every event a page may need, serialised once, so a page
// that reloads or reconnects gets the whole transcript from its last
// position (no lost or doubled text). It is bounded: past max entries
// the oldest go, and a page that asks for them is told to start over.
type eventLog struct {
	mu      sync.Mutex
	entries []entry
	next    uint64
	max     int
	// wake is closed and replaced on every add: waiting streams wake.
	wake   chan struct{}
	closed bool
}

type entry struct {
	seq  uint64
	data []byte
}

func newEventLog(max int) *eventLog {
	return &eventLog{max: max, next: 1, wake: make(chan struct{})}
}

func (l *eventLog) add(w wire) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	w.Seq = l.next
	data, err := json.Marshal(w)
	if err != nil {
		data = []byte(fmt.Sprintf(`{"type":"error","seq":%d,"error":%q}`, w.Seq, "event not encodable: "+err.Error()))
	}
	l.entries = append(l.entries, entry{seq: l.next, data: data})
	l.next++
	if len(l.entries) > l.max {
		drop := len(l.entries) - l.max
		l.entries = append(l.entries[:0:0], l.entries[drop:]...)
	}
	close(l.wake)
	l.wake = make(chan struct{})
}

// after returns the entries after seq, the first seq still kept, and a
// channel closed when more arrive.
func (l *eventLog) after(seq uint64) ([]entry, uint64, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.next
	if len(l.entries) > 0 {
		first = l.entries[0].seq
	}
	i := 0
	if seq >= first {
		i = int(seq - first + 1)
	}
	if i > len(l.entries) {
		i = len(l.entries)
	}
	return l.entries[i:], first, l.wake
}

func (l *eventLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.wake)
		l.wake = make(chan struct{})
	}
}

// planQueue holds the plans waiting for a person in the page.
type planQueue struct {
	s       *Server
	mu      sync.Mutex
	n       int
	pending map[string]chan events.PlanDecision
}

// PlanApprover returns the approver the coordinator's plans go through:
// the page shows the plan and answers it (its Approve method has
// orchestrator.PlanApprover's signature).
func (s *Server) PlanApprover() interface {
	Approve(ctx context.Context, p events.Plan) (events.Plan, events.PlanDecision, error)
} {
	return s.plans
}

// Approve publishes the plan as a question and waits for the page.
func (q *planQueue) Approve(ctx context.Context, p events.Plan) (events.Plan, events.PlanDecision, error) {
	q.mu.Lock()
	q.n++
	id := fmt.Sprintf("plan-%d", q.n)
	ch := make(chan events.PlanDecision, 1)
	q.pending[id] = ch
	q.mu.Unlock()
	q.s.mu.Lock()
	root := q.s.planning
	q.s.mu.Unlock()
	plan := p
	q.s.log.add(wire{Event: events.Event{Type: evPlanRequest, Session: root, Text: p.Markdown()}, Root: root, Plan: &plan, PlanID: id})
	var d events.PlanDecision
	var err error
	select {
	case d = <-ch:
	case <-ctx.Done():
		d, err = events.PlanReject, ctx.Err()
	case <-q.s.ctx.Done():
		d, err = events.PlanReject, q.s.ctx.Err()
	}
	q.mu.Lock()
	delete(q.pending, id)
	q.mu.Unlock()
	q.s.log.add(wire{Event: events.Event{Type: evPlanResolved, Session: root}, Root: root, PlanID: id, Decision: d.String()})
	return p, d, err
}

func (q *planQueue) decide(id string, d events.PlanDecision) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch, ok := q.pending[id]
	if !ok {
		return fmt.Errorf("no plan %q is waiting for an answer", id)
	}
	delete(q.pending, id)
	ch <- d
	return nil
}

func (q *planQueue) closeAll() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for id, ch := range q.pending {
		ch <- events.PlanReject
		delete(q.pending, id)
	}
}
