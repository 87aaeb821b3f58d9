package agents

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools"
)

// recNested records what a session tells its NestedRules.
type recNested struct{ holds [][]string }

func (r *recNested) Attach([]string) string { return "" }
func (r *recNested) Hold(results []string) {
	r.holds = append(r.holds, append([]string(nil), results...))
}

// TestNestedRulesHeldFromHistory: a restored history's tool results, and
// what a compaction leaves of them, are what the session's NestedRules is
// told it holds.
func TestNestedRulesHeldFromHistory(t *testing.T) {
	var hist []providers.Message
	for i := range 12 {
		id := fmt.Sprintf("c%d", i)
		hist = append(hist,
			providers.Message{Role: providers.RoleUser, Content: fmt.Sprintf("turn %d", i)},
			providers.Message{Role: providers.RoleAssistant, ToolCalls: []providers.ToolCall{{ID: id, Type: "function",
				Function: providers.FunctionCall{Name: "look", Arguments: `{}`}}}},
			providers.Message{Role: providers.RoleTool, ToolCallID: id, Content: fmt.Sprintf("RESULT-%d ", i) + strings.Repeat("x", 4096)},
			providers.Message{Role: providers.RoleAssistant, Content: "fine"})
	}
	rec := &recNested{}
	p := scripted.NewFromScript(&scripted.Script{Turns: []scripted.Turn{{Text: "digest of the work"}}})
	s, err := New(Config{Provider: p, System: "system prompt", Tools: tools.NewRegistry(stubTool{name: "look", readOnly: true}),
		ContextWindow: 8000, NestedRules: rec})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(hist); err != nil {
		t.Fatal(err)
	}
	if len(rec.holds) != 1 || len(rec.holds[0]) != 12 || !strings.HasPrefix(rec.holds[0][0], "RESULT-0 ") {
		t.Fatalf("after Restore, held %d times, first with %d results", len(rec.holds), len(rec.holds[0]))
	}
	c, err := s.Compact(context.Background(), "")
	if err != nil || (c.Folded == 0 && c.Pruned == 0) {
		t.Fatalf("compaction: %+v %v", c, err)
	}
	if len(rec.holds) != 2 {
		t.Fatalf("after a compaction, held %d times, want 2", len(rec.holds))
	}
	if got := strings.Join(rec.holds[1], "|"); strings.Contains(got, "RESULT-0 ") {
		t.Errorf("after the compaction the session still holds the first result: %.300s", got)
	}
}
