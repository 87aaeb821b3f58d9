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

// foldOnce compacts by hand a session of 40 turns (a tool call and a
// 4 KB result each) with an instant provider writing the digest, so the
// time measured is the prune, the fold, the transcript the digest request
// carries and the re-encoding: the overhead one fold adds to a run beyond
// the model's own time.
func foldOnce(b *testing.B) {
	var hist []providers.Message
	for i := range 40 {
		id := fmt.Sprintf("c%d", i)
		hist = append(hist,
			providers.Message{Role: providers.RoleUser, Content: fmt.Sprintf("turn %d: look at part %d", i, i)},
			providers.Message{Role: providers.RoleAssistant, ToolCalls: []providers.ToolCall{{ID: id, Type: "function",
				Function: providers.FunctionCall{Name: "look", Arguments: `{"n":1}`}}}},
			providers.Message{Role: providers.RoleTool, ToolCallID: id, Content: string(make([]byte, 4096))},
			providers.Message{Role: providers.RoleAssistant, Content: fmt.Sprintf("part %d looks fine", i)})
	}
	reg := tools.NewRegistry(stubTool{name: "look", readOnly: true})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := scripted.NewFromScript(&scripted.Script{Turns: []scripted.Turn{{Text: "digest of the work"}}})
		s, err := New(Config{Provider: p, System: "system prompt", Tools: reg, ContextWindow: 200000})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Restore(hist); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c, err := s.Compact(context.Background(), "")
		if err != nil || c.Folded == 0 {
			b.Fatalf("folded %d, %v", c.Folded, err)
		}
	}
}

// TestCompactionBench prints the per-fold overhead for `make bench`.
func TestCompactionBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") == "" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	r := testing.Benchmark(foldOnce)
	fmt.Printf("compaction: %.2fms and %d allocs per fold of a 160-message, 170 KB history (instant digest; the model's time excluded)\n",
		float64(r.NsPerOp())/1e6, r.AllocsPerOp())
}
