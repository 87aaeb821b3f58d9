package acp

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reasonix/reasonix/events"
)

// A question of no session (the trust question of a project's MCP server
// at start-up, or of the project's hooks when a prompt first would run
// one) needs a session to be put to the editor in, and an editor shows a
// permission request best in a running prompt. So it lives in one
// running prompt at a time, the one that has run longest, and moves on
// when that prompt ends without an answer (its turn ended, it was
// cancelled, or its session closed): to the prompt that has now run
// longest, else it is held until the next prompt of any session starts.
// The editor's choice answers it; a request the editor cancels while its
// prompt goes on is a denial, as the session's own are.

// loose is one placing of a question of no session: held (ss nil), or
// put to the editor in the prompt numbered turn of ss.
type loose struct {
	e events.Event
	// seq orders the questions as they came, so those that move go on
	// in that order.
	seq  uint64
	ss   *session
	turn uint64
	// n counts the prompts the question was put through, this one
	// included; it names the tool call (see looseID).
	n int

	// mu orders the tool call's start (askLoose) before its end.
	mu      sync.Mutex
	ask     *editorAsk
	started bool
}

// sessionless handles an approval request of no session and its
// resolution (answered, or withdrawn by whoever asked).
func (s *Server) sessionless(e events.Event) {
	a := e.Approval
	if a == nil {
		return
	}
	s.mu.Lock()
	if e.Type == events.ApprovalResolved {
		for i, q := range s.held {
			if q.e.Approval.ID == a.ID {
				s.held = append(s.held[:i:i], s.held[i+1:]...)
				break
			}
		}
		q := s.shown[a.ID]
		delete(s.shown, a.ID)
		s.mu.Unlock()
		s.settled(a.ID)
		if q != nil {
			status := sdk.ToolCallStatusCompleted
			if a.Choice == "" || a.Choice == events.ChoiceDeny {
				status = sdk.ToolCallStatusFailed
			}
			q.end(s, sdk.UpdateToolCall(looseID(q), sdk.WithUpdateStatus(status)))
		}
		return
	}
	s.looseSeq++
	q := s.placeLocked(&loose{e: e, seq: s.looseSeq})
	s.mu.Unlock()
	if q != nil {
		s.askLoose(q)
	}
}

// placeLocked puts q in the running prompt that started first and
// returns it to be asked there; with no prompt running it holds q and
// returns nil. Call with s.mu held.
func (s *Server) placeLocked(q *loose) *loose {
	var to *session
	for _, ss := range s.sessions {
		if ss.turn != 0 && (to == nil || ss.turn < to.turn) {
			to = ss
		}
	}
	if to == nil {
		s.held = append(s.held, q)
		return nil
	}
	return s.showLocked(q, to)
}

// showLocked makes q the question of no session ss's prompt shows.
// Call with s.mu held.
func (s *Server) showLocked(q *loose, ss *session) *loose {
	q.ss, q.turn = ss, ss.turn
	q.n++
	s.shown[q.e.Approval.ID] = q
	return q
}

// beginTurn numbers the prompt of ss that is starting and gives it the
// questions of no session held for the next prompt, to be asked there.
func (s *Server) beginTurn(ss *session) []*loose {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns++
	ss.turn = s.turns
	held := s.held
	s.held = nil
	for _, q := range held {
		s.showLocked(q, ss)
	}
	return held
}

// endTurn takes the questions of no session away from ss's prompt, whose
// turn ended or was cancelled, or whose session closed: each is withdrawn
// from the editor there and goes to the running prompt that started
// first, else is held for the next. The prompt gets no others.
func (s *Server) endTurn(ss *session) {
	s.mu.Lock()
	ss.turn = 0
	var moving []*loose
	for id, q := range s.shown {
		if q.ss == ss {
			delete(s.shown, id)
			moving = append(moving, q)
		}
	}
	slices.SortFunc(moving, func(a, b *loose) int { return cmp.Compare(a.seq, b.seq) })
	var again []*loose
	for _, q := range moving {
		if n := s.placeLocked(&loose{e: q.e, seq: q.seq, n: q.n}); n != nil {
			again = append(again, n)
		}
	}
	s.mu.Unlock()
	for _, q := range moving {
		q.end(s, sdk.UpdateToolCall(looseID(q), sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(
				"Not answered in this prompt: it is asked again in another running prompt, or in the next one."))})))
	}
	for _, q := range again {
		s.askLoose(q)
	}
}

// end withdraws the editor's request for this placing, if one was sent,
// and ends its tool call with u, if it was started.
func (q *loose) end(s *Server, u sdk.SessionUpdate) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ask != nil {
		q.ask.cancel()
	}
	if q.started {
		s.update(q.ss.id, u)
	}
}

// looseID names the tool call a question of no session is shown as in
// the prompt it is put through: reasonix/ID, then reasonix/ID/2 and so
// on when it is put to a later prompt.
func looseID(q *loose) sdk.ToolCallId {
	if q.n > 1 {
		return sdk.ToolCallId(fmt.Sprintf("reasonix/%s/%d", q.e.Approval.ID, q.n))
	}
	return sdk.ToolCallId("reasonix/" + q.e.Approval.ID)
}

// askLoose puts a question of no session to the editor in the prompt q
// was placed in, as a tool call of its own (it is no call of the
// session's), and the editor's choice to the host. Moving it on (see
// endTurn) withdraws the request without an answer.
func (s *Server) askLoose(q *loose) {
	a, ss := q.e.Approval, q.ss
	q.mu.Lock()
	defer q.mu.Unlock()
	conn, ctx, done, ok := s.startAsk(ss, a.ID, func() {})
	if !ok {
		_ = s.host.Answer(a.ID, events.ChoiceDeny, "the editor disconnected")
		return
	}
	// Moved on or answered before the request was registered: that
	// prompt no longer shows it.
	s.mu.Lock()
	current := s.shown[a.ID] == q
	if current {
		q.ask = s.inflight[a.ID]
	}
	s.mu.Unlock()
	if !current {
		done()
		return
	}
	call := s.approvalCall("", a)
	call.ToolCallId = looseID(q)
	call.Kind = sdk.Ptr(sdk.ToolKindOther)
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(sdk.ToolKindOther), sdk.WithStartStatus(sdk.ToolCallStatusPending)}
	if len(call.Content) > 0 {
		opts = append(opts, sdk.WithStartContent(call.Content))
	}
	s.update(ss.id, sdk.StartToolCall(call.ToolCallId, *call.Title, opts...))
	q.started = true
	req := sdk.RequestPermissionRequest{SessionId: sdk.SessionId(ss.id), Options: options(a), ToolCall: call}
	go func() {
		defer done()
		resp, err := conn.RequestPermission(ctx, req)
		switch {
		case err == nil && resp.Outcome.Selected != nil && a.Offers(string(resp.Outcome.Selected.OptionId)):
			_ = s.host.Answer(a.ID, string(resp.Outcome.Selected.OptionId), "")
		case ctx.Err() != nil:
			// Withdrawn: moved on with its prompt (an editor's cancelled
			// answer after session/cancel lands here too: the SDK hands
			// over a response only after the notifications that came
			// before it), answered, or the editor left (the broker then
			// refuses what is still asked).
		case err != nil:
			_ = s.host.Answer(a.ID, events.ChoiceDeny, "the editor did not answer: "+err.Error())
		default:
			// Cancelled while its prompt goes on: a person dismissed it.
			_ = s.host.Answer(a.ID, events.ChoiceDeny, "cancelled in the editor")
		}
	}()
}
