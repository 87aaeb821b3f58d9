// Package orchestrator is the coordinator: it turns a user goal into
// planner, executor and subagent sessions, runs them as goroutine workers
// under one shared permission gate, passes typed plans and results between
// them, and publishes everything as one event stream.
package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/commands"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/checkpoint"
	"github.com/reasonix/reasonix/internal/hooks"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/skills"
	"github.com/reasonix/reasonix/tools"
)

// Resolver turns a model reference ("" = the default) into a provider and
// a model name.
type Resolver func(ref string) (providers.Provider, string, error)

// Settings are the [agent] knobs the coordinator obeys. Zero values mean
// the documented defaults.
type Settings struct {
	MaxSteps int
	// PlannerModel, when it resolves to a different model than the
	// executor's, makes every Run plan first.
	PlannerModel    string
	PlannerMaxSteps int // default 12
	SubagentModel   string
	SubagentModels  map[string]string
	MaxParallel     int // default 4, clamped to 1..10
	GoalMaxTurns    int // default 20
	Temperature     *float64
	// CompactRatio is the share of a model's context window at which its
	// sessions compact their history (0: agents.DefaultCompactRatio).
	CompactRatio float64
	// Validation is [validation]: when and what to run after a turn that
	// changed files (validate.go).
	Validation ValidationSettings
	// Budget is the most the coordinator's sessions may cost together,
	// in the models' price currency; 0 is no limit.
	Budget float64
	// PlanIsolation is how parallel plan workers are kept apart:
	// worktree (the default; files outside a git repository), files or
	// none. See [IsolationWorktree].
	PlanIsolation string
	// NoReplan turns off the one re-plan a failed step may trigger.
	NoReplan bool
}

// Defaults and limits of the coordinator.
const (
	DefaultMaxParallel  = 4
	MaxMaxParallel      = 10
	DefaultGoalMaxTurns = 20
	// MaxDepth is the deepest a subagent may sit: the executor is depth 0,
	// its children 1, theirs 2, and a depth-2 child is not offered task.
	MaxDepth = 2
	// indexBytes bounds what the agent index (in the task tool) and the
	// skill index (in the system prompt) add to a prefix together, however
	// many agents and skills are installed, so the prefix stays under 16 KB
	// (docs/SPEC.md, "Figures"); agents and skills past it are found with
	// the task tool's list and the skill tool's list.
	indexBytes = 1536
)

// indexSplit divides indexBytes between the agent index and the skill
// index from what each would need to list everything: each gets half,
// and what one does not need goes to the other.
func indexSplit(agentNeed, skillNeed int) (agents, skills int) {
	half := indexBytes / 2
	return indexBytes - min(skillNeed, half), indexBytes - min(agentNeed, half)
}

// PlanDecision is a person's answer to a proposed plan.
type PlanDecision = events.PlanDecision

// Plan decisions.
const (
	PlanApprove = events.PlanApprove
	PlanEdit    = events.PlanEdit
	PlanReject  = events.PlanReject
)

// PlanApprover asks a person about a plan before it runs. It may block
// until they answer and must honour ctx.
type PlanApprover interface {
	Approve(ctx context.Context, p Plan) (Plan, PlanDecision, error)
}

