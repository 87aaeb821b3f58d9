package orchestrator

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/tools/schemagen"
	"github.com/reasonix/reasonix/tools/schematest"
)

// schemaSpecs are the argument structs the schemas of the tools the
// coordinator adds are generated from, with their edits, into
// schemas_gen.go. The task tool's agent enum is a placeholder, replaced
// at run time by the loaded agents (withAgents).
var schemaSpecs = []schemagen.Spec{
	schemagen.For[GoalReport]("goalStatusSchema", GoalStatusTool, schemagen.WithEnum("status", GoalDone, GoalBlocked, GoalContinue)),
	schemagen.For[Plan]("planSchema", SubmitPlanTool, schemagen.WithMinItems("steps", 1)),
	schemagen.For[taskArgs]("taskSchema", TaskTool, taskEnum(agentsPlaceholder)),
	schemagen.For[stepReport]("stepReportSchema", ReportStepTool, schemagen.WithEnum("status", "failed", "blocked", "done")),
}

// taskEnum is the task tool's edit naming agents.
func taskEnum(agents ...string) schemagen.Edit { return schemagen.WithEnum("agent", agents...) }

// TestSchemasGenerated checks schemas_gen.go is what the specs generate
// today; go generate runs it with -update to rewrite the file. The file is
// the golden file: the schemas are part of the cached prompt prefix, so
// its diff must be reviewed.
func TestSchemasGenerated(t *testing.T) {
	schematest.Generated(t, "orchestrator", schemaSpecs)
}

// TestSchemas checks each tool returns the schema generated from its
// spec, the task tool's naming the built-in subagents, and that each is a
// closed object a provider accepts.
func TestSchemas(t *testing.T) {
	agents := (*roles.Set)(nil).Subagents()
	task := &taskTool{agents: agents}
	var names []string
	for _, r := range agents {
		names = append(names, r.Name)
	}
	entries := []schematest.Entry{
		{Name: GoalStatusTool, Schema: goalStatusTool{}.Schema()},
		{Name: SubmitPlanTool, Schema: submitPlanTool{}.Schema()},
		{Name: TaskTool, Schema: task.Schema()},
		{Name: ReportStepTool, Schema: reportStepTool{}.Schema()},
	}
	schematest.Check(t, entries)
	for i, e := range entries {
		spec := schemaSpecs[i]
		if e.Name == TaskTool {
			spec = schemagen.For[taskArgs]("", TaskTool, taskEnum(names...))
		}
		want, err := spec.Build()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Schema, want) {
			t.Errorf("%s: Schema returns\n%s\nnot\n%s", e.Name, e.Schema, want)
		}
	}
	// Today's bytes. The list argument (issue 10: agents past the index
	// cap are looked up) made agent, description and prompt optional; a
	// call without list still needs a prompt (Execute says so). The tool's
	// description says what each argument is (issue 8: the prefix budget).
	const taskWant = `{"type":"object","properties":{"agent":{"type":"string","enum":["explore","general"]},"description":{"type":"string","description":"A few words for the user on what it does"},"prompt":{"type":"string"},"list":{"type":"string"}},"required":[],"additionalProperties":false}`
	if got := string(task.Schema()); got != taskWant {
		t.Errorf("task schema\n%s\nwant\n%s", got, taskWant)
	}
}

func TestSchemasStableAcrossProcesses(t *testing.T) {
	schematest.StableAcrossProcesses(t, func() []byte {
		src, err := schemagen.Source("orchestrator", "test", schemaSpecs)
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}

// TestTaskSchemaNamesAgents checks the agent enum follows the tool's own
// agents, in their order, with the very bytes the generator writes for
// such an enum, whatever the names hold, and none when there are none.
func TestTaskSchemaNamesAgents(t *testing.T) {
	if n := strings.Count(taskSchema, agentsEnum); n != 1 {
		t.Fatalf("taskSchema holds %s %d times, want once: %s", agentsEnum, n, taskSchema)
	}
	for _, names := range [][]string{
		{"zeta", "alpha"},
		{"beta"},
		{`q"uote`, `back\slash`, "<b>&amp;", "ünï\u2028code", "\x01"},
		nil,
	} {
		agents := make([]roles.Role, len(names))
		for i, n := range names {
			agents[i] = roles.Role{Name: n}
		}
		task := &taskTool{agents: agents}
		got := task.Schema()
		want, err := schemagen.For[taskArgs]("", TaskTool, taskEnum(names...)).Build()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("agents %q: schema\n%s\nwant\n%s", names, got, want)
		}
		if !bytes.Equal(task.Schema(), got) {
			t.Error("task schema changed between calls")
		}
	}
	a := &taskTool{agents: []roles.Role{{Name: "zeta"}, {Name: "alpha"}}}
	if want := `"enum":["zeta","alpha"]`; !strings.Contains(string(a.Schema()), want) {
		t.Errorf("schema %s lacks %s", a.Schema(), want)
	}
}
