package permission

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

// GateOptions configure a Gate.
type GateOptions struct {
	// Policy is the merged configuration (global, then project).
	Policy Policy
	// Approver asks a person; nil means a headless run: calls only the
	// posture asks about are allowed, while calls an explicit ask rule
	// matched and dangerous commands are blocked.
	Approver Approver
	// Workspace is the workspace root; path rules are relative to it.
	Workspace string
	// ProjectConfig is the project reasonix.toml that "always allow"
	// writes to; it is only named in notices, SaveRule does the writing.
	ProjectConfig string
	// LogPath is the JSONL decision log, e.g. <home>/permissions.log;
	// empty disables logging.
	LogPath string
	// Publish receives notices (a failed save, an unwritable log); may be nil.
	Publish func(events.Event)
	// Home is Reasonix's home: its config and agent files are control
	// files whose every write needs a person.
	Home string
	// SaveRule persists an "always allow" rule: list is "allow", rule is
	// e.g. Bash(go test:*). Nil makes "always" behave like "session".
	SaveRule func(list, rule string) error
	// Now is the clock the write window reads; nil means time.Now. Tests
	// inject one so expiry needs no sleeping.
	Now func() time.Time
}

// Gate is the one permission gate of a run. It implements tools.Authorizer
// and is safe for concurrent use by every session: prompts are serialised
// and session grants are shared. Views made with ForRole share that state.
type Gate struct {
	sh     *gateShared
	policy Policy
	role   string
	// ownMode is set on a view whose agent file chose its own posture:
	// SetPosture leaves it alone.
	ownMode bool
}

type gateShared struct {
	approver      Approver
	prompt        chan struct{} // one approval prompt at a time
	publish       func(events.Event)
	saveRule      func(list, rule string) error
	projectConfig string
	log           *decisionLog
	logFailed     sync.Once

	mu     sync.RWMutex
	grants []Rule
	seen   map[string]bool
	// turn are allow rules of running turns (PreApprove).
	turn   []turnRules
	turnID int
	// posture, when set, replaces the run's posture in every view (a
	// person switched it from a front end); see SetPosture.
	posture Mode

	clock  func() time.Time
	window writeWindow
}

func (sh *gateShared) now() time.Time {
	if sh.clock != nil {
		return sh.clock()
	}
	return time.Now()
}

// NewGate builds the gate of a run.
func NewGate(opts GateOptions) *Gate {
	p := opts.Policy
	if opts.Workspace != "" {
		ws := opts.Workspace
		if abs, err := filepath.Abs(ws); err == nil {
			ws = abs
		}
		if real, err := realPath(ws); err == nil {
			ws = real
		}
		p.Workspace = ws
	}
	if opts.Home != "" {
		p.Home = opts.Home
	}
	sh := &gateShared{
		approver:      opts.Approver,
		prompt:        make(chan struct{}, 1),
		publish:       opts.Publish,
		saveRule:      opts.SaveRule,
		projectConfig: opts.ProjectConfig,
		seen:          map[string]bool{},
		clock:         opts.Now,
	}
	if opts.LogPath != "" {
		sh.log = &decisionLog{path: opts.LogPath}
	}
	return &Gate{sh: sh, policy: p}
}

// ForRole returns a view of the gate for one role (planner, executor, a
// subagent). planMode refuses every writer; role labels log entries and
// approval requests whose invocation carries none. The view shares
// prompts, grants and the log with g.
func (g *Gate) ForRole(role string, planMode bool) *Gate {
	p := g.policy
	p.Plan = p.Plan || planMode
	v := *g
	v.policy, v.role = p, role
	return &v
}

// RoleView returns the view of g that a role's sessions use: plan mode
// when planMode, and an agent file's override (its mode, when set, and its
// rules) on top. An override that does not parse returns a plan-mode view
// (no writes) with the error, so a broken agent file fails closed.
func (g *Gate) RoleView(role string, planMode bool, mode string, allow, ask, deny []string) (tools.Authorizer, error) {
	view := g.ForRole(role, planMode)
	if mode == "" && len(allow)+len(ask)+len(deny) == 0 {
		return view, nil
	}
	o, err := ParsePolicy(mode, allow, ask, deny, nil)
	if err != nil {
		return g.ForRole(role, true), err
	}
	if mode == "" {
		o.Mode = "" // keep the run's posture; only the rules are added
	}
	return view.WithOverride(o), nil
}

// WithOverride returns a view with an agent's permission override merged on
// top of this view's policy (its mode, if set, wins; its rules are added;
// plan mode only ever turns on). The view shares prompts, grants and the
// log with g.
func (g *Gate) WithOverride(extra Policy) *Gate {
	p := Merge(g.policy, extra)
	p.Workspace = g.policy.Workspace
	if g.policy.Exists != nil {
		p.Exists = g.policy.Exists
	}
	v := *g
	v.policy = p
	v.ownMode = v.ownMode || extra.Mode != ""
	return &v
}

