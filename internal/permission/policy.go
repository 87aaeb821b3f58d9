package permission

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/reasonix/reasonix/internal/lazy"
	"github.com/reasonix/reasonix/tools"
)

// Decision is the outcome of the policy for one call.
type Decision int

// Decisions, from most to least permissive.
const (
	Allow Decision = iota
	Ask
	Deny
)

// String returns allow, ask or deny.
func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Mode is the posture for calls no rule decides.
type Mode string

// Postures.
const (
	// ModeAsk asks before every writer no rule allows (the default).
	ModeAsk Mode = "ask"
	// ModeAuto allows writers no rule mentions; ask and deny rules and
	// dangerous commands still apply.
	ModeAuto Mode = "auto"
	// ModeYolo allows everything that is neither denied nor dangerous,
	// including calls an explicit ask rule matches (with or without a
	// person); dangerous commands and control-file writes still ask.
	ModeYolo Mode = "yolo"
	// ModeDeny refuses writers no rule allows instead of asking (the
	// spec's mode = "deny", Claude Code's dontAsk); readers still run.
	ModeDeny Mode = "deny"
)

// Policy is a set of rules and a posture. The zero value asks for every
// writer and allows every reader.
type Policy struct {
	Mode Mode
	// Plan refuses every tool that is not read-only; it is checked first.
	Plan  bool
	Allow []Rule
	Ask   []Rule
	Deny  []Rule
	// Dangerous adds Bash patterns to the built-in dangerous class.
	Dangerous []Rule
	// Workspace resolves relative paths in path rules and redirections;
	// empty means the process working directory.
	Workspace string
	// Exists reports whether a path exists (redirections onto existing
	// files are dangerous); nil means os.Lstat.
	Exists func(path string) bool
	// Home is Reasonix's home; writes to its config and agent files need
	// a person (see control.go). Empty skips the home checks.
	Home string
	// TempDir is the run's private temporary directory (TMPDIR of bash
	// commands); writes beneath it, $TMPDIR/out included, are ordinary.
	TempDir string
	// Hidden, when set, lists the paths the sandbox hides from the
	// commands of workspace, the policy's (SandboxOptions.Hide, when
	// hiding works here; a plan worker's view of the policy names its
	// worktree): a recursive reader of a folder whose denied paths are
	// all hidden runs without asking, since it cannot read them. It is
	// called only when such a reader meets a Read deny rule.
	Hidden func(workspace string) []string
}

// ParsePolicy builds a policy from configuration strings. mode is ask,
// auto (or allow), deny, yolo or plan (empty means ask); Claude Code's
// default, acceptEdits, dontAsk and bypassPermissions are accepted too. Errors name the bad rule.
func ParsePolicy(mode string, allow, ask, deny, dangerous []string) (Policy, error) {
	var p Policy
	m, plan, err := ParseMode(mode)
	if err != nil {
		return Policy{}, err
	}
	p.Mode, p.Plan = m, plan
	lists := []struct {
		name string
		in   []string
		out  *[]Rule
	}{{"allow", allow, &p.Allow}, {"ask", ask, &p.Ask}, {"deny", deny, &p.Deny}}
	for _, l := range lists {
		for _, s := range l.in {
			r, err := ParseRule(s)
			if err != nil {
				return Policy{}, fmt.Errorf("[permissions] %s: %w", l.name, err)
			}
			*l.out = append(*l.out, r)
		}
	}
	for _, s := range dangerous {
		spec := strings.TrimSpace(s)
		if strings.HasPrefix(spec, "Bash(") || strings.HasPrefix(spec, "bash(") {
			spec = strings.TrimSuffix(spec[5:], ")")
		}
		r, err := ParseRule("Bash(" + spec + ")")
		if err != nil {
			return Policy{}, fmt.Errorf("[permissions] dangerous: %w", err)
		}
		r.prefix = true // a dangerous pattern covers every longer command
		p.Dangerous = append(p.Dangerous, r)
	}
	return p, nil
}

