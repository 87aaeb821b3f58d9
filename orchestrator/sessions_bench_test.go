package orchestrator

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers"
)

// writeLongSession writes a session of n messages shaped like a real one:
// turns of a prompt, tool calls with arguments, results of a few hundred
// bytes and answers.
func writeLongSession(tb testing.TB, dir, id string, n int) string {
	tb.Helper()
	tr, err := (*store.Seals)(nil).Create(dir, store.Header{ID: id, Role: "executor", Model: "m"})
	if err != nil {
		tb.Fatal(err)
	}
	body := strings.Repeat("line of output from a tool call\n", 12)
	for i := 0; i < n; {
		msgs := []providers.Message{
			{Role: providers.RoleUser, Content: fmt.Sprintf("turn %d: please look at file%d.go", i, i)},
			{Role: providers.RoleAssistant, Content: "Reading it.", ToolCalls: []providers.ToolCall{{ID: fmt.Sprintf("c%d", i), Type: "function",
				Function: providers.FunctionCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"file%d.go"}`, i)}}}},
			{Role: providers.RoleTool, ToolCallID: fmt.Sprintf("c%d", i), Content: body},
			{Role: providers.RoleAssistant, Content: "It looks fine; the loop on line 12 could exit early."},
		}
		for _, m := range msgs {
			if i == n {
				break
			}
			if err := tr.Append(m); err != nil {
				tb.Fatal(err)
			}
			i++
		}
	}
	if err := tr.Record(store.Meta{Type: store.TypeMeta, Updated: time.Now().UTC(), Turns: n / 4}); err != nil {
		tb.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		tb.Fatal(err)
	}
	return tr.Path()
}

// TestSessionFigures prints the session figures `make bench` reports:
// loading and resuming a 10,000-message session (target under 200 ms)
// and listing 1,000 sessions.
func TestSessionFigures(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") != "1" {
		t.Skip("timing figures; run with REASONIX_BENCH=1 (make bench)")
	}
	state := t.TempDir()
	dir := filepath.Join(state, "sessions")
	path := writeLongSession(t, dir, "e-long", 10000)
	c := benchCoordinator(t.TempDir(), state)
	best := time.Duration(1 << 62)
	for i := 0; i < 5; i++ {
		start := time.Now()
		cv, err := c.Resume(path, "")
		if err != nil {
			t.Fatal(err)
		}
		d := time.Since(start)
		cv.Close()
		if n := len(cv.w.Messages()); n < 10000 {
			t.Fatalf("resumed %d messages", n)
		}
		best = min(best, d)
	}
	st, _ := os.Stat(path)
	fmt.Printf("bench session: load and resume 10,000 messages (%.1f MB): %v (target < 200ms)\n",
		float64(st.Size())/1e6, best.Round(100*time.Microsecond))
	if best > 200*time.Millisecond {
		t.Errorf("resuming a 10,000-message session took %v", best)
	}

	many := t.TempDir()
	for i := 0; i < 1000; i++ {
		writeLongSession(t, many, fmt.Sprintf("e-%04d", i), 40)
	}
	best = time.Duration(1 << 62)
	for i := 0; i < 5; i++ {
		start := time.Now()
		list, _, err := store.List(many, false)
		if err != nil || len(list) != 1000 {
			t.Fatalf("list: %d %v", len(list), err)
		}
		best = min(best, time.Since(start))
	}
	fmt.Printf("bench session: list 1,000 sessions: %v\n", best.Round(100*time.Microsecond))
}