// Runtime is everything a run shares: models, tools, the gate, the event
// sink and where state is saved. cmd assembles it once per process.
type Runtime struct {
	Workspace string
	// StateDir is the project state directory (.reasonix); "" disables
	// transcripts, saved plans and goals.
	StateDir string
	Resolve  Resolver
	// Tools holds every built-in tool a session may be offered; roles
	// filter it.
	Tools *tools.Registry
	// Extensions add MCP servers' tools (taken when a session opens),
	// prompt commands and resources; nil has none.
	Extensions Extensions
	// Env is the template environment; each session gets a Fork.
	Env *tools.Env
	// Guard, when set, watches every session's writing calls and undoes
	// unapproved changes to control files (permission.ControlGuard).
	Guard agents.ChangeGuard
	// Gate is the shared permission gate. When it is a [RoleGate], each
	// session gets the view of its role (plan mode, an agent file's
	// permission override), sharing its prompts and grants.
	// view a role uses (plan mode, overrides) sharing its prompt queue.
	Gate tools.Authorizer
	Sink events.Sink
	// System, when non-empty, replaces the executor role's system prompt.
	System string
	// Rules returns the rules and environment text every session's system
	// prompt carries after its role's prompt (internal/rules). It must
	// return the same text on every call; nil adds nothing.
	Rules func() string
	// NestedRules, when set, gives a session whose files live under root
	// its finder of the rules files of folders below the working
	// directory (rules.Nested): what a file tool reaches there joins
	// that call's result.
	NestedRules func(root string) agents.NestedRules
	Settings    Settings
	// Roles are the loaded role profiles; nil uses the built-ins.
	Roles *roles.Set
	// Commands are the custom slash commands (nil: none) and Prompts the
	// prompt commands another component offers, such as MCP servers
	// (nil: none); Expand runs both.
	Commands *commands.Catalog
	Prompts  commands.Prompts
	// Skills is the discovered skill catalog; nil offers no skill tool.
	Skills *skills.Catalog
	// SkillAllow hides and refuses skills a permission rule denies; nil
	// allows all.
	SkillAllow func(name string) bool
	// PlanApprover is asked before a fresh plan runs; nil approves
	// automatically (headless runs).
	PlanApprover PlanApprover
	// Checkpoints opens the workspace's checkpoint store on first use;
	// nil takes no checkpoints (and rewind then restores no files).
	Checkpoints func() (*checkpoint.Store, error)
	// OnPlanApproved is called when a person approves (or edits) a plan,
	// just before the executor starts; the gate opens its write window
	// there. It is not called for automatic approval.
	OnPlanApproved func(Plan)
	// Hooks runs the user's hook commands (internal/hooks); nil runs none.
	Hooks *hooks.Runner
	// Home is the Reasonix home; plan workers' git worktrees live under
	// it. "" puts them under the state directory.
	Home string
	// WorkspaceFor, when set, builds the tool environment and the
	// control-file guard of a plan worker whose workspace is root (its
	// worktree): path confinement and the bash sandbox rooted there.
	// nil forks Env with Root set to root and a lexical path check.
	WorkspaceFor func(root string) (*tools.Env, agents.ChangeGuard, error)
}

// Result is what a session hands back to its caller.
type Result struct {
	SessionID string
	Role      string
	Text      string
	Stop      string
	Steps     int
	// Usage is this session's own usage; Total adds its planner and every
	// subagent it started, directly or not.
	Usage providers.Usage
	Total providers.Usage
	Calls []agents.CallRecord
	// Files are the paths the session's successful writing calls named.
	Files      []string
	Transcript string
	// PlanID and Plan are set when the run executed a plan.
	PlanID string
	Plan   *Plan
	// StepResults are a plan run's steps with their outcomes.
	StepResults []StepResult
}

// Coordinator runs sessions for one process. It is safe for concurrent
// use; its subagent slots are shared by every run.
type Coordinator struct {
	rt Runtime
	// seals keeps the seals of the session files (nil without a state
	// directory or a home): see store.Seals.
	seals       *store.Seals
	maxParallel int
	slots       *semaphore.Weighted
	budget      *agents.Budget // nil without a limit
	// shellCalls numbers the shell commands a person runs (! lines), for
	// their event ids.
	shellCalls atomic.Int64
	// indexBudgets returns the bytes the agent index and the skill index
	// may take (see indexSplit); computed once.
	indexBudgets func() (agents, skills int)
	// closing owns the session files closed with their last sync still
	// running (sessionLog.close); Wait waits for them.
	closing closings
}

// Wait waits for the session files of closed sessions to reach the disk
// and be closed: closing a session leaves its last sync running, so that
// it overlaps what the program does next. A program calls it before it
// exits; a coordinator that ran no session has nothing to wait for.
func (c *Coordinator) Wait() { c.closing.wait() }