// ParseMode parses a posture name; plan reports plan mode.
func ParseMode(s string) (Mode, bool, error) {
	switch strings.TrimSpace(s) {
	case "", "ask", "default":
		return ModeAsk, false, nil
	case "auto", "acceptEdits", "allow":
		return ModeAuto, false, nil
	case "deny", "dontAsk":
		return ModeDeny, false, nil
	case "yolo", "bypassPermissions":
		return ModeYolo, false, nil
	case "plan":
		return ModeAsk, true, nil
	}
	return "", false, fmt.Errorf("[permissions] mode %q: want ask, allow, auto, deny, yolo or plan", s)
}

// Merge layers an override (an agent or role) on top of p: the override's
// mode wins when set, its rules are added, and plan mode is sticky.
func Merge(base, override Policy) Policy {
	out := base
	if override.Mode != "" {
		out.Mode = override.Mode
	}
	out.Plan = base.Plan || override.Plan
	out.Allow = append(append([]Rule(nil), base.Allow...), override.Allow...)
	out.Ask = append(append([]Rule(nil), base.Ask...), override.Ask...)
	out.Deny = append(append([]Rule(nil), base.Deny...), override.Deny...)
	out.Dangerous = append(append([]Rule(nil), base.Dangerous...), override.Dangerous...)
	if override.Workspace != "" {
		out.Workspace = override.Workspace
	}
	if override.Exists != nil {
		out.Exists = override.Exists
	}
	return out
}

// Outcome is a decision with the reasons behind it.
type Outcome struct {
	Decision Decision
	// Rule is the rule that decided, as written, and List the list it came
	// from (Allow, Ask, Deny); both empty when the posture decided.
	Rule string
	List string
	// Dangerous lists why the call is in the dangerous class; a dangerous
	// call is never allowed without a fresh human answer.
	Dangerous []string
	// Reason is a short human explanation.
	Reason string
	// Suggest are the rules that "always allow" would save for this call.
	Suggest []string
	// Subjects are the command or paths the decision was about.
	Subjects []string
	// Person, when the decision is Ask, says why this call needs a
	// person's answer even where the posture alone asked (a headless
	// run otherwise lets those run): a PowerShell line the gate cannot
	// read, a fetch from a host no rule names. A headless run refuses
	// such a call with this reason.
	Person string
}

// Decide returns the decision for one call described by acc (see
// [tools.Describe]). It is pure apart from checking whether redirection
// targets exist.
func (p Policy) Decide(tool string, readOnly bool, acc tools.Access) Decision {
	return p.Explain(tool, readOnly, acc).Decision
}

// Withholds reports whether a deny rule without a specifier (Bash, Edit,
// mcp__server) refuses every call of tool, whatever its arguments. Such a
// tool is not offered to the model at all, as Claude Code leaves it out
// before hooks and rules are consulted: no call of it is made, so no
// PreToolUse hook runs for one. A scoped rule (Bash(rm:*)) withholds
// nothing; its calls reach the hooks and then the gate.
func (p Policy) Withholds(tool string) bool {
	family, _ := familyOf(tool)
	for _, r := range p.Deny {
		if r.Spec == "" && r.glob == "" && r.appliesTo(tool, family) {
			return true
		}
	}
	return false
}

// Explain is Decide with the matched rule and any dangerous reasons.
func (p Policy) Explain(tool string, readOnly bool, acc tools.Access) Outcome {
	c := newCall(tool, readOnly, acc)
	return p.evaluate(&c, nil)
}

// call is one tool call reduced to what rules match on. It is built from
// the tool's own description of the call, never from its argument names.
type call struct {
	tool     string
	family   string
	readOnly bool
	// sessionOnly calls change nothing outside their session.
	sessionOnly bool
	// command is the bash line; paths the subjects of the call's family
	// (written paths for Edit, read paths for Read) in slash form,
	// workspace-relative where possible; readPaths the paths a writing
	// call only reads; name the skill or agent.
	command string
	// shell is the language of command (tools.Access.Shell).
	shell     string
	url       string
	paths     []string
	readPaths []string
	name      string
	// rawPaths and rawReads are the same paths as the tool gave them, for
	// resolution by a guard.
	rawPaths []string
	rawReads []string
	writes   bool
	// absPaths are rawPaths absolute, resolved by the guard when there is
	// one (tools.Verdict.Writes).
	absPaths []string
}

