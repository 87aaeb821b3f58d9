package agents

import (
	"fmt"

	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/tools"
)

// Switch is what a session's next requests go to after a person picks
// another model: the provider, the model name on it, that model's context
// window and price.
type Switch struct {
	Provider providers.Provider
	Model    string
	Window   int
	Price    *providers.Price
}

// SetModel sends the session's next requests to sw's model, with the
// history unchanged. A provider's prompt cache is per model, so the next
// request is recorded as a cache reset: it pays for the whole prompt
// again. The tool schemas keep the encoding the session opened with, so
// the prefix bytes stay the same for the new model's cache from then on.
// Call it between turns.
func (s *Session) SetModel(sw Switch) error {
	if sw.Provider == nil || sw.Model == "" {
		return fmt.Errorf("session: no model to switch to")
	}
	old := s.ModelKey()
	s.cfg.Provider, s.cfg.Model = sw.Provider, sw.Model
	s.cfg.ContextWindow, s.cfg.Price = sw.Window, sw.Price
	s.lastPrompt, s.stuckAt, s.lastCost = 0, 0, 0
	if now := s.ModelKey(); now != old {
		s.resetCache("model switched from " + old + " to " + now)
	}
	return nil
}

// BorrowModel sends the session's requests to sw's model until the
// returned function is called, which sends them to the session's own
// model again: a turn that asks for another model (a custom command's
// `model`). The history and the prefix bytes never change, so the own
// model's provider cache still holds what it held before the turn, and
// going back is not recorded as a cache reset; the borrowed model's first
// request is (its cache is another one). Call it between turns, and call
// the function before the next one.
func (s *Session) BorrowModel(sw Switch) (restore func(), err error) {
	if sw.Provider == nil || sw.Model == "" {
		return nil, fmt.Errorf("session: no model to switch to")
	}
	old := s.ModelKey()
	if sw.Provider.Name()+"/"+sw.Model == old {
		return func() {}, nil
	}
	own := s.cfg
	ownReason := s.resetReason
	s.cfg.Provider, s.cfg.Model = sw.Provider, sw.Model
	s.cfg.ContextWindow, s.cfg.Price = sw.Window, sw.Price
	s.lastCost = 0
	s.resetCache("this turn runs on " + s.ModelKey() + ", not " + old)
	borrowed := s.resetReason
	return func() {
		s.cfg.Provider, s.cfg.Model = own.Provider, own.Model
		s.cfg.ContextWindow, s.cfg.Price = own.ContextWindow, own.Price
		if s.resetReason == borrowed {
			// No request went out on the borrowed model.
			s.resetReason = ownReason
		}
		// The last request's cost was at the borrowed model's price;
		// lastPrompt stays: it measures the history, which the own model
		// is sent next.
		s.lastCost = 0
	}, nil
}

// Tools is the session's tool registry.
func (s *Session) Tools() *tools.Registry { return s.cfg.Tools }

// ModelKey is "provider/model" of the session's requests.
func (s *Session) ModelKey() string { return s.cfg.Provider.Name() + "/" + s.cfg.Model }

// SetEffort sets the reasoning effort sent with the session's next
// requests ("" sends the provider's configured reasoning_effort).
func (s *Session) SetEffort(level string) { s.cfg.ReasoningEffort = level }

// Effort is the reasoning effort the session asks for ("" the provider's
// configured one).
func (s *Session) Effort() string { return s.cfg.ReasoningEffort }