// New returns a coordinator over rt.
func New(rt Runtime) *Coordinator {
	if rt.Sink == nil {
		rt.Sink = events.Discard
	}
	if rt.Tools == nil {
		rt.Tools = tools.NewRegistry()
	}
	if rt.Env == nil {
		rt.Env = tools.NewEnv(rt.Workspace)
	}
	n := rt.Settings.MaxParallel
	if n <= 0 {
		n = DefaultMaxParallel
	}
	n = min(max(n, 1), MaxMaxParallel)
	c := &Coordinator{rt: rt, maxParallel: n, slots: semaphore.NewWeighted(int64(n))}
	if rt.StateDir != "" {
		c.seals = store.NewSeals(rt.Home, filepath.Join(rt.StateDir, "sessions"))
	}
	// The split depends only on the installed agents and skills, fixed for
	// the coordinator's life, so every prefix built from it is stable.
	c.indexBudgets = sync.OnceValues(func() (int, int) {
		return indexSplit(agentIndexNeed(c.subagents()), len(c.rt.Skills.Index(0, c.rt.SkillAllow)))
	})
	if rt.Settings.Budget > 0 {
		c.budget = &agents.Budget{Limit: rt.Settings.Budget}
	}
	return c
}

// MaxParallel reports the effective bound on concurrently running subagents.
func (c *Coordinator) MaxParallel() int { return c.maxParallel }

// role returns the named role from the loaded set (nil: the built-ins).
func (c *Coordinator) role(name string) (roles.Role, bool) { return c.rt.Roles.Get(name) }

// subagents lists the roles the task tool may start.
func (c *Coordinator) subagents() []roles.Role { return c.rt.Roles.Subagents() }

func (c *Coordinator) subagent(name string) (roles.Role, bool) {
	for _, r := range c.subagents() {
		if r.Name == name {
			return r, true
		}
	}
	return roles.Role{}, false
}

func (c *Coordinator) executorRole() roles.Role {
	r, ok := c.role(roles.Executor)
	if !ok {
		r = roles.Role{Name: roles.Executor}
	}
	if c.rt.System != "" {
		r.System = c.rt.System
	}
	return r
}

// sessionSpec describes a session to open. Every session, whatever its
// role, is opened through Coordinator.open from one of these.
type sessionSpec struct {
	id, role, parent string
	// title is what a subagent was started to do (its task description).
	title string
	// modelRef is the model reference; "" is the configured default.
	modelRef string
	// system is the role's prompt; open appends the skill index when
	// tools offers the skill tool.
	system   string
	tools    *tools.Registry
	maxSteps int
	planMode bool
	env      *tools.Env
	// fam is what the session's task and skill tools report to; nil
	// gives the session a fresh one.
	fam *family
	// perms is the role's permission override (agent files).
	perms roles.Permissions
	// resume, when set, reopens a saved session (same id and file) with
	// its history instead of creating one.
	resume *resumeState
	// step is the plan step a plan worker works on; its events and
	// approval requests carry it.
	step string
	// root, when set, is the session's workspace (a plan worker's
	// worktree): its gate view reads path rules against it.
	root string
	// guard replaces the runtime's control-file guard (a worktree's).
	guard agents.ChangeGuard
	// refresh, when set, gives the session's tools after a compaction
	// (agents.Config.RefreshTools).
	refresh func(*tools.Registry) *tools.Registry
}

// RoleGate is a gate that gives each role its own view: the permission
// gate implements it, so one place builds every role's gate.
type RoleGate interface {
	tools.Authorizer
	RoleView(role string, planMode bool, mode string, allow, ask, deny []string) (tools.Authorizer, error)
}