// newCall maps a description to a rule family: read to Read, write to
// Edit, execute to Bash, delegate to Task or Skill; anything else is
// matched by the tool's id. A call that names written paths is a write
// whatever its kind says, and an undescribed tool is never read-only. A
// read call is read-only even when its tool can also write (memory's
// list, search and read beside its save and forget): the call's own
// description decides, not the tool's.
func newCall(tool string, readOnly bool, acc tools.Access) call {
	c := call{tool: tool, readOnly: readOnly && !acc.Unknown, sessionOnly: acc.SessionOnly && !acc.Unknown}
	kind := acc.Kind
	if len(acc.Writes) > 0 {
		kind = tools.KindWrite
	}
	switch kind {
	case tools.KindRead:
		c.family = FamilyRead
		c.readOnly = !acc.Unknown
		c.rawPaths = acc.Reads
		if len(c.rawPaths) == 0 && !c.sessionOnly {
			c.rawPaths = []string{"."}
		}
	case tools.KindWrite:
		c.family, c.writes = FamilyEdit, true
		c.readOnly = false
		c.rawPaths, c.rawReads = acc.Writes, acc.Reads
	case tools.KindExecute:
		c.family, c.command, c.shell = FamilyBash, acc.Command, acc.Shell
		c.readOnly = false
	case tools.KindDelegate:
		if acc.Agent != "" {
			c.family, c.name = FamilyTask, acc.Agent
		} else {
			c.family, c.name = FamilySkill, acc.Skill
		}
	case tools.KindNetwork:
		// web_fetch's rules match its URL's host; another tool's network
		// call is matched by its id.
		c.family, c.url = ruleFamily(tool), acc.URL
	default:
		c.family = tool
	}
	return c
}

func (p Policy) exists(path string) bool {
	if p.Exists != nil {
		return p.Exists(path)
	}
	_, err := os.Lstat(path)
	return err == nil
}

func (p Policy) workspace() string {
	if p.Workspace != "" {
		return p.Workspace
	}
	wd, _ := os.Getwd()
	return wd
}

