package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// prefixLimit is the most the cached prompt prefix of an executor session
// may take, in bytes as sent: the system message and every tool schema
// (docs/SPEC.md, "Figures").
const prefixLimit = 16 << 10

// builtinExecutorTools are the tools every executor session is offered
// when there are skills (and so the skill tool) and subagents.
var builtinExecutorTools = []string{
	"ask", "bash", "edit_file", "glob", "goal_status", "grep", "history", "job", "ls", "memory",
	"move_file", "multi_edit", "patch", "read_file", "skill", "task", "todo_read", "todo_write",
	"web_fetch", "write_file",
}

// installAgentsAndSkills writes n agents and n skills, a quarter in each
// place Reasonix reads them from: the project's .claude and .reasonix
// folders, ~/.claude and the Reasonix home. Their descriptions are as long
// as real ones, <example> blocks included.
func installAgentsAndSkills(e *e2e, n int) {
	e.t.Helper()
	root := filepath.Dir(e.home) // HOME of the runs
	agentDirs := []string{
		filepath.Join(e.repo, ".claude", "agents"), filepath.Join(e.repo, ".reasonix", "agents"),
		filepath.Join(root, ".claude", "agents"), filepath.Join(e.home, "agents"),
	}
	skillDirs := []string{
		filepath.Join(e.repo, ".claude", "skills"), filepath.Join(e.repo, ".reasonix", "skills"),
		filepath.Join(root, ".claude", "skills"), filepath.Join(e.home, "skills"),
	}
	write := func(p, content string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	for i := range n {
		agent := fmt.Sprintf("agent-%03d", i)
		write(filepath.Join(agentDirs[i%4], agent+".md"), fmt.Sprintf("---\nname: %s\n"+
			"description: Use this agent when the user needs backend work of kind %d reviewed or written. It knows many frameworks. "+
			"<example>user: \"Please review my handler\" assistant: \"I will use the %s agent\"</example>\n"+
			"tools: Read, Grep, Glob\n---\nYou are agent %d. Review carefully.\n", agent, i, agent, i))
		skill := fmt.Sprintf("skill-%03d", i)
		write(filepath.Join(skillDirs[i%4], skill, "SKILL.md"), fmt.Sprintf("---\nname: %s\n"+
			"description: Helps with chore %d of a long list of chores, with many details about what it covers and when to use it. "+
			"Use it when the user mentions chore %d.\n---\n# Chore %d\n\nDo chore %d step by step.\n", skill, i, i, i, i))
	}
}

// prefixOf returns the bytes of a request's cached prefix (the system
// message and the tool schemas as sent), its system message and tools
// array, and the tool names.
func prefixOf(t *testing.T, body []byte) (size int, system, toolsRaw []byte, names []string) {
	t.Helper()
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		t.Fatalf("request is not a chat request: %v", err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(body, &all); err != nil {
		t.Fatal(err)
	}
	size = len(req.Messages[0])
	for _, tl := range req.Tools {
		size += len(tl)
		var f struct {
			Function struct{ Name string } `json:"function"`
		}
		if err := json.Unmarshal(tl, &f); err != nil {
			t.Fatal(err)
		}
		names = append(names, f.Function.Name)
	}
	return size, req.Messages[0], all["tools"], names
}

// TestE2EPrefixUnder16KB: an executor session's cached prefix, with every
// built-in tool and 400 agents and 400 skills installed in the layouts
// users have, stays under 16 KB as sent, lists what fits and points past
// the rest (all 400 of each counted), and is byte-identical in two
// processes; `reasonix context` reports it. MCP tools are left out: the
// user chooses them.
func TestE2EPrefixUnder16KB(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "one"}, scripted.Turn{Text: "two"})
	installAgentsAndSkills(e, 400)
	for i := range 2 {
		if r := e.run("", "run", "go"); r.code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	size, system, toolsRaw, names := prefixOf(t, reqs[0])
	t.Logf("prefix with 400 agents and 400 skills: %d bytes (%.1f KB), %d tools", size, float64(size)/1024, len(names))
	if size >= prefixLimit {
		t.Errorf("prefix is %d bytes, limit %d", size, prefixLimit)
	}
	for _, want := range builtinExecutorTools {
		if !strings.Contains(","+strings.Join(names, ",")+",", ","+want+",") {
			t.Errorf("tool %s missing from %v", want, names)
		}
	}
	// Every agent and skill was read: the listed ones plus the count past
	// the cap make all of them (400 agents and the built-in general and
	// explore).
	var sys struct{ Content string }
	if err := json.Unmarshal(system, &sys); err != nil {
		t.Fatal(err)
	}
	var task struct {
		Function struct{ Description string } `json:"function"`
	}
	var toolList []json.RawMessage
	json.Unmarshal(toolsRaw, &toolList)
	for i, n := range names {
		if n == "task" {
			json.Unmarshal(toolList[i], &task)
		}
	}
	count := func(text, listed, more string, want int) {
		t.Helper()
		m := regexp.MustCompile(`\((\d+) more ` + more).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("no note on the %s past the cap in:\n%s", more, text)
			return
		}
		rest, _ := strconv.Atoi(m[1])
		if got := len(regexp.MustCompile(`(?m)^- `+listed).FindAllString(text, -1)) + rest; got != want {
			t.Errorf("%d %s listed or counted, want %d:\n%s", got, more, want, text)
		}
	}
	count(task.Function.Description, `(agent-\d+|general|explore):`, "agents", 402)
	if !strings.Contains(task.Function.Description, "\n- general: ") || !strings.Contains(task.Function.Description, "\n- explore: ") {
		t.Errorf("the built-in subagents are not listed first:\n%s", task.Function.Description)
	}
	count(sys.Content, `skill-\d+:`, "skills", 400)

	// `reasonix context` reports the same tools and nearly the same size
	// (it counts the system prompt unescaped, without its JSON wrapper).
	r := e.run("", "context", "--json")
	var rep contextReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("context --json: %v\n%s", err, r.stderr)
	}
	var ctxNames []string
	for _, p := range rep.Parts {
		ctxNames = append(ctxNames, p.Tools...)
	}
	if strings.Join(ctxNames, ",") != strings.Join(names, ",") {
		t.Errorf("context names tools %v, the request %v", ctxNames, names)
	}
	if rep.TotalBytes > size || rep.TotalBytes < size-300 {
		t.Errorf("context says %d bytes, the request has %d", rep.TotalBytes, size)
	}

	size2, system2, tools2, _ := prefixOf(t, reqs[1])
	if size2 != size || !bytes.Equal(system2, system) || !bytes.Equal(tools2, toolsRaw) {
		t.Errorf("the prefix differs between two processes: %d vs %d bytes", size, size2)
	}
}

// TestE2EPrefixBareUnder16KB: without agents or skills the prefix is
// smaller still (no skill tool, two agents in task).
func TestE2EPrefixBareUnder16KB(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "one"})
	if r := e.run("", "run", "go"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	size, _, _, names := prefixOf(t, e.srv.Requests()[0])
	t.Logf("bare prefix: %d bytes, %d tools", size, len(names))
	if size >= prefixLimit-2048 {
		t.Errorf("bare prefix is %d bytes; with agents and skills it may grow by up to 2 KB more", size)
	}
}
