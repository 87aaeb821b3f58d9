package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/tools"
)

// Task statuses.
const (
	TaskOK       = "ok"
	TaskError    = "error"
	TaskMaxSteps = "max_steps"
)

// TaskResult is what a subagent hands back to the session that started
// it; its JSON is the task tool's result.
type TaskResult struct {
	Agent     string          `json:"agent"`
	SessionID string          `json:"session_id,omitempty"`
	Status    string          `json:"status"`
	Summary   string          `json:"summary"`
	Files     []string        `json:"files_touched,omitempty"`
	Usage     providers.Usage `json:"usage"`
	Error     string          `json:"error,omitempty"`
}

// taskTool starts a subagent. One instance belongs to one parent session,
// so it knows the parent's id, depth and model.
type taskTool struct {
	c      *Coordinator
	parent string
	fam    *family
	depth  int
	model  *modelPin
	agents []roles.Role
	// budget bounds the agent index: the coordinator's share of
	// indexBytes for agents (0: indexBytes).
	budget int

	// schemaOnce builds schema, which names the agents above.
	schemaOnce sync.Once
	schema     json.RawMessage
	// indexOnce builds idx, the agent lines; all says every agent is in.
	indexOnce sync.Once
	idx       string
	all       bool
}

func (t *taskTool) Name() string { return TaskTool }

// agentLine is one agent in the index: its name and the first sentence of
// its description, shortened.
func agentLine(r roles.Role) string {
	return "- " + r.Name + ": " + text.Sentence(r.Description, 80) + "\n"
}

// agentIndexNeed is what listing every agent would add to the prefix:
// each line in the description and each name in the schema's enum.
func agentIndexNeed(agents []roles.Role) int {
	n := 0
	for _, r := range agents {
		n += len(agentLine(r)) + len(r.Name) + 3
	}
	return n
}

// index returns the agent lines of the description and whether every
// agent is in them (then the schema names them all in an enum). Built
// once per tool: the bytes are part of the cached prefix.
func (t *taskTool) index() (string, bool) {
	t.indexOnce.Do(func() {
		budget := t.budget
		if budget <= 0 {
			budget = indexBytes
		}
		var lines []string
		for _, r := range t.agents {
			lines = append(lines, agentLine(r))
		}
		if agentIndexNeed(t.agents) <= budget {
			t.idx, t.all = strings.Join(lines, ""), true
			return
		}
		// Past the budget the built-in general and explore come first:
		// they are there in every project, whatever the names of the rest.
		lines = lines[:0]
		for _, builtin := range []bool{true, false} {
			for _, r := range t.agents {
				if (r.Source == roles.SourceBuiltin) == builtin {
					lines = append(lines, agentLine(r))
				}
			}
		}
		var b strings.Builder
		for i, l := range lines {
			note := fmt.Sprintf("(%d more agents: find them with list, e.g. {\"list\": \"python\"}, and start one by name)\n", len(lines)-i)
			if b.Len()+len(l)+len(note) > budget {
				b.WriteString(note)
				break
			}
			b.WriteString(l)
		}
		t.idx = b.String()
	})
	return t.idx, t.all
}

func (t *taskTool) Description() string {
	var b strings.Builder
	b.WriteString("Start a subagent, a session with its own context, on a self-contained task: broad searches, independent work. ")
	b.WriteString("Task calls in one message run in parallel. It sees only your prompt, so give every detail it needs and say what to report. ")
	b.WriteString("Returns status, summary (its final answer), files_touched and usage. ")
	b.WriteString("list instead finds agents by words in their names and descriptions (\"*\": all).\nAgents:\n")
	idx, _ := t.index()
	b.WriteString(idx)
	return strings.TrimRight(b.String(), "\n")
}

// Schema is taskSchema (schemas_gen.go, generated from taskArgs; see
// schema_test.go) with the agent names as the agent enum, in the order of
// t.agents, when they all fit the index (past it, agent is any name); it
// is built once per tool.
func (t *taskTool) Schema() json.RawMessage {
	t.schemaOnce.Do(func() {
		var names []string
		if _, all := t.index(); all {
			for _, r := range t.agents {
				names = append(names, r.Name)
			}
		}
		t.schema = withAgents(names)
	})
	return t.schema
}

// agentsPlaceholder is the agent enum's one value in taskSchema, which
// withAgents replaces with the names.
const agentsPlaceholder = "@agents@"

// agentsEnum is how the placeholder enum is encoded in taskSchema.
const agentsEnum = `,"enum":["` + agentsPlaceholder + `"]`