// worker is an open session with what the coordinator needs around it.
type worker struct {
	*agents.Session
	modelRef string
	path     string
	close    func()
	fam      *family
	// modelKey is the resolved "provider/model", saved so a resumed
	// session keeps its model; effort the reasoning effort a person
	// chose (/effort). Both change only between turns, under mu.
	modelKey string
	effort   string

	// log writes the session file; nil without a state directory.
	log *sessionLog
	// c is the coordinator that opened the worker.
	c *Coordinator
	// root is the session's workspace when it is not the runtime's (a
	// plan worker's worktree, and its subagents'): hooks are told it as
	// their cwd, so file_path names the file the tool touched.
	root string

	// sink is where the session publishes (stamped with its step).
	sink events.Sink

	mu   sync.Mutex
	goal *events.GoalState
	// started is set once the session's SessionStart hooks ran.
	started bool
	// notes wait for the next turn (see Conversation.Note).
	notes []string
}

func (w *worker) addNote(s string) {
	w.mu.Lock()
	w.notes = append(w.notes, s)
	w.mu.Unlock()
}

// takeNotes returns the waiting notes and forgets them.
func (w *worker) takeNotes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.notes
	w.notes = nil
	return n
}

func (w *worker) notesSnapshot() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.notes...)
}

// stepSink stamps a plan worker's events with its step id.
type stepSink struct {
	s    events.Sink
	step string
}

func (s stepSink) Publish(e events.Event) {
	if e.Step == "" {
		e.Step = s.step
	}
	s.s.Publish(e)
}

func newSessionID(role string) string {
	p := "s"
	if role != "" {
		p = role[:1]
	}
	return store.NewID(p + "-")
}

// ToolWithholder is a gate that refuses every call of some tools
// (permission.Gate: a deny rule without a specifier); a session is not
// offered them, as Claude Code leaves them out.
type ToolWithholder interface {
	Withholds(tool string) bool
}

// withhold leaves out of reg, and of what refresh returns after a
// compaction, the tools wh refuses every call of.
func withhold(wh ToolWithholder, reg *tools.Registry, refresh func(*tools.Registry) *tools.Registry) (*tools.Registry, func(*tools.Registry) *tools.Registry) {
	keep := func(t tools.Tool) bool { return !wh.Withholds(t.Name()) }
	if reg != nil {
		reg = reg.Filter(keep)
	}
	if refresh != nil {
		inner := refresh
		refresh = func(cur *tools.Registry) *tools.Registry { return inner(cur).Filter(keep) }
	}
	return reg, refresh
}

