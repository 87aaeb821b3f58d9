package acp

import (
	"context"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"go.uber.org/goleak"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/permission"
)

// gatedEngine runs a turn that waits on one approval through a real
// broker, as the gate does, and records how it ended. interrupts says
// whether Interrupt ends that wait: an engine whose approval is not tied
// to the turn's context must still get its answer from the server.
type gatedEngine struct {
	fakeEngine
	broker     *permission.Broker
	interrupts bool

	mu      sync.Mutex
	stop    context.CancelFunc
	reply   permission.Reply
	err     error
	replied chan struct{}
}

func (g *gatedEngine) Send(ctx context.Context, _ string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g.mu.Lock()
	g.stop = cancel
	g.mu.Unlock()
	wait := ctx
	if !g.interrupts {
		wait = context.WithoutCancel(ctx)
	}
	r, err := g.broker.Approve(wait, permission.Request{Session: g.id, CallID: "call-1", Tool: "bash", Subject: "rm -rf build"})
	g.mu.Lock()
	g.reply, g.err = r, err
	g.mu.Unlock()
	close(g.replied)
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.Answer == permission.AllowOnce {
		g.srv.Publish(events.Event{Type: events.TextDelta, Session: g.id, Text: "ran rm -rf build"})
	}
	return nil
}

func (g *gatedEngine) Answer(id, choice, reason string) error {
	return g.broker.Answer(id, choice, reason)
}

func (g *gatedEngine) Interrupt() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stop != nil {
		g.stop()
	}
}

// TestCancelWithdrawsPermissionRequests: session/cancel while the
// editor holds a permission request ends the turn as cancelled without
// waiting for the editor, denies the approval in the engine (so the call
// never runs, even when the editor later answers allow), and cancels the
// request on the wire, which ends the editor's handler; no goroutine of
// the server outlives it.
func TestCancelWithdrawsPermissionRequests(t *testing.T) {
	for _, interrupts := range []bool{true, false} {
		t.Run(map[bool]string{true: "interrupted turn", false: "approval outside the turn"}[interrupts], func(t *testing.T) {
			// Registered first, so it runs after the connection is closed.
			before := goleak.IgnoreCurrent()
			t.Cleanup(func() { goleak.VerifyNone(t, before) })
			ctx := context.Background()
			withdrawn := make(chan bool, 1)
			var conn *sdk.ClientSideConnection
			var sid sdk.SessionId
			c := &client{onAsk: func(rctx context.Context, _ sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
				// An editor that cancels the prompt and then keeps its
				// permission request open, answering allow only if it is
				// not withdrawn within a while.
				if err := conn.Cancel(ctx, sdk.CancelNotification{SessionId: sid}); err != nil {
					t.Error(err)
				}
				select {
				case <-rctx.Done():
					withdrawn <- true
				case <-time.After(5 * time.Second):
					withdrawn <- false
				}
				return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow")}, nil
			}}
			var base *fakeEngine
			conn, base = connect(t, c)
			g := &gatedEngine{fakeEngine: fakeEngine{id: base.id, srv: base.srv}, interrupts: interrupts, replied: make(chan struct{})}
			g.broker = permission.NewBroker(base.srv.Publish)
			base.srv.host.(*fakeHost).open = g
			s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "/work/space", McpServers: []sdk.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			sid = s.SessionId
			start := time.Now()
			resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock("clean up")}})
			if err != nil || resp.StopReason != sdk.StopReasonCancelled {
				t.Fatalf("prompt: stop %q, err %v; want cancelled", resp.StopReason, err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("the cancelled prompt waited %v for the editor", d)
			}
			if !<-withdrawn {
				t.Errorf("the editor's permission request was not cancelled ($/cancel_request)")
			}
			<-g.replied
			g.mu.Lock()
			reply, rerr := g.reply, g.err
			g.mu.Unlock()
			if rerr == nil && reply.Answer != permission.DenyAnswer {
				t.Errorf("the engine's approval got %+v, want a denial or the turn's end", reply)
			}
			if got := c.text(); got != "" {
				t.Errorf("the call ran after the cancel: %q", got)
			}
			if p := g.broker.Pending(); len(p) != 0 {
				t.Errorf("approvals still pending: %v", p)
			}
		})
	}
}