// withAgents is taskSchema with names as the agent enum. The bytes are
// those the generator writes for an enum of names: the same JSON encoding
// of the strings, and no enum at all when there are none.
func withAgents(names []string) json.RawMessage {
	enum := ""
	if len(names) > 0 {
		// json.Marshal's bytes for the list, without its reflection.
		var b strings.Builder
		b.WriteString(`,"enum":[`)
		for i, n := range names {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(providers.QuoteJSON(n))
		}
		b.WriteByte(']')
		enum = b.String()
	}
	return json.RawMessage(strings.Replace(taskSchema, agentsEnum, enum, 1))
}

// ReadOnly is true although a subagent may write: the session loop only
// runs read-only calls concurrently, and task calls must run concurrently.
// That is safe because the task call itself changes nothing; every write a
// subagent makes is its own tool call and passes the shared gate on its
// own, and the gate still sees this call (as task with args.agent) first.
func (t *taskTool) ReadOnly() bool { return true }

type taskArgs struct {
	Agent       string `json:"agent,omitempty"`
	Description string `json:"description,omitempty" jsonschema:"A few words for the user on what it does"`
	Prompt      string `json:"prompt,omitempty"`
	List        string `json:"list,omitempty"`
}

// Access names the subagent the call starts (general when none is named);
// a list call starts nothing.
func (t *taskTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a taskArgs
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return tools.Access{}, err
	}
	if strings.TrimSpace(a.List) != "" && strings.TrimSpace(a.Prompt) == "" {
		return tools.Access{Kind: tools.KindRead, Detail: "list agents: " + text.Clip(a.List, 80)}, nil
	}
	agent := strings.TrimSpace(a.Agent)
	if agent == "" {
		agent = "general"
	}
	return tools.Access{Kind: tools.KindDelegate, Agent: agent, Detail: a.Description}, nil
}

func (t *taskTool) Execute(ctx context.Context, _ *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a taskArgs
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return tools.Result{}, err
	}
	a.Agent = strings.TrimSpace(a.Agent)
	if q := strings.TrimSpace(a.List); q != "" && strings.TrimSpace(a.Prompt) == "" {
		return t.list(q), nil
	}
	r, ok := t.c.subagent(a.Agent)
	if !ok {
		if len(t.agents) > 40 {
			return tools.Result{}, fmt.Errorf("unknown agent %q; find agents with list (words from their names or descriptions)", a.Agent)
		}
		names := make([]string, len(t.agents))
		for i, r := range t.agents {
			names[i] = r.Name
		}
		return tools.Result{}, fmt.Errorf("unknown agent %q; available agents: %s", a.Agent, strings.Join(names, ", "))
	}
	if strings.TrimSpace(a.Prompt) == "" {
		return tools.Result{}, errors.New("prompt is empty; give the subagent its complete task")
	}
	res, err := t.c.runChild(ctx, t.fam, childSpec{
		role: r, parent: t.parent, depth: t.depth + 1, parentModel: t.model.get(),
		modelRef: t.c.subagentModel(r), prompt: a.Prompt, title: text.OneLine(a.Description),
	})
	tr := taskResult(r.Name, res, err)
	b, _ := json.MarshalIndent(tr, "", "  ")
	return tools.Result{Content: string(b), IsError: tr.Status == TaskError,
		Summary: fmt.Sprintf("%s: %s (%s)", r.Name, text.OneLine(a.Description), tr.Status)}, nil
}

// list is the agents matching every word of q in their name or
// description ("*": all), one line each with the whole description
// shortened to 300 bytes.
func (t *taskTool) list(q string) tools.Result {
	words := strings.Fields(strings.ToLower(q))
	var b strings.Builder
	n := 0
	for _, r := range t.agents {
		hay := strings.ToLower(r.Name + " " + r.Description)
		ok := true
		for _, w := range words {
			if w != "*" && !strings.Contains(hay, w) {
				ok = false
				break
			}
		}
		if ok {
			n++
			fmt.Fprintf(&b, "- %s: %s\n", r.Name, text.Clip(text.OneLine(r.Description), 300))
		}
	}
	if n == 0 {
		return tools.Result{Content: fmt.Sprintf("No agent matches %q; %d agents are installed (list \"*\" shows all).", q, len(t.agents)),
			Summary: "no agents match"}
	}
	return tools.Result{Content: fmt.Sprintf("%d agent(s) match %q; start one with agent set to its name:\n%s", n, q, b.String()),
		Summary: fmt.Sprintf("%d agent(s) match", n)}
}