// open builds a session, its transcript and its gate view.
func (c *Coordinator) open(spec sessionSpec) (*worker, error) {
	if c.rt.Resolve == nil {
		return nil, errors.New("no model resolver configured")
	}
	prov, model, err := c.rt.Resolve(spec.modelRef)
	if err != nil {
		return nil, fmt.Errorf("resolve model %q for %s: %w", spec.modelRef, spec.role, err)
	}
	id := spec.id
	if spec.resume != nil {
		id = spec.resume.loaded.Header.ID
	}
	if id == "" {
		id = newSessionID(spec.role)
	}
	w := &worker{modelRef: spec.modelRef, close: func() {}, fam: spec.fam, modelKey: prov.Name() + "/" + model, c: c, root: spec.root}
	if w.fam == nil {
		w.fam = &family{}
	}
	var rec agents.Recorder
	var log *sessionLog
	switch {
	case spec.resume != nil:
		// The same file goes on; its history is restored below.
		t, err := store.Open(spec.resume.loaded)
		if err != nil {
			return nil, err
		}
		l := spec.resume.loaded
		log = &sessionLog{t: t, w: w, title: l.Meta.Title, turns: store.Turns(l.Messages), behind: &c.closing}
		if log.title == "" {
			log.title = l.Header.Title
		}
		rec, w.path, w.log = log, t.Path(), log
		w.close = log.close
	case c.rt.StateDir != "":
		dir := filepath.Join(c.rt.StateDir, "sessions")
		cwd := c.rt.Workspace
		if spec.root != "" {
			cwd = spec.root
		}
		log = &sessionLog{w: w, dir: dir, seals: c.seals, behind: &c.closing,
			hdr: store.Header{ID: id, Role: spec.role, Parent: spec.parent, Model: model, Cwd: cwd, Step: spec.step}}
		if spec.step != "" && spec.title != "" {
			// A worker's first prompt is its brief, the same opening for
			// every step; its step names it better.
			log.title, log.hdr.Title = spec.title, spec.title
		}
		rec, w.path, w.log = log, store.PathFor(dir, id), log
		w.close = log.close
	}
	gate := c.rt.Gate
	if rg, ok := gate.(RoleGate); ok {
		p := spec.perms
		view, err := rg.RoleView(spec.role, spec.planMode, p.Mode, p.Allow, p.Ask, p.Deny)
		if err != nil {
			c.rt.Sink.Publish(events.Event{Type: events.Notice, Role: spec.role,
				Text: fmt.Sprintf("agent %s: permission override ignored, writes refused: %v", spec.role, err)})
		}
		gate = view
	}
	if ws, ok := gate.(interface {
		InWorkspace(root string) tools.Authorizer
	}); ok && spec.root != "" {
		gate = ws.InWorkspace(spec.root)
	}
	if wh, ok := gate.(ToolWithholder); ok {
		spec.tools, spec.refresh = withhold(wh, spec.tools, spec.refresh)
	}
	sink := c.rt.Sink
	if spec.step != "" {
		sink = stepSink{s: sink, step: spec.step}
	}
	guard := c.rt.Guard
	if spec.guard != nil {
		guard = spec.guard
	}
	env := spec.env
	if env == nil {
		env = c.rt.Env.Fork()
	}
	env.Session = id
	// Tools report what they do on their own (background jobs) as this
	// session, as the session loop does.
	env.Publish = func(e events.Event) {
		e.Session, e.Role, e.Parent = id, spec.role, spec.parent
		sink.Publish(e)
	}
	// The session's background jobs (and whatever else its tools keep that
	// needs closing) end with it, before its transcript closes.
	closeLog := w.close
	w.close = func() {
		_ = env.State.Close()
		closeLog()
	}
	maxSteps := spec.maxSteps
	if maxSteps <= 0 {
		maxSteps = c.rt.Settings.MaxSteps
	}
	var beforeChange func(context.Context) error
	if w.fam.turn != nil {
		beforeChange = w.fam.turn.before
	}
	toolHooks, beforeCompact := c.sessionHooks(id, spec.root)
	var nested agents.NestedRules
	if c.rt.NestedRules != nil {
		root := c.rt.Workspace
		if spec.root != "" {
			root = spec.root
		}
		nested = c.rt.NestedRules(root)
	}
	s, err := agents.New(agents.Config{
		NestedRules: nested,
		Hooks:       toolHooks, BeforeCompact: beforeCompact,
		ID: id, Role: spec.role, Parent: spec.parent, Step: spec.step,
		Provider: prov, Model: model, System: c.systemPrompt(spec.system, spec.tools),
		Tools: spec.tools, Env: env, Gate: gate, MaxSteps: maxSteps,
		Temperature: c.rt.Settings.Temperature, Sink: sink, Transcript: rec,
		BeforeChange: beforeChange, Guard: guard,
		ContextWindow: providers.WindowOf(prov, model), CompactRatio: c.rt.Settings.CompactRatio,
		OnCompact: w.onCompact, Restate: w.restate, RefreshTools: spec.refresh,
		Price: priceOf(prov, model), Budget: c.budget, FlattenSchemas: providers.FlattensSchemas(prov),
	})
	if err != nil {
		w.close()
		return nil, fmt.Errorf("open %s session: %w", spec.role, err)
	}
	w.Session = s
	if r := spec.resume; r != nil {
		if err := s.Restore(r.loaded.Messages); err != nil {
			w.close()
			return nil, fmt.Errorf("resume %s: %w", id, err)
		}
		env.SetTodos(r.loaded.Meta.Todos)
		w.setGoal(r.loaded.Meta.Goal)
		w.notes = append([]string(nil), r.loaded.Meta.Notes...)
		s.SetEffort(r.loaded.Meta.Effort)
		w.effort = r.loaded.Meta.Effort
	}
	sink.Publish(events.Event{Type: events.SessionStart, Session: id, Role: spec.role, Parent: spec.parent, Text: model, Title: spec.title})
	w.sink = sink
	return w, nil
}

