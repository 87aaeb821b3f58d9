package permission

import (
	"context"
	"sync"
)

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req Request) (Reply, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request) (Reply, error) { return f(ctx, req) }

// ScriptedApprover answers from a script; for tests and demos. Answers are
// used in order and the last one repeats; with none it denies. It records
// every request and the largest number of overlapping calls it saw.
type ScriptedApprover struct {
	Answers []Answer
	// Func, when set, decides instead of Answers.
	Func func(Request) Answer

	mu       sync.Mutex
	requests []Request
	active   int
	maxSeen  int
}

// Approve records req and returns the next scripted answer.
func (s *ScriptedApprover) Approve(ctx context.Context, req Request) (Reply, error) {
	s.mu.Lock()
	s.active++
	if s.active > s.maxSeen {
		s.maxSeen = s.active
	}
	n := len(s.requests)
	s.requests = append(s.requests, req)
	f := s.Func
	var a Answer = DenyAnswer
	if len(s.Answers) > 0 {
		a = s.Answers[min(n, len(s.Answers)-1)]
	}
	s.mu.Unlock()
	if f != nil {
		a = f(req)
	}
	s.mu.Lock()
	s.active--
	s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return Reply{}, err
	}
	return Reply{Answer: a}, nil
}

// Requests returns the requests seen so far.
func (s *ScriptedApprover) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MaxConcurrent is the largest number of Approve calls that overlapped.
func (s *ScriptedApprover) MaxConcurrent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxSeen
}
