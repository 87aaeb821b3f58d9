package permission

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

// Answer is a person's reply to an approval request.
type Answer string

// Answers.
const (
	AllowOnce    Answer = "allow_once"
	AllowSession Answer = "allow_session"
	AllowAlways  Answer = "allow_always"
	DenyAnswer   Answer = "deny"
)

// ParseAnswer reads an answer as a front end sends it; it accepts the
// constant values and short forms (y, once, session, always, n, no).
func ParseAnswer(s string) (Answer, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "allow_once", "once", "allow", "y", "yes":
		return AllowOnce, nil
	case "allow_session", "session":
		return AllowSession, nil
	case "allow_always", "always":
		return AllowAlways, nil
	case "deny", "n", "no":
		return DenyAnswer, nil
	}
	return "", fmt.Errorf("approval answer %q: want allow_once, allow_session, allow_always or deny", s)
}

// Request is what a person is asked to approve.
type Request struct {
	Session string
	Role    string
	Tool    string
	// Subject is the command or the paths, one line.
	Subject string
	// Command is the exact bash command line (bash only).
	Command string
	// Preview is the structured view of an edit, when the tool offers one.
	Preview []tools.Preview
	// Reason is the text the model gave before the call.
	Reason string
	// Impact says what the call would do, in a sentence.
	Impact string
	// Dangerous is set for the dangerous class: the answer only ever
	// applies to this one call.
	Dangerous bool
	// Rules are what "always allow" would save (empty when dangerous).
	Rules []string
}

// Approver asks a person. The TUI implements it; headless runs have none.
// Approve must honour ctx.
type Approver interface {
	Approve(ctx context.Context, req Request) (Answer, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req Request) (Answer, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request) (Answer, error) { return f(ctx, req) }

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
func (s *ScriptedApprover) Approve(ctx context.Context, req Request) (Answer, error) {
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
		return "", err
	}
	return a, nil
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

// EventApprover asks through the event stream: it publishes an
// ApprovalRequest event whose Reply channel the front end answers with an
// Answer value (see ParseAnswer), and waits for it or for ctx.
type EventApprover struct {
	Publish func(events.Event)
}

// Approve publishes the request and waits for the reply.
func (e EventApprover) Approve(ctx context.Context, req Request) (Answer, error) {
	if e.Publish == nil {
		return "", fmt.Errorf("event approver: no event sink")
	}
	reply := make(chan string, 1)
	var diff strings.Builder
	for _, p := range req.Preview {
		diff.WriteString(p.Diff)
	}
	impact := req.Impact
	if req.Dangerous {
		impact = "DANGEROUS: " + impact
	}
	e.Publish(events.Event{
		Type:    events.ApprovalRequest,
		Session: req.Session,
		Role:    req.Role,
		Approval: &events.Approval{
			Tool: req.Tool, Subject: req.Subject, Reason: req.Reason,
			Diff: diff.String(), Impact: impact, Reply: reply,
		},
	})
	select {
	case s := <-reply:
		return ParseAnswer(s)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