// finish publishes the session's Done event and builds its Result.
func (c *Coordinator) finish(w *worker, out agents.Outcome, err error) Result {
	res := Result{
		SessionID: w.ID(), Role: w.Role(), Text: out.Text, Stop: out.Stop, Steps: out.Steps,
		Usage: out.Usage, Total: out.Usage, Calls: out.Calls, Transcript: w.path,
		Files: c.touchedFiles(w, out.Calls),
	}
	ev := events.Event{Type: events.Done, Session: w.ID(), Role: w.Role(), Parent: w.Parent(), Usage: &res.Usage, Text: out.Stop}
	if err != nil {
		// The event says how the session ended, as the json result does:
		// an interrupt is "interrupted", not a Go context message.
		ev.Error = err.Error()
		if ev.Text == "" {
			ev.Text = "error"
		}
		if errors.Is(err, context.Canceled) {
			ev.Text, ev.Error = "interrupted", "interrupted"
		}
	}
	sink := w.sink
	if sink == nil {
		sink = c.rt.Sink
	}
	sink.Publish(ev)
	return res
}

// personTurnStarts tells the control-file guard a person's turn starts:
// it takes its baseline here, not between the calls of the turn, so what
// the person changed since the last turn is theirs and stays.
func (c *Coordinator) personTurnStarts() {
	if g, ok := c.rt.Guard.(interface{ TurnStart() }); ok {
		g.TurnStart()
	}
}

// run sends one user turn to w and builds its Result, whose Total adds
// the usage of every subagent the turn started.
func (c *Coordinator) run(ctx context.Context, w *worker, text string) (Result, error) {
	if w.Parent() == "" {
		c.personTurnStarts()
		var err error
		if text, err = c.promptHooks(ctx, w, text); err != nil {
			return Result{SessionID: w.ID(), Role: w.Role(), Transcript: w.path}, err
		}
	}
	acc := w.fam.beginRun()
	out, err := w.Send(ctx, text)
	if err == nil && w.Parent() == "" && w.Role() == roles.Executor && out.Stop == agents.StopDone && c.validationOn(false) {
		_, err = c.validateTurn(ctx, w, &out)
	}
	out, err = c.stopHooks(ctx, w, out, err)
	res := c.finish(w, out, err)
	res.Total.Add(acc.get())
	return res, err
}

// withSkillIndex appends the skill index to a system prompt when the
// session is offered the skill tool. The index depends only on the
// catalog, so the prefix stays byte-stable.
func (c *Coordinator) withSkillIndex(system string, reg *tools.Registry) string {
	if c.rt.Skills == nil {
		return system
	}
	if _, ok := reg.Get(skills.ToolName); !ok {
		return system
	}
	_, budget := c.indexBudgets()
	idx := c.rt.Skills.Index(budget, c.rt.SkillAllow)
	if idx == "" {
		return system
	}
	sep := "\n\n"
	if system == "" {
		sep = ""
	}
	return system + sep + "# Skills\nLoad one with the skill tool when its description fits the task:\n" + idx
}

// toolPool is what every session's tools are filtered from: the runtime's
// tools plus, when there are skills, the skill tool, which runs
// runAs=subagent skills through run (nil loads every skill inline).
func (c *Coordinator) toolPool(run subagentRunner) *tools.Registry {
	pool := tools.NewRegistry()
	for _, n := range c.rt.Tools.Names() {
		t, _ := c.rt.Tools.Get(n)
		pool.Add(t)
	}
	for _, t := range c.extensionTools() {
		if _, builtin := pool.Get(t.Name()); !builtin {
			pool.Add(t)
		}
	}
	if c.rt.Skills != nil && len(c.rt.Skills.List()) > 0 {
		pool.Add(skills.NewTool(c.rt.Skills, c.rt.SkillAllow, run))
	}
	return pool
}