// SetPosture switches the run's posture (ask, auto or yolo) for every view
// of the gate from the next call on, except views whose agent file chose
// its own. Front ends call it when a person switches; it only ever comes
// from a person, never from a tool. Dangerous commands, deny rules and
// the control-file guard are untouched by any posture.
func (g *Gate) SetPosture(m Mode) error {
	switch m {
	case ModeAsk, ModeAuto, ModeYolo:
	default:
		return fmt.Errorf("posture %q: want ask, auto or yolo", m)
	}
	g.sh.mu.Lock()
	g.sh.posture = m
	g.sh.mu.Unlock()
	return nil
}

// Posture is the posture this view decides with.
func (g *Gate) Posture() Mode { return g.current().Mode }

// current is the view's policy with a switched posture applied.
func (g *Gate) current() Policy {
	p := g.policy
	g.sh.mu.RLock()
	m := g.sh.posture
	g.sh.mu.RUnlock()
	if m != "" && !g.ownMode {
		p.Mode = m
	}
	if p.Mode == "" {
		p.Mode = ModeAsk
	}
	return p
}

// Close closes the decision log; the gate must not be used afterwards.
func (g *Gate) Close() error {
	if g.sh.log == nil {
		return nil
	}
	return g.sh.log.close()
}

// Policy returns the policy this view applies.
func (g *Gate) Policy() Policy { return g.policy }

// Withholds reports whether this view's deny rules refuse every call of
// tool (Policy.Withholds), so its sessions are not offered it.
func (g *Gate) Withholds(tool string) bool { return g.policy.Withholds(tool) }

// Headless reports whether no person can be asked.
func (g *Gate) Headless() bool { return g.sh.approver == nil }

// Grants returns the rules granted for this run so far.
func (g *Gate) Grants() []string {
	g.sh.mu.RLock()
	defer g.sh.mu.RUnlock()
	out := make([]string, len(g.sh.grants))
	for i, r := range g.sh.grants {
		out[i] = r.Raw
	}
	return out
}

func (g *Gate) grantsSnapshot() []Rule {
	g.sh.mu.RLock()
	defer g.sh.mu.RUnlock()
	return g.sh.grants
}

func (g *Gate) grant(rules []string) {
	g.sh.mu.Lock()
	defer g.sh.mu.Unlock()
	for _, s := range rules {
		if g.sh.seen[s] {
			continue
		}
		r, err := ParseRule(s)
		if err != nil {
			continue // suggestions are generated well-formed
		}
		g.sh.seen[s] = true
		// Copy on write so snapshots handed out stay immutable.
		g.sh.grants = append(append([]Rule(nil), g.sh.grants...), r)
	}
}

// Who decided, as written to the log.
const (
	byRule     = "rule"
	byUser     = "user"
	byPolicy   = "policy"
	byHeadless = "headless"
)

