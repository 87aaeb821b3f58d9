package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/skills"
)

// fanOut scripts an executor that starts n general subagents in one
// message, each answering after delay.
func fanOut(n, delayMS int) []scripted.Turn {
	var calls []scripted.Call
	for i := 1; i <= n; i++ {
		calls = append(calls, call(TaskTool, map[string]string{"agent": "general", "description": fmt.Sprintf("job %d", i),
			"prompt": fmt.Sprintf("JOBX%02dX write your file", i)}))
	}
	turns := []scripted.Turn{{Match: "FANOUT", ToolCalls: calls, Usage: usage(5)}}
	for i := 1; i <= n; i++ {
		turns = append(turns, scripted.Turn{Match: fmt.Sprintf("JOBX%02dX", i), DelayMS: delayMS,
			ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": fmt.Sprintf("out%02d.txt", i), "content": "x"})}, Usage: usage(7)})
	}
	for i := 1; i <= n; i++ {
		// The child's second request carries its write result.
		turns = append(turns, scripted.Turn{Match: fmt.Sprintf("wrote out%02d.txt", i), Text: fmt.Sprintf("report %02d", i), Usage: usage(7)})
	}
	turns = append(turns, scripted.Turn{Match: "FANOUT", Text: "all jobs done", Usage: usage(5)})
	return turns
}

func TestParallelTasks(t *testing.T) {
	const n, delay = 6, 300
	h := newHarness(t, fanOut(n, delay), func(rt *Runtime) { rt.Settings.MaxParallel = n })
	start := time.Now()
	res, err := h.coord.Run(context.Background(), "FANOUT please")
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "all jobs done" {
		t.Fatalf("text %q", res.Text)
	}
	// Concurrency is judged by overlapping requests, not by the clock: a
	// loaded machine (CI, the race detector) slows one wave down, but
	// serial tasks would never have two requests in flight. The elapsed
	// time is a sanity bound well below serial (n×delay).
	if peak := h.peak.Load(); peak < n/2 {
		t.Errorf("at most %d requests were in flight; %d tasks did not run concurrently", peak, n)
	}
	if elapsed >= time.Duration(delay*n*2/3)*time.Millisecond {
		t.Errorf("%d tasks took %v; serial would take %dms", n, elapsed, delay*n)
	}
	exec := h.session("FANOUT")
	results := exec.lastToolResults()
	if len(results) != n {
		t.Fatalf("%d tool results", len(results))
	}
	starts := map[string]events.Event{}
	for _, e := range h.events(events.SessionStart) {
		starts[e.Session] = e
	}
	for i, r := range results {
		var tr TaskResult
		if err := json.Unmarshal([]byte(r), &tr); err != nil {
			t.Fatalf("result %d is not a TaskResult: %q", i, r)
		}
		want := fmt.Sprintf("out%02d.txt", i+1)
		if tr.Status != TaskOK || tr.Summary != fmt.Sprintf("report %02d", i+1) || !slices.Equal(tr.Files, []string{want}) || tr.Usage.PromptTokens != 14 {
			t.Errorf("result %d: %+v", i, tr)
		}
		if hd := h.transcript(tr.SessionID); hd.Parent != res.SessionID || hd.Role != "general" {
			t.Errorf("child transcript header %+v", hd)
		}
		if e := starts[tr.SessionID]; e.Parent != res.SessionID || e.Role != "general" || !strings.HasPrefix(e.Title, "job ") {
			t.Errorf("child start event %+v (its title is the task's description)", e)
		}
	}
	// Child tool events reach the sink tagged with the child and parent.
	tagged := 0
	for _, e := range h.events(events.ToolEnd) {
		if e.Tool.Name == "write_file" && e.Parent == res.SessionID && e.Role == "general" && strings.HasPrefix(e.Session, "g-") {
			tagged++
		}
	}
	if tagged != n {
		t.Errorf("%d tagged child write events", tagged)
	}
	if res.Total.PromptTokens != 10+n*14 {
		t.Errorf("total usage %+v", res.Total)
	}
	h.checkPrefixes()
}

func TestParallelBound(t *testing.T) {
	h := newHarness(t, fanOut(6, 60), func(rt *Runtime) { rt.Settings.MaxParallel = 2 })
	if _, err := h.coord.Run(context.Background(), "FANOUT"); err != nil {
		t.Fatal(err)
	}
	if p := h.peak.Load(); p != 2 {
		t.Errorf("peak concurrency %d, want exactly max_parallel 2", p)
	}
	for _, c := range []struct{ in, want int }{{0, DefaultMaxParallel}, {-3, DefaultMaxParallel}, {1, 1}, {99, MaxMaxParallel}} {
		if got := New(Runtime{Settings: Settings{MaxParallel: c.in}}).MaxParallel(); got != c.want {
			t.Errorf("MaxParallel(%d) = %d", c.in, got)
		}
	}
}

func TestTaskDenied(t *testing.T) {
	gate := &denyGate{deny: map[string]bool{"explore": true}}
	h := newHarness(t, []scripted.Turn{
		{Match: "DENYME", ToolCalls: []scripted.Call{call(TaskTool, map[string]string{"agent": "explore", "description": "look", "prompt": "EXPLORE-CHILD"})}},
		{Match: "DENYME", ToolCalls: []scripted.Call{call(TaskTool, map[string]string{"agent": "nobody", "description": "x", "prompt": "p"})}},
		{Match: "DENYME", Text: "gave up"},
	}, func(rt *Runtime) { rt.Gate = gate })
	if _, err := h.coord.Run(context.Background(), "DENYME"); err != nil {
		t.Fatal(err)
	}
	exec := h.session("DENYME")
	rs := exec.requests()
	denied := rs[1].Messages[len(rs[1].Messages)-1].Content
	if !strings.Contains(denied, "Task(explore)") {
		t.Errorf("denial not reported: %q", denied)
	}
	unknown := exec.lastToolResults()[1]
	if !strings.Contains(unknown, `unknown agent "nobody"`) || !strings.Contains(unknown, "explore, general") {
		t.Errorf("unknown agent: %q", unknown)
	}
	for _, e := range h.events(events.SessionStart) {
		if e.Role == "explore" {
			t.Errorf("a denied subagent started: %+v", e)
		}
	}
	if !slices.Equal(gate.seen, []string{"explore", "nobody"}) {
		t.Errorf("gate saw %v", gate.seen)
	}
	h.checkPrefixes()
}

func TestDepthLimit(t *testing.T) {
	h := newHarness(t, []scripted.Turn{
		{Match: "DEPTHROOT", ToolCalls: []scripted.Call{call(TaskTool, map[string]string{"agent": "general", "description": "d1", "prompt": "LEVELONE go deeper"})}},
		{Match: "LEVELONE", ToolCalls: []scripted.Call{call(TaskTool, map[string]string{"agent": "general", "description": "d2", "prompt": "LEVELTWO leaf"})}},
		{Match: "LEVELTWO", Text: "leaf report"},
		{Match: "leaf report", Text: "mid report"},
		{Match: "mid report", Text: "root done"},
	}, func(rt *Runtime) { rt.Settings.MaxParallel = 1 })
	res, err := h.coord.Run(context.Background(), "DEPTHROOT")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "root done" {
		t.Fatalf("text %q", res.Text)
	}
	root, mid, leaf := h.session("DEPTHROOT"), h.session("LEVELONE"), h.session("LEVELTWO")
	if !slices.Contains(root.toolNames(), TaskTool) || !slices.Contains(mid.toolNames(), TaskTool) {
		t.Errorf("task missing below the limit: root %v mid %v", root.toolNames(), mid.toolNames())
	}
	if slices.Contains(leaf.toolNames(), TaskTool) {
		t.Errorf("a depth-%d child was offered task: %v", MaxDepth, leaf.toolNames())
	}
	var midRes TaskResult
	if err := json.Unmarshal([]byte(root.lastToolResults()[0]), &midRes); err != nil {
		t.Fatal(err)
	}
	var leafRes TaskResult
	if err := json.Unmarshal([]byte(mid.lastToolResults()[0]), &leafRes); err != nil {
		t.Fatal(err)
	}
	if h.transcript(midRes.SessionID).Parent != res.SessionID || h.transcript(leafRes.SessionID).Parent != midRes.SessionID {
		t.Errorf("parent links wrong")
	}
	// max_parallel 1 with a nested child did not deadlock: the middle
	// child lent its slot to the leaf.
	h.checkPrefixes()
	if _, err := h.coord.runChild(context.Background(), nil, childSpec{role: midRoleForTest(t, h), depth: MaxDepth + 1, prompt: "x"}); err == nil {
		t.Error("runChild accepted a depth past the limit")
	}
}

func midRoleForTest(t *testing.T, h *harness) (r roles.Role) {
	t.Helper()
	r, ok := h.coord.subagent("general")
	if !ok {
		t.Fatal("no general role")
	}
	return r
}

func TestSubagentModels(t *testing.T) {
	h := newHarness(t, []scripted.Turn{
		{Match: "MODELS", ToolCalls: []scripted.Call{
			call(TaskTool, map[string]string{"agent": "general", "description": "a", "prompt": "GENCHILD"}),
			call(TaskTool, map[string]string{"agent": "explore", "description": "b", "prompt": "EXPCHILD"}),
		}},
		{Match: "GENCHILD", Text: "g"},
		{Match: "EXPCHILD", Text: "e"},
		{Match: "MODELS", Text: "ok"},
	}, func(rt *Runtime) {
		rt.Settings.SubagentModel = "sub-model"
		rt.Settings.SubagentModels = map[string]string{"explore": "explore-model"}
	})
	if _, err := h.coord.Run(context.Background(), "MODELS"); err != nil {
		t.Fatal(err)
	}
	if m := h.session("GENCHILD").requests()[0].Model; m != "sub-model" {
		t.Errorf("general model %q", m)
	}
	if m := h.session("EXPCHILD").requests()[0].Model; m != "explore-model" {
		t.Errorf("explore model %q", m)
	}
	if et := h.session("EXPCHILD").toolNames(); slices.Contains(et, "write_file") || slices.Contains(et, TaskTool) {
		t.Errorf("explore tools %v", et)
	}
}

func writeSkill(t *testing.T, ws, name, front, body string) {
	t.Helper()
	dir := filepath.Join(ws, ".reasonix", "skills", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+name+"\n"+front+"---\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func withSkills(t *testing.T, setup func(ws string)) harnessOpt {
	return func(rt *Runtime) {
		setup(rt.Workspace)
		cat, notices := skills.Discover(skills.Options{Workspace: rt.Workspace})
		if len(notices) > 0 {
			t.Logf("skill notices: %v", notices)
		}
		rt.Skills = cat
	}
}

func TestSkillAsSubagent(t *testing.T) {
	setup := func(ws string) {
		writeSkill(t, ws, "summarize", "description: Summarise a file.\nrunAs: subagent\nallowed-tools: Read, Bash(git log:*)\n",
			"SKILLBODY Read the file named in $ARGUMENTS and summarise it.\n")
		writeSkill(t, ws, "style", "description: House style.\n", "Use tabs.\n")
	}
	h := newHarness(t, []scripted.Turn{
		{Match: "SKILLROOT", ToolCalls: []scripted.Call{call("skill", map[string]string{"action": "load", "name": "summarize", "args": "notes.md"})}},
		{Match: "SKILLBODY", Text: "summary of notes"},
		{Match: "SKILLROOT", Text: "root saw summary"},
		// RunSkill, as for /summarize README.
		{Match: "README-ARG", Text: "direct summary"},
	}, withSkills(t, setup))
	res, err := h.coord.Run(context.Background(), "SKILLROOT")
	if err != nil {
		t.Fatal(err)
	}
	root := h.session("SKILLROOT")
	if got := root.lastToolResults()[0]; got != "summary of notes" {
		t.Errorf("skill tool returned %q", got)
	}
	if !strings.Contains(root.system(), "- summarize: Summarise a file.") {
		t.Errorf("skill index not in the executor prompt")
	}
	child := h.session("notes.md")
	if !strings.Contains(child.system(), "SKILLBODY Read the file named in notes.md") {
		t.Errorf("skill body not the child's instructions: %q", child.system())
	}
	if tn := child.toolNames(); !slices.Equal(tn, []string{"read_file"}) {
		t.Errorf("skill child tools %v, want its allowed-tools", tn)
	}
	var childStart events.Event
	for _, e := range h.events(events.SessionStart) {
		if e.Role == "skill:summarize" {
			childStart = e
		}
	}
	if childStart.Parent != res.SessionID {
		t.Errorf("skill child start %+v", childStart)
	}

	sres, err := h.coord.RunSkill(context.Background(), "/summarize", "README-ARG")
	if err != nil || sres.Text != "direct summary" {
		t.Fatalf("RunSkill: %+v %v", sres, err)
	}
	if _, err := h.coord.RunSkill(context.Background(), "missing", ""); err == nil {
		t.Error("missing skill ran")
	}
	p, err := h.coord.SkillPrompt("style", "now")
	if err != nil || !strings.Contains(p, "Use tabs.") || !strings.Contains(p, "ARGUMENTS: now") {
		t.Errorf("SkillPrompt %q %v", p, err)
	}
	h.checkPrefixes()
}

func TestSkillDenied(t *testing.T) {
	setup := func(ws string) {
		writeSkill(t, ws, "secret", "description: Hidden.\nrunAs: subagent\n", "body\n")
	}
	h := newHarness(t, nil, withSkills(t, setup), func(rt *Runtime) {
		rt.SkillAllow = func(name string) bool { return name != "secret" }
	})
	if _, err := h.coord.RunSkill(context.Background(), "secret", ""); err == nil || !strings.Contains(err.Error(), "Skill(secret)") {
		t.Errorf("denied skill: %v", err)
	}
}

func TestSkillTools(t *testing.T) {
	cases := []struct {
		in   []string
		want []string
	}{
		{nil, nil},
		{[]string{"*"}, nil},
		{[]string{"Read", "Grep", "Bash(git:*)", "read_file", "mcp__gh__issue"}, []string{"read_file", "grep", "bash", "mcp__gh__issue"}},
		{[]string{"WebFetch?"}, []string{}},
	}
	for _, c := range cases {
		got := skillTools(c.in)
		if (got == nil) != (c.want == nil) || !slices.Equal(got, c.want) {
			t.Errorf("skillTools(%v) = %#v, want %#v", c.in, got, c.want)
		}
	}
}

func TestTaskCancelAndFailure(t *testing.T) {
	t.Run("cancel stops every worker", func(t *testing.T) {
		h := newHarness(t, fanOut(4, 10_000), func(rt *Runtime) { rt.Settings.MaxParallel = 2 })
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := h.coord.Run(ctx, "FANOUT")
		if err == nil {
			t.Fatal("cancelled run succeeded")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("cancellation took %v", d)
		}
		// Every slot came back.
		if !h.coord.slots.TryAcquire(int64(h.coord.MaxParallel())) {
			t.Error("a cancelled subagent kept its slot")
		}
		if n := h.inflight.Load(); n != 0 {
			t.Errorf("%d streams still open", n)
		}
	})
	t.Run("failed child reports error", func(t *testing.T) {
		h := newHarness(t, []scripted.Turn{
			{Match: "FAILROOT", ToolCalls: []scripted.Call{call(TaskTool, map[string]string{"agent": "general", "description": "x", "prompt": "FAILCHILD"})}},
			{Match: "FAILCHILD", Status: 400, ErrorBody: "bad request"},
			{Match: "FAILROOT", Text: "handled"},
		})
		res, err := h.coord.Run(context.Background(), "FAILROOT")
		if err != nil || res.Text != "handled" {
			t.Fatalf("res %+v err %v", res, err)
		}
		got := h.session("FAILROOT").lastToolResults()[0]
		var tr TaskResult
		if !strings.HasPrefix(got, "Error: ") || json.Unmarshal([]byte(strings.TrimPrefix(got, "Error: ")), &tr) != nil ||
			tr.Status != TaskError || !strings.Contains(tr.Error, "bad request") {
			t.Errorf("tool result %q", got)
		}
	})
	t.Run("unresolvable role model falls back", func(t *testing.T) {
		h := newHarness(t, []scripted.Turn{{Match: "ROLEMODEL", Text: "fine"}})
		r, _ := roles.Builtin(roles.General)
		r.Model = "bad-sonnet"
		res, err := h.coord.runChild(context.Background(), nil, childSpec{role: r, parent: "e-x", depth: 1, parentModel: "parent-model", modelRef: r.Model, prompt: "ROLEMODEL"})
		if err != nil || res.Text != "fine" {
			t.Fatalf("res %+v err %v", res, err)
		}
		if m := h.session("ROLEMODEL").requests()[0].Model; m != "parent-model" {
			t.Errorf("model %q", m)
		}
	})
}

// TestNestedFanOutWithOneSlot: a child that starts two children of its own
// while holding the only slot lends it to them instead of deadlocking.
func TestNestedFanOutWithOneSlot(t *testing.T) {
	h := newHarness(t, []scripted.Turn{
		{Match: "NESTROOT", ToolCalls: []scripted.Call{call(TaskTool, map[string]string{"agent": "general", "description": "mid", "prompt": "NESTMID"})}},
		{Match: "NESTMID", ToolCalls: []scripted.Call{
			call(TaskTool, map[string]string{"agent": "general", "description": "a", "prompt": "LEAFA"}),
			call(TaskTool, map[string]string{"agent": "general", "description": "b", "prompt": "LEAFB"}),
		}},
		{Match: "LEAFA", DelayMS: 30, Text: "leaf a"},
		{Match: "LEAFB", DelayMS: 30, Text: "leaf b"},
		{Match: "leaf b", Text: "mid done"},
		{Match: "mid done", Text: "root done"},
	}, func(rt *Runtime) { rt.Settings.MaxParallel = 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := h.coord.Run(ctx, "NESTROOT")
	if err != nil || res.Text != "root done" {
		t.Fatalf("res %q err %v", res.Text, err)
	}
	if p := h.peak.Load(); p != 1 {
		t.Errorf("peak concurrency %d with max_parallel 1", p)
	}
	h.checkPrefixes()
}

// TestAgentIndexCapped: 400 agent files in Claude Code's layout add at
// most indexBytes (all of it: there are no skills) to the prefix (the task tool's description and
// schema); an agent past the cap is found with list and started by name.
func TestAgentIndexCapped(t *testing.T) {
	h := newHarness(t, []scripted.Turn{
		{Match: "FINDROOT", ToolCalls: []scripted.Call{call(TaskTool, map[string]string{"list": "terraform drift"})}},
		{Match: "FINDROOT", ToolCalls: []scripted.Call{call(TaskTool, map[string]string{"agent": "agent-397", "description": "check drift", "prompt": "LASTCHILD go"})}},
		{Match: "LASTCHILD", Text: "no drift"},
		{Match: "FINDROOT", Text: "done"},
	}, func(rt *Runtime) {
		dir := filepath.Join(rt.Workspace, ".claude", "agents")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 400 {
			desc := fmt.Sprintf("Use this agent for general backend work number %d. It knows many frameworks and writes long explanations "+
				"with <example> blocks that go on and on.", i)
			if i == 397 {
				desc = "Detects terraform drift between state and cloud. Use after infra changes."
			}
			body := fmt.Sprintf("---\nname: agent-%03d\ndescription: %s\ntools: Read, Grep\n---\nYou are agent %d.\n", i, desc, i)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("agent-%03d.md", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		set, notices := roles.Load(roles.LoadOptions{Workspace: rt.Workspace})
		if len(notices) > 0 {
			t.Logf("notices: %v", notices[:min(3, len(notices))])
		}
		rt.Roles = set
	})
	none := &taskTool{agents: nil}
	base := len(none.Description()) + len(none.Schema())
	p, err := h.coord.Prefix("executor")
	if err != nil {
		t.Fatal(err)
	}
	var task *taskTool
	reg := h.coord.toolsFor(h.coord.executorRole(), 0, "", "", &family{})
	if tl, ok := reg.Get(TaskTool); ok {
		task = tl.(*taskTool)
	}
	if task == nil || len(task.agents) < 400 {
		t.Fatalf("task tool with %d agents", len(task.agents))
	}
	added := len(task.Description()) + len(task.Schema()) - base
	if added > indexBytes || added < indexBytes-200 {
		t.Errorf("400 agents add %d bytes to the prefix, cap %d", added, indexBytes)
	}
	if !strings.Contains(task.Description(), "more agents: find them with list") || strings.Contains(task.Description(), "agent-397") {
		t.Errorf("description does not point past the cap:\n%s", task.Description())
	}
	if strings.Contains(string(task.Schema()), `"enum"`) {
		t.Error("the schema still enumerates every agent")
	}
	if strings.Contains(task.Description(), "on and on") {
		t.Error("an index line carries more than the first sentence")
	}
	if len(p.Tools) > 64<<10 {
		t.Errorf("tool schemas are %d bytes", len(p.Tools))
	}

	cv, err := h.coord.Converse()
	if err != nil {
		t.Fatal(err)
	}
	defer cv.Close()
	res, err := cv.Send(context.Background(), "FINDROOT")
	if err != nil || res.Text != "done" {
		t.Fatalf("res %+v, %v", res, err)
	}
	var listed, ran string
	for _, e := range h.rec.Events() {
		if e.Type == events.ToolEnd && e.Tool != nil && e.Tool.Name == TaskTool {
			if listed == "" {
				listed = e.Tool.Result
			} else {
				ran = e.Tool.Result
			}
		}
	}
	if !strings.Contains(listed, "1 agent(s) match") || !strings.Contains(listed, "agent-397: Detects terraform drift") {
		t.Errorf("list result:\n%s", listed)
	}
	if !strings.Contains(ran, `"status": "ok"`) || !strings.Contains(ran, "no drift") {
		t.Errorf("task result:\n%s", ran)
	}
}

// TestIndexSplit: agents and skills share indexBytes; each gets half when
// both need more, and what one leaves unused goes to the other.
func TestIndexSplit(t *testing.T) {
	half := indexBytes / 2
	for _, c := range []struct{ agents, skills, wantA, wantS int }{
		{0, 0, indexBytes, indexBytes},
		{100, 50000, half, indexBytes - 100},
		{50000, 100, indexBytes - 100, half},
		{50000, 50000, half, indexBytes - half},
		{300, 400, indexBytes - 400, indexBytes - 300},
	} {
		a, s := indexSplit(c.agents, c.skills)
		if a != c.wantA || s != c.wantS {
			t.Errorf("indexSplit(%d, %d) = %d, %d; want %d, %d", c.agents, c.skills, a, s, c.wantA, c.wantS)
		}
		if used := min(a, c.agents) + min(s, c.skills); used > indexBytes {
			t.Errorf("indexSplit(%d, %d) lets %d bytes in", c.agents, c.skills, used)
		}
	}
}

// TestSubagentDoneNamesItsParent: a subagent's done event carries its
// parent, so text and stream-json readers can tell it from the run's own.
func TestSubagentDoneNamesItsParent(t *testing.T) {
	h := newHarness(t, fanOut(2, 0))
	res, err := h.coord.Run(context.Background(), "FANOUT please")
	if err != nil {
		t.Fatal(err)
	}
	var children, top int
	for _, ev := range h.events(events.Done) {
		switch ev.Parent {
		case "":
			top++
			if ev.Session != res.SessionID {
				t.Errorf("a done event without a parent from %s, not the run's session %s", ev.Session, res.SessionID)
			}
		case res.SessionID:
			children++
		default:
			t.Errorf("done event with parent %q", ev.Parent)
		}
	}
	if children != 2 || top != 1 {
		t.Errorf("done events: %d from subagents, %d top-level; want 2 and 1", children, top)
	}
}