// toolsFor builds the tool set of a session of role r at depth: the tool
// pool with the skill and task tools the depth allows, then the role's
// filter. Filtering happens here, before any request is built, so a
// session never sees the schema of a tool it may not use.
func (c *Coordinator) toolsFor(r roles.Role, depth int, id, modelRef string, fam *family) *tools.Registry {
	var run subagentRunner
	pin := &modelPin{ref: modelRef}
	if depth < MaxDepth {
		run = c.skillRunner(id, depth, pin, fam)
	}
	pool := c.toolPool(run)
	if depth < MaxDepth && !r.ReadOnlyOnly {
		if subs := c.subagents(); len(subs) > 0 {
			budget, _ := c.indexBudgets()
			pool.Add(&taskTool{c: c, parent: id, fam: fam, depth: depth, model: pin, agents: subs, budget: budget})
		}
	}
	return r.FilterTools(pool)
}

// resolvesSame reports whether two model references name the same model
// on the same provider.
func (c *Coordinator) resolvesSame(a, b string) (bool, error) {
	pa, ma, err := c.rt.Resolve(a)
	if err != nil {
		return false, fmt.Errorf("resolve model %q: %w", a, err)
	}
	pb, mb, err := c.rt.Resolve(b)
	if err != nil {
		return false, fmt.Errorf("resolve model %q: %w", b, err)
	}
	return pa.Name() == pb.Name() && ma == mb, nil
}

// AutoPlan reports whether Run plans first: agent.planner_model is set and
// names a different model than the executor's.
func (c *Coordinator) AutoPlan() (bool, error) {
	if strings.TrimSpace(c.rt.Settings.PlannerModel) == "" {
		return false, nil
	}
	same, err := c.resolvesSame(c.rt.Settings.PlannerModel, c.executorRole().Model)
	return !same && err == nil, err
}

// Run executes prompt: in one executor session with every tool, or as
// plan-then-execute when AutoPlan says so.
func (c *Coordinator) Run(ctx context.Context, prompt string) (Result, error) {
	auto, err := c.AutoPlan()
	if err != nil {
		return Result{}, err
	}
	if auto {
		return c.PlanThenExecute(ctx, prompt)
	}
	return c.runExecutor(ctx, prompt, nil)
}

// RunOn is Run with its turn on the model modelRef, which the custom
// command named by command asks for; "" is Run. The session itself is on
// the default model, so `run --continue` goes on there (see
// Conversation.SendOn). A reference no configured provider resolves (a
// command written for another tool's models) is a notice, and the
// default model answers.
func (c *Coordinator) RunOn(ctx context.Context, prompt, modelRef, command string) (Result, error) {
	if modelRef == "" {
		return c.Run(ctx, prompt)
	}
	w, err := c.openExecutor(nil, goalStatusTool{})
	if err != nil {
		return Result{}, fmt.Errorf("start executor: %w", err)
	}
	defer w.close()
	defer c.borrowModel(w, modelRef, command)()
	return c.run(ctx, w, prompt)
}

// runExecutor runs one executor session on a first user turn; seed, when
// set, prepares its environment before the session exists.
func (c *Coordinator) runExecutor(ctx context.Context, first string, seed func(id string, env *tools.Env)) (Result, error) {
	// The tools of a conversation (goal_status included), so a run and a
	// later `run --continue`, the TUI or a goal in the same session send
	// the same cached prefix.
	w, err := c.openExecutor(seed, goalStatusTool{})
	if err != nil {
		return Result{}, fmt.Errorf("start executor: %w", err)
	}
	defer w.close()
	return c.run(ctx, w, first)
}