// Authorize decides whether inv may run, asking a person when the policy
// says ask and one is available. It blocks while a prompt is open and
// honours ctx.
func (g *Gate) Authorize(ctx context.Context, inv tools.Invocation) tools.Verdict {
	if inv.Tool == nil {
		return tools.Verdict{Message: "no tool"}
	}
	name, ro := inv.Tool.Name(), inv.Tool.ReadOnly()
	if inv.Role == "" {
		inv.Role = g.role
	}
	entry := logEntry{Session: inv.Session, Role: inv.Role, Tool: name}
	acc := inv.Access
	if acc.Kind == "" {
		var err error
		if acc, err = tools.Describe(inv.Tool, inv.Args); err != nil {
			return g.finish(entry, false, byPolicy, "", err.Error())
		}
	}
	c := newCall(name, ro, acc)
	ro = c.readOnly

	if g.policy.Plan && !ro {
		return g.finish(entry, false, byPolicy, "", "plan mode: write tools are disabled")
	}
	if err := g.resolvePaths(&c, inv.Env); err != nil {
		entry.Subject = strings.Join(c.rawPaths, ", ")
		return g.finish(entry, false, byPolicy, "", err.Error())
	}
	pol := g.effective()
	out := pol.evaluate(&c, g.grantsSnapshot())
	entry.Subject = strings.Join(out.Subjects, ", ")
	entry.Dangerous = len(out.Dangerous) > 0

	switch out.Decision {
	case Deny:
		by := byPolicy
		if out.Rule != "" {
			by = byRule
		}
		return g.finish(entry, false, by, out.Rule, out.Reason)
	case Allow:
		return g.finish(entry, true, allowedBy(out), out.Rule, "")
	}

	if g.windowCovers(&c, out) {
		return g.finish(entry, true, byPlanWindow, out.Rule, "")
	}
	dangerous := len(out.Dangerous) > 0
	if g.sh.approver == nil {
		if dangerous {
			return g.finish(entry, false, byHeadless, out.Rule, blockedMessage(&c, out))
		}
		// An explicit ask rule is a promise that a person says yes; with
		// no person it is refused. A call only the posture asks about
		// (no rule) keeps running headless.
		if out.List == "Ask" {
			return g.finish(entry, false, byHeadless, out.Rule, askBlockedMessage(&c, out))
		}
		// So is a call the gate cannot judge (a PowerShell line) or one
		// nothing else confines (a fetch from a host no rule names).
		if out.Person != "" {
			return g.finish(entry, false, byHeadless, out.Rule, personBlockedMessage(&c, out))
		}
		return g.finish(entry, true, byHeadless, out.Rule, "")
	}

	select {
	case g.sh.prompt <- struct{}{}:
	case <-ctx.Done():
		return g.finish(entry, false, byPolicy, out.Rule, "approval canceled: "+ctx.Err().Error())
	}
	defer func() { <-g.sh.prompt }()

	if !dangerous {
		// A grant given while this call waited for the prompt applies.
		again := pol.evaluate(&c, g.grantsSnapshot())
		if again.Decision == Allow {
			return g.finish(entry, true, allowedBy(again), again.Rule, "")
		}
		// So does a write window opened meanwhile.
		if g.windowCovers(&c, again) {
			return g.finish(entry, true, byPlanWindow, again.Rule, "")
		}
	}
	req := g.request(ctx, inv, &c, out)
	reply, err := g.sh.approver.Approve(ctx, req)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			// What the person sees and the model reads next turn: the
			// turn was interrupted while the question was open.
			return g.finish(entry, false, byUser, out.Rule, "not approved: interrupted while asking")
		}
		return g.finish(entry, false, byUser, out.Rule, "approval failed: "+err.Error())
	}
	switch reply.Answer {
	case AllowOnce:
	case AllowSession:
		if !dangerous {
			g.grant(out.Suggest)
		}
	case AllowAlways:
		if !dangerous {
			g.grant(out.Suggest)
			g.save(inv, out.Suggest)
		}
	default:
		msg := "denied by the user"
		if reply.Reason != "" {
			msg += ": " + reply.Reason
		}
		return g.finish(entry, false, byUser, out.Rule, msg)
	}
	v := g.finish(entry, true, byUser, out.Rule, "")
	v.Person = true
	if c.family == FamilyEdit {
		v.Writes = append([]string{}, c.absPaths...)
	}
	return v
}

func allowedBy(out Outcome) string {
	switch {
	case out.Rule != "" && out.List == "Allow":
		return byRule
	case out.Reason == "allowed for this session":
		return byUser
	}
	return byPolicy
}

// resolvePaths runs file subjects through the session's path guard, so
// rules match the real file (not a symlink's name) and escapes are refused
// before anyone is asked.
func (g *Gate) resolvePaths(c *call, env *tools.Env) error {
	if env == nil || env.Guard == nil {
		for _, p := range c.rawPaths {
			if !filepath.IsAbs(p) {
				p = filepath.Join(g.policy.workspace(), p)
			}
			c.absPaths = append(c.absPaths, filepath.Clean(p))
		}
		return nil
	}
	resolve := func(raw []string, write bool) ([]string, error) {
		if raw == nil {
			return nil, nil
		}
		real := make([]string, 0, len(raw))
		for _, p := range raw {
			r, err := env.Guard.Resolve(p, write)
			if err != nil {
				return nil, err
			}
			real = append(real, r)
		}
		return real, nil
	}
	var err error
	if c.absPaths, err = resolve(c.rawPaths, c.writes); err != nil {
		return err
	}
	if c.absPaths != nil {
		c.paths = g.policy.relPaths(c.absPaths)
	}
	reads, err := resolve(c.rawReads, false)
	if reads != nil {
		c.readPaths = g.policy.relPaths(reads)
	}
	return err
}

func blockedMessage(c *call, out Outcome) string {
	subject := c.command
	if subject == "" {
		return fmt.Sprintf("blocked: %s needs human approval every time (%s); no one is available to approve in this run. Do not retry it; tell the user what you wanted to do and why.",
			c.tool, strings.Join(out.Dangerous, "; "))
	}
	return fmt.Sprintf("blocked: %q is a dangerous command (%s) and needs human approval; no one is available to approve in this run. Do not retry it; tell the user what you wanted to run and why.",
		subject, strings.Join(out.Dangerous, "; "))
}

