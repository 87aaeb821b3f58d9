package orchestrator

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/tools"
)

// instantProvider answers every request at once with a short text, so a
// benchmark measures the coordinator, not the model.
type instantProvider struct{}

func (instantProvider) Name() string { return "instant" }

func (instantProvider) Stream(context.Context, providers.Request) (<-chan providers.Chunk, error) {
	ch := make(chan providers.Chunk, 1)
	ch <- providers.Chunk{Text: "done", FinishReason: "stop", Usage: &providers.Usage{PromptTokens: 1}}
	close(ch)
	return ch, nil
}

// benchCoordinator saves transcripts under state unless it is "".
func benchCoordinator(dir, state string) *Coordinator {
	return New(Runtime{
		Workspace: dir,
		StateDir:  state,
		Resolve:   func(string) (providers.Provider, string, error) { return instantProvider{}, "m", nil },
		Tools:     tools.NewRegistry(readTool{}, writeTool{}),
		Gate:      tools.AllowAll{},
		Sink:      events.Discard,
	})
}

// subagentOverhead is the coordinator's cost of one child session with an
// instant model: slot, tool set, transcript, session and result.
func subagentOverhead(c *Coordinator, n int) (time.Duration, error) {
	general, _ := roles.Builtin(roles.General)
	ctx := context.Background()
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := c.runChild(ctx, nil, childSpec{role: general, parent: "e-bench", depth: 1, prompt: "bench"}); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / time.Duration(n), nil
}

func BenchmarkSubagentOverhead(b *testing.B) {
	dir := b.TempDir()
	for _, c := range []struct{ name, state string }{{"transcripts", dir}, {"memory", ""}} {
		b.Run(c.name, func(b *testing.B) {
			coord := benchCoordinator(dir, c.state)
			general, _ := roles.Builtin(roles.General)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := coord.runChild(ctx, nil, childSpec{role: general, parent: "e-bench", depth: 1, prompt: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fanOutText scripts an executor that starts n subagents which each answer
// after delayMS with plain text.
func fanOutText(n, delayMS int) []scripted.Turn {
	var calls []scripted.Call
	for i := 1; i <= n; i++ {
		calls = append(calls, call(TaskTool, map[string]string{"agent": "general", "description": "bench", "prompt": fmt.Sprintf("BJOB%02dB", i)}))
	}
	turns := []scripted.Turn{{Match: "BENCHROOT", ToolCalls: calls}}
	for i := 1; i <= n; i++ {
		turns = append(turns, scripted.Turn{Match: fmt.Sprintf("BJOB%02dB", i), DelayMS: delayMS, Text: "ok"})
	}
	return append(turns, scripted.Turn{Match: "BENCHROOT", Text: "done"})
}

// TestParallelEfficiency prints the figures `make bench` reports: the
// coordinator's overhead per subagent and how close N concurrent
// subagents come to the time of one.
func TestParallelEfficiency(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") != "1" {
		t.Skip("timing figures; run with REASONIX_BENCH=1 (make bench)")
	}
	dir := t.TempDir()
	overhead, err := subagentOverhead(benchCoordinator(dir, dir), 200)
	if err != nil {
		t.Fatal(err)
	}
	inMemory, err := subagentOverhead(benchCoordinator(dir, ""), 200)
	if err != nil {
		t.Fatal(err)
	}
	const delay = 200
	run := func(n int) time.Duration {
		h := newHarness(t, fanOutText(n, delay), func(rt *Runtime) { rt.Settings.MaxParallel = max(n, 1) })
		start := time.Now()
		if _, err := h.coord.Run(context.Background(), "BENCHROOT"); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	one := run(1)
	var parts []string
	for _, n := range []int{4, 8} {
		eff := float64(one) / float64(run(n))
		part := fmt.Sprintf("N=%d: %.2f", n, eff)
		if n > DefaultMaxParallel {
			part = fmt.Sprintf("N=%d (max_parallel %d): %.2f", n, n, eff)
		}
		parts = append(parts, part)
		if eff < 0.5 {
			t.Errorf("N=%d ran at efficiency %.2f; subagents are not running concurrently", n, eff)
		}
	}
	fmt.Printf("subagent overhead: %v/child (%v without the transcript file); parallel efficiency %s (one subagent: %v with a %dms model)\n",
		overhead.Round(time.Microsecond), inMemory.Round(time.Microsecond), strings.Join(parts, ", "), one.Round(time.Millisecond), delay)
}

// planSteps scripts n independent steps whose workers each write a file
// and answer after delayMS.
func planSteps(n, delayMS int) (Plan, []scripted.Turn) {
	p := Plan{Goal: "bench"}
	var turns []scripted.Turn
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("b%d", i)
		p.Steps = append(p.Steps, PlanStep{ID: id, Title: "write " + id, Files: []string{id + ".txt"}})
		m := "assigned step " + id + " "
		turns = append(turns,
			scripted.Turn{Match: m, ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": id + ".txt", "content": id})}},
			scripted.Turn{Match: m, DelayMS: delayMS, Text: "ok"})
	}
	return p, turns
}

// TestPlanParallelEfficiency prints the plan figures `make bench` reports:
// how close N steps on N workers come to the time of one step, and the
// coordinator's own cost per step with an instant model, with and
// without git worktrees (creation, commit, merge and apply included).
func TestPlanParallelEfficiency(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") != "1" {
		t.Skip("timing figures; run with REASONIX_BENCH=1 (make bench)")
	}
	const delay = 200
	run := func(n, workers, delayMS int, opts ...harnessOpt) time.Duration {
		plan, turns := planSteps(n, delayMS)
		h := newHarness(t, turns, append([]harnessOpt{func(rt *Runtime) {
			rt.Settings.MaxParallel = workers
			rt.Settings.PlanIsolation = IsolationFiles
		}}, opts...)...)
		if len(opts) > 0 {
			gitRepo(t, h.ws, map[string]string{".gitignore": ".reasonix/\n"})
		}
		start := time.Now()
		if _, err := h.coord.Execute(context.Background(), plan); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	one := min(run(1, 1, delay), run(1, 1, delay)) // the first run pays for warming up
	var parts []string
	for _, n := range []int{2, 4, 8} {
		eff := float64(one) / float64(run(n, n, delay))
		parts = append(parts, fmt.Sprintf("N=%d: %.2f", n, eff))
		if eff < 0.5 {
			t.Errorf("N=%d steps on %d workers ran at efficiency %.2f; the steps are not running in parallel", n, n, eff)
		}
	}
	const steps = 10
	files := run(steps, 1, 0) / steps
	worktree := run(steps, 1, 0, func(rt *Runtime) { rt.Settings.PlanIsolation = IsolationWorktree; rt.Home = t.TempDir() }) / steps
	fmt.Printf("plan parallel efficiency %s (one step: %v with a %dms model); coordinator overhead per step: %v sharing the workspace, %v with a git worktree (create, commit, merge, apply)\n",
		strings.Join(parts, ", "), one.Round(time.Millisecond), delay, files.Round(time.Microsecond), worktree.Round(time.Microsecond))
}
