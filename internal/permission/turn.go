package permission

import (
	"errors"
	"fmt"
)

// turnRules are allow rules in force for one turn: a custom command's
// allowed-tools, or "Bash" while a person's own ! line runs.
type turnRules struct {
	id    int
	rules []Rule
}

// PreApprove adds rules as allow rules until release is called: what a
// custom command's allowed-tools grants the turn it starts. They rank
// exactly as configured allow rules do, so deny and ask rules, the
// dangerous class and control files still apply. Every view of the gate
// sees them. A rule that does not parse (a tool Reasonix lacks, such as
// WebSearch) is left out and named in the error; the others still apply.
func (g *Gate) PreApprove(rules []string) (release func(), err error) {
	var parsed []Rule
	var errs []error
	for _, s := range rules {
		r, perr := ParseRule(s)
		if perr != nil {
			errs = append(errs, fmt.Errorf("allowed-tools: %w; left out", perr))
			continue
		}
		parsed = append(parsed, r)
	}
	err = errors.Join(errs...)
	if len(parsed) == 0 {
		return func() {}, err
	}
	g.sh.mu.Lock()
	g.sh.turnID++
	id := g.sh.turnID
	g.sh.turn = append(append([]turnRules(nil), g.sh.turn...), turnRules{id, parsed})
	g.sh.mu.Unlock()
	return func() {
		g.sh.mu.Lock()
		defer g.sh.mu.Unlock()
		var keep []turnRules
		for _, t := range g.sh.turn {
			if t.id != id {
				keep = append(keep, t)
			}
		}
		g.sh.turn = keep
	}, err
}

// effective is the view's policy with the rules of running turns added.
func (g *Gate) effective() Policy {
	g.sh.mu.RLock()
	turn := g.sh.turn
	g.sh.mu.RUnlock()
	p := g.current()
	if len(turn) == 0 {
		return p
	}
	p.Allow = append([]Rule(nil), p.Allow...)
	for _, t := range turn {
		p.Allow = append(p.Allow, t.rules...)
	}
	return p
}