func askBlockedMessage(c *call, out Outcome) string {
	subject := c.command
	if subject == "" {
		subject = strings.Join(out.Subjects, ", ")
	}
	return fmt.Sprintf("blocked: rule Ask: %s needs a person and no one can answer in this run; %s %q was not run. Do not retry it; tell the user what you wanted to do and why.",
		out.Rule, c.tool, subject)
}

func personBlockedMessage(c *call, out Outcome) string {
	subject := c.command
	if subject == "" {
		subject = strings.Join(out.Subjects, ", ")
	}
	return fmt.Sprintf("blocked: %s %q needs a person's approval (%s) and no one can answer in this run; it was not run. Do not retry it; tell the user what you wanted to do and why.",
		c.tool, subject, out.Person)
}

func (g *Gate) request(ctx context.Context, inv tools.Invocation, c *call, out Outcome) Request {
	req := Request{
		Session: inv.Session, Role: inv.Role, CallID: inv.CallID, Step: inv.Step, Tool: c.tool,
		Subject:   strings.Join(out.Subjects, ", "),
		Command:   c.command,
		Reason:    inv.Reason,
		Dangerous: len(out.Dangerous) > 0,
	}
	// A dangerous answer covers this one call only, and "always" needs
	// somewhere to save the rule.
	// A standing answer needs a rule to stand on.
	req.Choices = []Answer{AllowOnce}
	if !req.Dangerous && len(out.Suggest) > 0 {
		req.Rules = out.Suggest
		req.Choices = append(req.Choices, AllowSession)
		if g.sh.saveRule != nil {
			req.Choices = append(req.Choices, AllowAlways)
		}
	}
	req.Choices = append(req.Choices, DenyAnswer)
	if pv, ok := inv.Tool.(tools.Previewer); ok {
		if prev, err := pv.Preview(ctx, inv.Env, inv.Args); err == nil {
			req.Preview = prev
		}
	}
	req.Impact = impact(c, out, req.Preview, g.policy.workspace())
	return req
}

func impact(c *call, out Outcome, prev []tools.Preview, ws string) string {
	var s string
	switch c.family {
	case FamilyBash:
		s = "runs a shell command in " + ws
		if c.shell == tools.ShellPowerShell {
			s = "runs a PowerShell command in " + ws + ", which the gate cannot check: read it before you allow it"
		}
	case FamilyEdit:
		if len(prev) > 0 {
			add, rem := 0, 0
			for _, p := range prev {
				add += p.Added
				rem += p.Removed
			}
			s = fmt.Sprintf("changes %d file(s): +%d -%d", len(prev), add, rem)
		} else {
			s = "changes " + strings.Join(out.Subjects, ", ")
		}
	case FamilyTask:
		s = "starts the " + c.name + " subagent"
	case FamilySkill:
		s = "runs the " + c.name + " skill"
	default:
		s = "runs " + c.tool
	}
	if len(out.Dangerous) > 0 {
		s += "; dangerous: " + strings.Join(out.Dangerous, "; ")
	}
	return s
}

func (g *Gate) save(inv tools.Invocation, rules []string) {
	if g.sh.saveRule == nil {
		return
	}
	for _, r := range rules {
		if err := g.sh.saveRule("allow", r); err != nil {
			g.notice(inv, fmt.Sprintf("could not save %s to %s: %v (allowed for this session only)", r, g.sh.projectConfig, err))
		}
	}
}

func (g *Gate) notice(inv tools.Invocation, text string) {
	if g.sh.publish != nil {
		g.sh.publish(events.Event{Type: events.Notice, Session: inv.Session, Role: inv.Role, Text: text})
	}
}

func (g *Gate) finish(e logEntry, allow bool, by, rule, msg string) tools.Verdict {
	e.Decision = "deny"
	if allow {
		e.Decision = "allow"
	}
	e.By, e.Rule = by, rule
	if g.sh.log != nil {
		if err := g.sh.log.append(e); err != nil {
			g.sh.logFailed.Do(func() {
				if g.sh.publish != nil {
					g.sh.publish(events.Event{Type: events.Notice, Session: e.Session, Role: e.Role,
						Text: "permission log: " + err.Error()})
				}
			})
		}
	}
	return tools.Verdict{Allow: allow, Message: msg}
}

// InWorkspace returns a view of g whose workspace is root: a plan worker
// running in its own worktree has its path rules, control files and
// impact lines read against that directory. The view shares prompts,
// grants and the log with g.
func (g *Gate) InWorkspace(root string) tools.Authorizer {
	ws := root
	if abs, err := filepath.Abs(ws); err == nil {
		ws = abs
	}
	if real, err := realPath(ws); err == nil {
		ws = real
	}
	v := *g
	v.policy.Workspace = ws
	return &v
}
