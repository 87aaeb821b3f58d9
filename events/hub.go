package events

import "sync"

// Hub fans events out to the sinks subscribed to it. Events published
// before the first subscriber (start-up notices) are kept and replayed to
// it, so a front end that subscribes late loses nothing. Every event is
// delivered: a subscriber that must not block the sessions (a UI) queues
// internally, as the TUI does.
type Hub struct {
	mu      sync.Mutex
	subs    map[int]Sink
	next    int
	backlog []Event
	started bool
}

// Publish delivers e to every subscriber.
func (h *Hub) Publish(e Event) {
	h.mu.Lock()
	if !h.started {
		h.backlog = append(h.backlog, e)
		h.mu.Unlock()
		return
	}
	subs := make([]Sink, 0, len(h.subs))
	for _, s := range h.subs {
		subs = append(subs, s)
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.Publish(e)
	}
}

// Subscribe adds s and returns the function that removes it. The first
// subscriber receives the backlog first.
func (h *Hub) Subscribe(s Sink) (unsubscribe func()) {
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[int]Sink{}
	}
	id := h.next
	h.next++
	h.subs[id] = s
	backlog := h.backlog
	h.backlog, h.started = nil, true
	h.mu.Unlock()
	for _, e := range backlog {
		s.Publish(e)
	}
	return func() {
		h.mu.Lock()
		delete(h.subs, id)
		h.mu.Unlock()
	}
}