func taskResult(agent string, res Result, err error) TaskResult {
	tr := TaskResult{Agent: agent, SessionID: res.SessionID, Summary: res.Text, Files: res.Files, Usage: res.Total}
	switch {
	case err != nil:
		tr.Status, tr.Error = TaskError, err.Error()
	case res.Stop == agents.StopMaxSteps:
		tr.Status = TaskMaxSteps
	default:
		tr.Status = TaskOK
	}
	return tr
}

// subagentModel picks a subagent's model reference: the per-agent setting,
// then the role's own model, then the subagent default; "" inherits. The
// per-agent setting wins over the role file because it is the narrower,
// deliberate override.
func (c *Coordinator) subagentModel(r roles.Role) string {
	if m := c.rt.Settings.SubagentModels[r.Name]; m != "" {
		return m
	}
	if r.Model != "" {
		return r.Model
	}
	return c.rt.Settings.SubagentModel
}

// childSpec describes a subagent to run.
type childSpec struct {
	role        roles.Role
	parent      string
	depth       int
	parentModel string
	// modelRef is the child's own model; "" inherits parentModel.
	modelRef string
	// system overrides the role's prompt (skills).
	system string
	prompt string
	// title is the task call's description, shown for the worker.
	title string
}

// lease is a subagent's hold on one of the coordinator's slots. A child
// that waits for its own children lends its slot out for the wait;
// otherwise children holding every slot while waiting for a slot for their
// children would deadlock.
type lease struct {
	slots  *semaphore.Weighted
	mu     sync.Mutex
	held   bool
	nested int
}

// suspend lends the slot while a nested subagent runs.
func (l *lease) suspend() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nested == 0 && l.held {
		l.slots.Release(1)
		l.held = false
	}
	l.nested++
}

// resume takes the slot back once no nested subagent is running. When ctx
// is done the slot stays lent and the child winds down without it.
func (l *lease) resume(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nested--
	if l.nested == 0 && !l.held {
		if err := l.slots.Acquire(ctx, 1); err == nil {
			l.held = true
		}
	}
}

func (l *lease) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		l.slots.Release(1)
		l.held = false
	}
}

// runChild runs one subagent of parent (nil: started by a person, not a
// session) to completion within the parallel bound.
func (c *Coordinator) runChild(ctx context.Context, parent *family, spec childSpec) (Result, error) {
	if spec.depth > MaxDepth {
		return Result{}, fmt.Errorf("subagents cannot start subagents deeper than %d levels", MaxDepth)
	}
	if parent != nil && parent.lease != nil {
		parent.lease.suspend()
		defer parent.lease.resume(ctx)
	}
	if err := c.slots.Acquire(ctx, 1); err != nil {
		return Result{}, fmt.Errorf("wait for a subagent slot: %w", err)
	}
	l := &lease{slots: c.slots, held: true}
	defer l.release()

	modelRef := spec.modelRef
	if modelRef == "" {
		modelRef = spec.parentModel
	} else if spec.modelRef == spec.role.Model && spec.role.Model != "" {
		// Agent files written for other tools name models Reasonix may
		// not know ("sonnet"); inherit rather than fail the task.
		if _, _, err := c.rt.Resolve(modelRef); err != nil {
			c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: spec.parent,
				Text: fmt.Sprintf("agent %s: model %q does not resolve (%v); using the caller's model", spec.role.Name, modelRef, err)})
			modelRef = spec.parentModel
		}
	}
	id := newSessionID(spec.role.Name)
	fam := &family{lease: l}
	if parent != nil {
		fam.turn, fam.ws = parent.turn, parent.ws
	}
	reg := c.toolsFor(spec.role, spec.depth, id, modelRef, fam)
	system := spec.system
	if system == "" {
		system = spec.role.System
	}
	open := sessionSpec{
		id: id, role: spec.role.Name, parent: spec.parent, modelRef: modelRef, title: spec.title,
		system: system, tools: reg,
		maxSteps: spec.role.MaxSteps, planMode: spec.role.PlanMode, fam: fam, perms: spec.role.Permissions,
	}
	if ws := fam.ws; ws != nil {
		// A plan worker's subagent works in the worker's worktree, under
		// the rules, sandbox and guard it has there.
		open.root, open.env, open.guard = ws.root, ws.env.Fork(), ws.guard
	}
	w, err := c.open(open)
	if err != nil {
		return Result{}, fmt.Errorf("start subagent %s: %w", spec.role.Name, err)
	}
	defer w.close()
	res, err := c.run(ctx, w, spec.prompt)
	parent.addChild(res.Total)
	if err != nil {
		return res, fmt.Errorf("subagent %s (%s): %w", spec.role.Name, id, err)
	}
	return res, nil
}