// relPaths turns path arguments into the slash form path rules match:
// workspace-relative inside the workspace, absolute outside it.
func (p Policy) relPaths(raw []string) []string {
	ws := p.workspace()
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		abs := r
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(ws, r)
		}
		abs = filepath.Clean(abs)
		rel, err := filepath.Rel(ws, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			out = append(out, filepath.ToSlash(abs))
			continue
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// evaluate applies deny > dangerous > ask > allow > posture. grants are
// session grants, consulted only for calls that would otherwise ask.
func (p Policy) evaluate(c *call, grants []Rule) Outcome {
	if p.Plan && !c.readOnly {
		return Outcome{Decision: Deny, Reason: "plan mode: write tools are disabled"}
	}
	if c.family == FamilyBash {
		return p.evaluateBash(c, grants)
	}
	if c.paths == nil && c.rawPaths != nil {
		c.paths = p.relPaths(c.rawPaths)
	}
	if c.readPaths == nil && c.rawReads != nil {
		c.readPaths = p.relPaths(c.rawReads)
	}
	subjects := c.subjects()
	out := Outcome{Subjects: subjects}
	if len(subjects) == 0 {
		// Only bare rules (Edit, Deny: write_file) can match a call with no
		// path; allow rules with a pattern must not pass it vacuously.
		subjects = []string{""}
	}
	// loose is for deny and ask rules: on a file system that folds case,
	// Edit(**/*.env) must also stop a write to PROD.ENV.
	match := func(r Rule, s string, loose bool) bool {
		if !r.appliesTo(c.tool, c.family) {
			return false
		}
		switch c.family {
		case FamilyRead, FamilyEdit:
			if r.Spec == "" {
				return true
			}
			if s == "" {
				return false
			}
			if loose && foldCase {
				return r.matchPathFold(s)
			}
			return r.matchPath(s)
		case FamilySkill, FamilyTask:
			return r.matchName(s)
		case FamilyWebFetch:
			return r.matchURL(s)
		}
		return r.Spec == ""
	}
	any := func(rules []Rule) (Rule, bool) {
		for _, r := range rules {
			for _, s := range subjects {
				if match(r, s, true) {
					return r, true
				}
			}
		}
		return Rule{}, false
	}
	all := func(rules []Rule) (Rule, bool) {
		var last Rule
		for _, s := range subjects {
			found := false
			for _, r := range rules {
				if match(r, s, false) {
					last, found = r, true
					break
				}
			}
			if !found {
				return Rule{}, false
			}
		}
		return last, true
	}
	out.Suggest = c.suggest()
	if r, ok := any(p.Deny); ok {
		out.Decision, out.Rule, out.List = Deny, r.Raw, "Deny"
		out.Reason = "denied by rule Deny: " + r.Raw
		return out
	}
	// A file that may not be read may not be edited either: an edit's
	// result and diff show its content.
	if c.family == FamilyEdit {
		for _, r := range p.Deny {
			if r.Family != FamilyRead {
				continue
			}
			for _, s := range append(append([]string(nil), c.paths...), c.readPaths...) {
				if r.matchPath(s) || (foldCase && r.matchPathFold(s)) {
					out.Decision, out.Rule, out.List = Deny, r.Raw, "Deny"
					out.Reason = "denied by rule Deny: " + r.Raw
					return out
				}
			}
		}
	}
	if c.sessionOnly {
		out.Decision, out.Reason = Allow, "changes only the session"
		return out
	}
	if c.family == FamilyEdit {
		for _, s := range out.Subjects {
			if name, ok := p.controlFile(s); ok {
				out.Dangerous = append(out.Dangerous, controlDanger(c.tool+" writes", name))
			}
		}
		if len(out.Dangerous) > 0 {
			out.Decision = Ask
			out.Reason = "dangerous: " + strings.Join(out.Dangerous, "; ")
			return out
		}
	}
	if r, ok := any(p.Ask); ok {
		out.Decision, out.Rule, out.List = Ask, r.Raw, "Ask"
		out.Reason = "rule Ask: " + r.Raw
		if _, ok := all(grants); ok {
			out.Decision, out.Reason = Allow, "allowed for this session"
		} else if p.Mode == ModeYolo {
			out.Decision, out.Reason = Allow, "yolo mode"
		}
		return out
	}
	if c.family == FamilyWebFetch {
		if o, local := p.localFetch(c, out, all, grants); local {
			return o
		}
	}
	if r, ok := all(p.Allow); ok {
		out.Decision, out.Rule, out.List = Allow, r.Raw, "Allow"
		out.Reason = "allowed by rule Allow: " + r.Raw
		return out
	}
	if c.readOnly {
		out.Decision, out.Reason = Allow, "read-only tool"
		return out
	}
	if _, ok := all(grants); ok && len(grants) > 0 {
		out.Decision, out.Reason = Allow, "allowed for this session"
		return out
	}
	out = p.fallback(out)
	if out.Decision == Ask && c.url != "" {
		// Nothing confines a fetch the way the sandbox confines a
		// command (its network is off by default), and a URL can carry
		// whatever the model read: a host no rule names waits for a
		// person, and a run without one refuses it.
		host := c.url
		if u, err := url.Parse(c.url); err == nil && u.Hostname() != "" {
			host = strings.ToLower(u.Hostname())
		}
		out.Person = fmt.Sprintf("no WebFetch(domain:%s) rule allows fetching from %s", host, host)
	}
	return out
}

// localFetch judges a fetch whose URL names this machine or a private
// network (localhost, 127.0.0.1, 10.0.0.5, 169.254.169.254): only an allow
// rule that names the host (not domain:*), a person's session grant or a
// person's yes lets it go, whatever the posture. In auto or yolo a model
// would otherwise reach the services on loopback and the local network,
// which the sandbox keeps its commands from, and a cloud's metadata
// service, which hands out credentials. It reports false for other URLs.
func (p Policy) localFetch(c *call, out Outcome, all func([]Rule) (Rule, bool), grants []Rule) (Outcome, bool) {
	u, err := url.Parse(c.url)
	if err != nil || u.Hostname() == "" {
		return out, false
	}
	kind := tools.LocalHost(u.Hostname())
	if kind == "" {
		return out, false
	}
	var named []Rule
	for _, r := range p.Allow {
		if r.Spec != "" && r.domain != "*" {
			named = append(named, r)
		}
	}
	if r, ok := all(named); ok {
		out.Decision, out.Rule, out.List = Allow, r.Raw, "Allow"
		out.Reason = "allowed by rule Allow: " + r.Raw
		return out, true
	}
	if _, ok := all(grants); ok && len(grants) > 0 {
		out.Decision, out.Reason = Allow, "allowed for this session"
		return out, true
	}
	host := strings.ToLower(u.Hostname())
	out.Decision = Ask
	out.Reason = fmt.Sprintf("%s is a %s address", host, kind)
	out.Person = fmt.Sprintf("%s is a %s address (a service of this machine or its network), which only a person or a WebFetch(domain:%s) rule lets a fetch reach", host, kind, host)
	return out, true
}

func (p Policy) fallback(out Outcome) Outcome {
	switch p.Mode {
	case ModeAuto:
		out.Decision, out.Reason = Allow, "auto mode"
	case ModeYolo:
		out.Decision, out.Reason = Allow, "yolo mode"
	case ModeDeny:
		out.Decision, out.Reason = Deny, "mode deny: no rule allows it"
	default:
		out.Decision, out.Reason = Ask, "no rule allows it"
	}
	return out
}

func (c *call) subjects() []string {
	switch c.family {
	case FamilyRead, FamilyEdit:
		return c.paths
	case FamilySkill, FamilyTask:
		return []string{c.name}
	case FamilyWebFetch:
		return []string{c.url}
	}
	return []string{c.tool}
}

// suggest returns the rules "always allow" would save for a non-bash call.
// A subject no rule can spell (a path with surrounding spaces, or one that
// starts with ~) gets no rule rather than one that does not parse.
func (c *call) suggest() []string {
	switch c.family {
	case FamilyEdit, FamilyRead:
		var out []string
		for _, p := range c.paths {
			s := c.family + "(" + escapeGlob(p) + ")"
			if r, err := ParseRule(s); err == nil && r.matchPath(p) {
				out = append(out, s)
			}
		}
		return out
	case FamilySkill, FamilyTask:
		if c.name == "" {
			return nil
		}
		s := c.family + "(" + escapeGlob(c.name) + ")"
		if r, err := ParseRule(s); err != nil || !r.matchName(c.name) {
			return nil
		}
		return []string{s}
	case FamilyWebFetch:
		u, err := url.Parse(c.url)
		if err != nil || u.Hostname() == "" {
			return nil
		}
		s := FamilyWebFetch + "(domain:" + strings.ToLower(u.Hostname()) + ")"
		if r, err := ParseRule(s); err != nil || !r.matchURL(c.url) {
			return nil
		}
		return []string{s}
	}
	if _, err := ParseRule(c.tool); err != nil {
		return nil
	}
	return []string{c.tool}
}

func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("*?[]{}\\()", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (p Policy) evaluateBash(c *call, grants []Rule) Outcome {
	if c.shell == tools.ShellPowerShell {
		return p.evaluatePowerShell(c, grants)
	}
	out := Outcome{Subjects: []string{c.command}}
	if strings.TrimSpace(c.command) == "" {
		out.Decision, out.Reason = Ask, "empty command"
		return out
	}
	an := analyzeShellTmp(c.command, p.workspace(), p.TempDir, p.exists, p.Dangerous, p.controlFile)
	out.Dangerous = an.dangers
	out.Suggest = suggestBash(an)
	match := func(rules []Rule, words []string, loose bool) (Rule, bool) {
		for _, r := range rules {
			if r.appliesTo(c.tool, FamilyBash) && r.matchWords(words, loose) {
				return r, true
			}
		}
		return Rule{}, false
	}
	for _, cmd := range an.cmds {
		if r, ok := match(p.Deny, cmd.words, true); ok {
			out.Decision, out.Rule, out.List = Deny, r.Raw, "Deny"
			out.Reason = "denied by rule Deny: " + r.Raw
			return out
		}
	}
	if r, word, ok := p.namesDeniedRead(an); ok {
		out.Decision, out.Rule, out.List = Deny, r.Raw, "Deny"
		out.Reason = fmt.Sprintf("denied by rule Deny: %s (the command reads %s)", r.Raw, word)
		return out
	}
	if why := p.readsDeniedInside(an); why != "" {
		// A hint, not the guarantee (the sandbox is): no rule, grant or
		// posture runs it unasked, and a headless run refuses it.
		out.Decision, out.Person, out.Suggest = Ask, why, nil
		out.Reason = "needs a person: " + why
		return out
	}
	if an.parseErr != nil {
		out.Decision, out.Reason = Ask, "the command could not be parsed: "+an.parseErr.Error()
		if len(an.dangers) == 0 && p.Mode == ModeYolo {
			out.Decision = Allow
		}
		return out
	}
	if len(an.dangers) > 0 {
		out.Decision, out.Reason = Ask, "dangerous: "+strings.Join(an.dangers, "; ")
		return out
	}
	for _, cmd := range an.cmds {
		if r, ok := match(p.Ask, cmd.words, true); ok {
			out.Decision, out.Rule, out.List = Ask, r.Raw, "Ask"
			out.Reason = "rule Ask: " + r.Raw
			if bashCovered(an, grants, c.tool) {
				out.Decision, out.Reason = Allow, "allowed for this session"
			} else if p.Mode == ModeYolo {
				out.Decision, out.Reason = Allow, "yolo mode"
			}
			return out
		}
	}
	if bashCovered(an, p.Allow, c.tool) {
		var last Rule
		for _, cmd := range an.cmds {
			if cmd.needsAllow {
				last, _ = match(exactWhenRisky(an, p.Allow), cmd.words, false)
			}
		}
		out.Decision, out.Rule, out.List = Allow, last.Raw, "Allow"
		out.Reason = "allowed by rule Allow: " + last.Raw
		return out
	}
	if len(grants) > 0 && bashCovered(an, grants, c.tool) {
		out.Decision, out.Reason = Allow, "allowed for this session"
		return out
	}
	out = p.fallback(out)
	if len(an.noPrefix) > 0 && out.Decision == Ask {
		out.Reason = "no prefix rule covers this line: " + strings.Join(an.noPrefix, "; ")
	}
	if len(an.runs) > 0 && out.Decision == Ask {
		out.Reason += "; judged as what it runs: " + strings.Join(an.runs, "; ")
	}
	return out
}

// exactWhenRisky drops prefix rules when the line uses an option or
// variable that makes a command run another program or write a file: a
// rule such as Bash(sort:*) was meant for sorting, not for sort -o.
func exactWhenRisky(an *shellAnalysis, rules []Rule) []Rule {
	if len(an.noPrefix) == 0 {
		return rules
	}
	var out []Rule
	for _, r := range rules {
		if r.Spec != "" && !r.prefix && r.glob == "" {
			out = append(out, r)
		}
	}
	return out
}

// bashCovered reports whether every command that needs an allow rule has
// one; a line with no such command is not covered.
func bashCovered(an *shellAnalysis, rules []Rule, tool string) bool {
	rules = exactWhenRisky(an, rules)
	n := 0
	for _, cmd := range an.cmds {
		if !cmd.needsAllow {
			continue
		}
		n++
		ok := false
		for _, r := range rules {
			if r.appliesTo(tool, FamilyBash) && r.matchWords(cmd.words, false) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return n > 0
}

// suggestBash proposes prefix rules: the command and its subcommand when
// the second word looks like one (go test, npm run), else the command.
func suggestBash(an *shellAnalysis) []string {
	var out []string
	seen := map[string]bool{}
	for _, cmd := range an.cmds {
		if !cmd.needsAllow || len(cmd.words) == 0 || cmd.words[0] == dynWord {
			continue
		}
		words := cmd.words[:1]
		if len(cmd.words) > 1 && isSubcommand(cmd.words[1]) {
			words = cmd.words[:2]
		}
		r := "Bash(" + strings.Join(words, " ") + ":*)"
		if interpreters.Get()[cmd.words[0]] {
			// "python3:*" would allow any program at all: allow this
			// script (with any arguments), or, for inline code or no
			// script, this exact line.
			switch {
			case len(cmd.words) > 1 && !strings.HasPrefix(cmd.words[1], "-"):
				r = "Bash(" + strings.Join(cmd.words[:2], " ") + ":*)"
			default:
				r = "Bash(" + strings.Join(cmd.words, " ") + ")"
			}
		}
		if len(an.noPrefix) > 0 {
			// Only an exact rule can cover such a line.
			r = "Bash(" + strings.Join(cmd.words, " ") + ")"
		}
		// A word with spaces, a * or nothing in it cannot be spelled in a
		// rule: suggest none rather than one that fails to parse or match.
		if rule, err := ParseRule(r); err != nil || !rule.matchWords(cmd.words, false) {
			continue
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// interpreters run whatever program they are given, so a rule for one
// names the program too.
var interpreters = lazy.Value[map[string]bool]{Build: func() map[string]bool {
	return map[string]bool{
		"python": true, "python3": true, "python2": true, "node": true, "deno": true, "bun": true, "ruby": true,
		"perl": true, "php": true, "bash": true, "sh": true, "zsh": true, "fish": true, "lua": true, "Rscript": true,
		"java": true, "dotnet": true, "pwsh": true, "osascript": true, "tclsh": true, "elixir": true, "julia": true,
	}
}}

func isSubcommand(w string) bool {
	if w == "" || w == dynWord || strings.ContainsAny(w, "/.=:*?$\\\"' ()") {
		return false
	}
	c := w[0]
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// ReadDenied reports whether a Read deny rule matches the file at path
// (absolute, or relative to the workspace), and which. It is for files a
// tool finds by itself (grep's walk), whose paths the gate never saw.
func (p Policy) ReadDenied(path string) (Rule, bool) {
	denies := p.readDenies()
	if len(denies) == 0 {
		return Rule{}, false
	}
	rel := p.relPaths([]string{path})[0]
	for _, r := range denies {
		if r.matchPath(rel) || (foldCase && r.matchPathFold(rel)) {
			return r, true
		}
	}
	return Rule{}, false
}

// readDenies are the Read deny rules with a path pattern.
func (p Policy) readDenies() []Rule {
	var denies []Rule
	for _, r := range p.Deny {
		if r.Family == FamilyRead && r.Spec != "" && r.pattern != "" {
			denies = append(denies, r)
		}
	}
	return denies
}

// namesDeniedRead finds a Read deny rule matching a path a command names
// as an argument or reads through an input redirection, so `cat .env`
// and `cat < .env` cannot do what read_file .env may not. Globs are
// expanded on disk (`cat .e*`). It is best effort: a path built only when
// the line runs is not seen, and a file a command finds by itself
// (grep -r) is readsDeniedInside's; posture and sandbox still apply.
func (p Policy) namesDeniedRead(an *shellAnalysis) (Rule, string, bool) {
	denies := p.readDenies()
	if len(denies) == 0 {
		return Rule{}, "", false
	}
	ws := p.workspace()
	check := func(w string) (Rule, bool) {
		if w == "~" || strings.HasPrefix(w, "~/") {
			w = userHome() + w[1:]
		}
		cands := []string{w}
		if strings.ContainsAny(w, "*?[") {
			pat := w
			if !filepath.IsAbs(pat) {
				pat = filepath.Join(ws, pat)
			}
			if m, err := filepath.Glob(pat); err == nil {
				cands = append(cands, m[:min(len(m), 1000)]...)
			}
		}
		for _, rel := range p.relPaths(cands) {
			for _, r := range denies {
				if r.matchPath(rel) || (foldCase && r.matchPathFold(rel)) {
					return r, true
				}
			}
		}
		return Rule{}, false
	}
	for _, w := range an.reads {
		if w == "" || w == dynWord {
			continue
		}
		if r, ok := check(w); ok {
			return r, "< " + w, true
		}
	}
	for _, cmd := range an.cmds {
		for i, w := range cmd.words {
			if i == 0 || w == "" || w == dynWord {
				continue
			}
			if strings.HasPrefix(w, "-") {
				// --file=.env names a file; other options do not.
				_, v, ok := strings.Cut(w, "=")
				if !ok || v == "" {
					continue
				}
				w = v
			}
			if r, ok := check(w); ok {
				return r, cmd.words[i], true
			}
		}
	}
	return Rule{}, "", false
}
