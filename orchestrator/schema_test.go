package orchestrator

import (
	"strings"
	"testing"

	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/tools/schematest"
)

// handoverSchemas returns the schemas of the tools the coordinator adds,
// the task tool naming the built-in subagents. With other set the order
// they are first built in is reversed.
func handoverSchemas(other bool) []schematest.Entry {
	task := &taskTool{agents: (*roles.Set)(nil).Subagents()}
	if other {
		task.Schema()
		goalStatusTool{}.Schema()
	}
	return []schematest.Entry{
		{Name: GoalStatusTool, Schema: goalStatusTool{}.Schema()},
		{Name: SubmitPlanTool, Schema: submitPlanTool{}.Schema()},
		{Name: TaskTool, Schema: task.Schema()},
	}
}

// TestSchemasGolden pins the schema bytes of submit_plan, goal_status and
// task, part of the cached prompt prefix. Regenerate with
// go test ./orchestrator -run Golden -update.
func TestSchemasGolden(t *testing.T) {
	entries := handoverSchemas(false)
	schematest.Check(t, entries)
	schematest.Golden(t, "testdata/schemas.golden", schematest.Format(entries))
}

func TestSchemasStableAcrossProcesses(t *testing.T) {
	schematest.StableAcrossProcesses(t, func(other bool) []byte { return schematest.Format(handoverSchemas(other)) })
}

// TestTaskSchemaNamesAgents checks the agent enum follows the tool's own
// agents, in their order.
func TestTaskSchemaNamesAgents(t *testing.T) {
	a := &taskTool{agents: []roles.Role{{Name: "zeta"}, {Name: "alpha"}}}
	b := &taskTool{agents: []roles.Role{{Name: "beta"}}}
	sa, sb := string(a.Schema()), string(b.Schema())
	if want := `"enum":["zeta","alpha"]`; !strings.Contains(sa, want) {
		t.Errorf("schema %s lacks %s", sa, want)
	}
	if want := `"enum":["beta"]`; !strings.Contains(sb, want) {
		t.Errorf("schema %s lacks %s", sb, want)
	}
	if string(a.Schema()) != sa {
		t.Error("task schema changed between calls")
	}
}
