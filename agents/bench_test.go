package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools"
)

// session200 runs one 200-step scripted session with an instant provider
// and a trivial tool, so the time measured is the harness itself: request
// assembly, streaming, gate, dispatch and appending.
func session200(b *testing.B) {
	turns := make([]scripted.Turn, 0, 200)
	for i := 0; i < 199; i++ {
		turns = append(turns, scripted.Turn{Text: "step", ToolCalls: []scripted.Call{{Name: "look", Arguments: `{"n":1}`}},
			Usage: &providers.Usage{PromptTokens: 100, CompletionTokens: 5}})
	}
	turns = append(turns, scripted.Turn{Text: "done"})
	reg := tools.NewRegistry(stubTool{name: "look", readOnly: true})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := scripted.NewFromScript(&scripted.Script{Turns: turns})
		s, err := New(Config{Provider: p, System: "system prompt", Tools: reg, MaxSteps: 200, Gate: tools.AllowAll{}})
		if err != nil {
			b.Fatal(err)
		}
		out, err := s.Send(context.Background(), "go")
		if err != nil || out.Steps != 200 {
			b.Fatalf("steps %d err %v", out.Steps, err)
		}
	}
}

// BenchmarkSession200 measures a whole 200-step session.
func BenchmarkSession200(b *testing.B) { session200(b) }

// TestHarnessBench prints the per-step harness cost for `make bench`.
func TestHarnessBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") == "" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	r := testing.Benchmark(session200)
	fmt.Printf("harness: %.1fµs and %d allocs per step over a 200-step scripted session (instant provider)\n",
		float64(r.NsPerOp())/200/1000, r.AllocsPerOp()/200)
}

var _ = json.Valid
