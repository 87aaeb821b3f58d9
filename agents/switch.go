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
