package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers"
)

// Request is what a session records about one model request: its usage
// (cost included when the price is known), the fingerprint of the prefix
// it was sent with, and why the provider's cache was reset before it, if
// it was.
type Request struct {
	Turn   int             `json:"turn"`
	Usage  providers.Usage `json:"usage"`
	Prefix string          `json:"prefix"`
	Reset  string          `json:"reset,omitempty"`
}

// RequestRecorder is a Recorder told about every request (the session
// file keeps them for `reasonix stats` and `reasonix diff`).
type RequestRecorder interface {
	Recorder
	RecordRequest(Request) error
}

// Budget is the most a run may cost, shared by every session of the run
// (planner, executor, subagents). Safe for concurrent use.
type Budget struct {
	Limit float64

	mu       sync.Mutex
	spent    float64
	currency string
}

// BudgetError stops a run whose next request would pass its budget.
type BudgetError struct {
	Spent, Limit float64
	Currency     string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("budget reached: this run has cost %s of its %s budget and the next request would pass it; "+
		"raise [agent] budget to let it go on", Money(e.Spent, e.Currency), Money(e.Limit, e.Currency))
}

// Money renders an amount with its currency, with enough digits for
// fractions of a cent.
func Money(v float64, currency string) string {
	if currency == "" {
		currency = "USD"
	}
	switch {
	case v == 0:
		return "0 " + currency
	case v < 0.01:
		return fmt.Sprintf("%.6f %s", v, currency)
	}
	return fmt.Sprintf("%.4f %s", v, currency)
}

// check refuses a request estimated to cost next when it would pass the
// limit.
func (b *Budget) check(next float64) error {
	if b == nil || b.Limit <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spent+next > b.Limit || b.spent >= b.Limit {
		return &BudgetError{Spent: b.spent, Limit: b.Limit, Currency: b.currency}
	}
	return nil
}

func (b *Budget) charge(u providers.Usage) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.spent += u.Cost
	if b.currency == "" {
		b.currency = u.Currency
	}
	b.mu.Unlock()
}

// Spent returns what the run has cost so far.
func (b *Budget) Spent() float64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}

// nextCost estimates the next request's cost for the budget: the
// previous request's, or for a session's first request its estimated
// prompt at the cache-miss price (nothing is cached yet).
func (s *Session) nextCost() float64 {
	if s.cfg.Budget == nil || s.cfg.Budget.Limit <= 0 {
		return 0
	}
	if s.lastCost > 0 || s.cfg.Price == nil {
		return s.lastCost
	}
	return float64(s.estimate()) * s.cfg.Price.InputMiss / 1e6
}

// fingerprint is the SHA-256 of the prefix bytes every request starts
// with: the system message as sent and the tools array.
func fingerprint(system []byte, tools []byte) string {
	h := sha256.New()
	h.Write(system)
	h.Write(tools)
	return hex.EncodeToString(h.Sum(nil))
}

// Prefix returns the fingerprint of the session's prefix (system prompt
// and tool schemas).
func (s *Session) Prefix() string { return s.prefix }

// resetCache is the one path by which the prefix fingerprint changes and
// the provider's cache is knowingly thrown away (compaction, a deliberate
// change of the tool set): it recomputes the fingerprint and has the next
// request recorded as a cache reset, with the reason.
func (s *Session) resetCache(reason string) {
	var sys []byte
	if len(s.raw) > 0 && len(s.msgs) > 0 && s.msgs[0].Role == providers.RoleSystem {
		sys = s.raw[0]
	}
	s.prefix = fingerprint(sys, s.toolsJSON)
	s.resetReason = reason
}

// account prices one request's usage, charges the budget, and records the
// request; it returns the session's running totals.
func (s *Session) account(u *providers.Usage) providers.Usage {
	if s.cfg.Price != nil {
		u.Cost = s.cfg.Price.Cost(*u)
		u.Currency = s.cfg.Price.Currency
	}
	s.lastCost = u.Cost
	s.cfg.Budget.charge(*u)
	total := s.usage
	total.Add(*u)
	if r, ok := s.cfg.Transcript.(RequestRecorder); ok {
		req := Request{Turn: s.turns(), Usage: *u, Prefix: s.prefix, Reset: s.resetReason}
		if err := r.RecordRequest(req); err != nil {
			s.publish(events.Event{Type: events.Notice, Text: fmt.Sprintf("could not record request usage: %v", err)})
		}
	}
	s.resetReason = ""
	return total
}

// turns counts the user turns of the history.
func (s *Session) turns() int {
	n := 0
	for _, m := range s.msgs {
		if m.Role == providers.RoleUser {
			n++
		}
	}
	return n
}
