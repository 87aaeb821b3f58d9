package agents

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/tools"
)

// preparingTool is a writing tool that gets ready while the session
// checks its call (tools.Preparer).
type preparingTool struct {
	started  chan struct{} // closed when Prepare begins
	release  chan struct{} // Prepare returns once this is closed
	prepared *atomic.Bool
	ran      *atomic.Bool
}

func (preparingTool) Name() string            { return "prep" }
func (preparingTool) Description() string     { return "prepares" }
func (preparingTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (preparingTool) ReadOnly() bool          { return false }
func (t preparingTool) Prepare(*tools.Env) {
	close(t.started)
	<-t.release
	t.prepared.Store(true)
}
func (t preparingTool) Execute(context.Context, *tools.Env, json.RawMessage) (tools.Result, error) {
	t.ran.Store(true)
	if !t.prepared.Load() {
		return tools.Result{}, errors.New("executed before Prepare returned")
	}
	return tools.Result{Content: "ok"}, nil
}

// TestPrepareRunsBesideTheCheckpoint: a Preparer's Prepare runs while the
// checkpoint before a change runs (the checkpoint here waits until
// Prepare has begun, so run one after the other they would never end),
// and the call itself runs after Prepare has returned. A refused call is
// still refused, Prepare or not.
func TestPrepareRunsBesideTheCheckpoint(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		tool := preparingTool{started: make(chan struct{}), release: make(chan struct{}), prepared: new(atomic.Bool), ran: new(atomic.Bool)}
		checkpointed := false
		cfg := Config{
			Provider: &fakeProvider{turns: []providers.Chunk{{ToolCalls: []providers.ToolCall{call("c1", "prep", `{}`)}}}},
			Tools:    tools.NewRegistry(tool),
			Env:      &tools.Env{},
			BeforeChange: func(ctx context.Context) error {
				select {
				case <-tool.started:
				case <-time.After(10 * time.Second):
					return errors.New("Prepare did not start while the checkpoint ran")
				}
				checkpointed = true
				close(tool.release)
				return nil
			},
		}
		if refuse {
			cfg.Gate = refuseAll{}
			cfg.BeforeChange = nil
			close(tool.release)
		}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Send(context.Background(), "q")
		if err != nil {
			t.Fatal(err)
		}
		c := out.Calls[0]
		if refuse {
			if !c.Denied || tool.ran.Load() {
				t.Errorf("refused call: denied %v, ran %v", c.Denied, tool.ran.Load())
			}
			continue
		}
		if !checkpointed || !tool.ran.Load() || c.Denied {
			t.Errorf("checkpointed %v, ran %v, denied %v; result %+v", checkpointed, tool.ran.Load(), c.Denied, c)
		}
	}
}

type refuseAll struct{}

func (refuseAll) Authorize(context.Context, tools.Invocation) tools.Verdict {
	return tools.Verdict{Message: "refused"}
}