// openExecutor opens an executor session with the executor role's tools
// plus extra (which bypass the role's filter); seed, when set, prepares
// the session's environment before the session exists.
func (c *Coordinator) openExecutor(seed func(id string, env *tools.Env), extra ...tools.Tool) (*worker, error) {
	return c.openExecutorWith(seed, nil, "", "", extra...)
}

// openExecutorWith is openExecutor resuming a saved session when res is
// set, under the id given when it is not empty (else a new one), on
// modelRef when it is not empty.
func (c *Coordinator) openExecutorWith(seed func(id string, env *tools.Env), res *resumeState, id, modelRef string, extra ...tools.Tool) (*worker, error) {
	r := c.executorRole()
	if modelRef == "" {
		modelRef = r.Model
	}
	if id == "" {
		id = newSessionID(roles.Executor)
	}
	if res != nil {
		id = res.loaded.Header.ID
	}
	env := c.rt.Env.Fork()
	if seed != nil {
		seed(id, env)
	}
	fam := &family{}
	if c.rt.Checkpoints != nil {
		fam.turn = &turnCheckpoint{}
	}
	reg := c.toolsFor(r, 0, id, modelRef, fam)
	for _, t := range extra {
		reg.Add(t)
	}
	return c.open(sessionSpec{id: id, role: roles.Executor, modelRef: modelRef, system: r.System, fam: fam, perms: r.Permissions,
		tools: reg, maxSteps: r.MaxSteps, planMode: r.PlanMode, env: env, resume: res, refresh: c.extensionRefresh(r)})
}

// family is what a session hands its subagents explicitly (no run state
// travels in a context): the coordinator slot its own run holds, which a
// parent lends out while it waits for its children, and the accumulator
// its children add their usage to during the current run.
type family struct {
	// lease is nil for a top-level session, which holds no slot.
	lease *lease
	// turn checkpoints the workspace before the first change of the
	// conversation's current turn; children share their parent's.
	turn *turnCheckpoint
	// ws is the worktree a plan worker works in, which its subagents
	// work in too; nil for the runtime's workspace.
	ws  *familyWorkspace
	mu  sync.Mutex
	acc *usageAcc
}

// familyWorkspace is a plan worker's worktree as its sessions use it: the
// root, the tool environment rooted there (subagents fork it) and its
// control-file guard.
type familyWorkspace struct {
	root  string
	env   *tools.Env
	guard agents.ChangeGuard
}

// beginRun starts a fresh accumulator for one run of the session.
func (f *family) beginRun() *usageAcc {
	a := &usageAcc{}
	f.mu.Lock()
	f.acc = a
	f.mu.Unlock()
	return a
}

// addChild adds a finished child's total to the current run.
func (f *family) addChild(u providers.Usage) {
	if f == nil {
		return
	}
	f.mu.Lock()
	a := f.acc
	f.mu.Unlock()
	if a != nil {
		a.add(u)
	}
}

// usageAcc sums the usage of the subagents a session starts.
type usageAcc struct {
	mu sync.Mutex
	u  providers.Usage
}

func (a *usageAcc) add(u providers.Usage) {
	a.mu.Lock()
	a.u.Add(u)
	a.mu.Unlock()
}

func (a *usageAcc) get() providers.Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.u
}

// touchedFiles lists the paths successful calls described as written
// (tools.Access), relative to the workspace when inside it.
func (c *Coordinator) touchedFiles(w *worker, calls []agents.CallRecord) []string {
	seen := map[string]bool{}
	for _, call := range calls {
		if call.IsError || call.Denied {
			continue
		}
		for _, p := range call.Writes {
			if filepath.IsAbs(p) && c.rt.Workspace != "" {
				if rel, err := filepath.Rel(c.rt.Workspace, p); err == nil && !strings.HasPrefix(rel, "..") {
					p = rel
				}
			}
			seen[filepath.ToSlash(filepath.Clean(p))] = true
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// priceOf is the price of model, nil when unknown.
func priceOf(p providers.Provider, model string) *providers.Price {
	if pr, ok := providers.PriceOf(p, model); ok {
		return &pr
	}
	return nil
}
