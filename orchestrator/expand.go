package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/reasonix/reasonix/commands"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/skills"
	"github.com/reasonix/reasonix/tools"
)

// Entry is what one typed entry expands to, the same for every front end
// (the TUI, `run`, stream-json input): a user turn to send, a skill to
// run as a subagent, or a ! line that already ran.
type Entry struct {
	// Text is the user turn to send: the typed text with its
	// @references inlined, or a command's rendered body.
	Text string
	// Command is the slash command the entry named ("/review"), "" for
	// plain text.
	Command string
	// Allow are the permission rules the turn may use without asking (a
	// command's allowed-tools); see [TurnApprover].
	Allow []string
	// Model is the model the command asks for; "" keeps the session's.
	Model string
	// Subagent names a skill that runs as a subagent with Args instead of
	// a turn.
	Subagent string
	Args     string
	// Shell is set for a "!cmd" line: it has run and nothing is sent.
	Shell *ShellRun
}

// ShellRun is one shell command a person ran with a ! line or a command
// file's !`cmd` span.
type ShellRun struct {
	Command string
	// Output is the command's combined output followed by its exit code,
	// capped; Refused says why it did not run ("" when it ran).
	Output  string
	Refused string
	Failed  bool
}

// Record is the run as the model is told about it in the next turn.
func (r ShellRun) Record() string {
	if r.Refused != "" {
		return fmt.Sprintf("The user's shell command `%s` was not run: %s", r.Command, r.Refused)
	}
	return fmt.Sprintf("The user ran the shell command `%s` in the workspace:\n%s", r.Command, strings.TrimRight(r.Output, "\n"))
}

// UnknownCommandError is a /name that no command, skill or prompt has.
// Near are the closest names.
type UnknownCommandError struct {
	Name string
	Near []string
}

func (e *UnknownCommandError) Error() string {
	msg := fmt.Sprintf("unknown command /%s", e.Name)
	if len(e.Near) > 0 {
		msg += "; did you mean /" + strings.Join(e.Near, ", /") + "?"
	}
	return msg + " (reasonix commands lists them all)"
}

// TurnApprover is implemented by the permission gate: rules allowed for
// the duration of one turn (permission.Gate.PreApprove).
type TurnApprover interface {
	PreApprove(rules []string) (release func(), err error)
}

// maxShellOutput caps what a ! line or a !`cmd` span adds to the
// conversation.
const maxShellOutput = 16 << 10

// Expand turns what a person typed into an [Entry]: "!cmd" runs cmd in
// the workspace through the gate and the sandbox (a dangerous command
// still asks; no model is called); "/name args" renders a custom command
// (its arguments, !`cmd` spans run through the gate, @references), an
// inline skill's instructions, a prompt command, or names a subagent
// skill; anything else is sent as typed with its @references inlined. A
// /name nobody has is an [*UnknownCommandError]. session is the
// conversation the entry belongs to, for events and the decision log.
func (c *Coordinator) Expand(ctx context.Context, session, text string) (Entry, error) {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "!") {
		cmd := strings.TrimSpace(t[1:])
		if cmd == "" {
			return Entry{}, errors.New("! needs a shell command: !ls, !git status")
		}
		run := c.shell(ctx, session, cmd, []string{"Bash"})
		return Entry{Shell: &run}, nil
	}
	name, args, ok := slashCommand(t)
	if !ok || !commands.ValidName(name) {
		return Entry{Text: c.inlineRefs(ctx, session, text)}, nil
	}
	if cmd, ok := c.rt.Commands.Get(name); ok {
		return c.expandCommand(ctx, session, cmd, args)
	}
	if s, ok := c.skill(name); ok {
		if s.RunAs == skills.RunSubagent {
			return Entry{Command: "/" + s.Name, Subagent: s.Name, Args: args}, nil
		}
		prompt, err := c.SkillPrompt(s.Name, args)
		if err != nil {
			return Entry{}, err
		}
		return Entry{Command: "/" + s.Name, Text: prompt + c.refBlocks(ctx, session, args)}, nil
	}
	if c.rt.Prompts != nil {
		for _, p := range c.rt.Prompts.Prompts() {
			if p.Name == name {
				out, err := c.rt.Prompts.Render(ctx, name, args)
				if err != nil {
					return Entry{}, fmt.Errorf("/%s: %w", name, err)
				}
				return Entry{Command: "/" + name, Text: out}, nil
			}
		}
	}
	if name == initName {
		return Entry{Command: "/" + initName, Text: initPrompt(args)}, nil
	}
	var names []string
	for _, cmd := range c.Commands() {
		names = append(names, cmd.Name)
	}
	return Entry{}, &UnknownCommandError{Name: name, Near: commands.Near(name, names)}
}

// expandCommand renders a custom command: arguments first, then its
// !`cmd` spans run (with its allowed-tools pre-approved) and are replaced
// by their output, then the files its @references name are appended. The
// spans are found in the command's own text only, never in inlined file
// contents or command output, so neither can smuggle in a command.
func (c *Coordinator) expandCommand(ctx context.Context, session string, cmd commands.Command, args string) (Entry, error) {
	body, err := cmd.Body()
	if err != nil {
		return Entry{}, err
	}
	rendered := commands.Render(body, args)
	refs := c.refBlocks(ctx, session, rendered)
	var b strings.Builder
	last := 0
	for _, sp := range commands.ShellSpans(rendered) {
		b.WriteString(rendered[last:sp.Start])
		run := c.shell(ctx, session, sp.Command, cmd.AllowedTools)
		switch {
		case run.Refused != "":
			fmt.Fprintf(&b, "(`%s` was not run: %s)", sp.Command, run.Refused)
		case run.Failed:
			b.WriteString(strings.TrimRight(run.Output, "\n"))
		default:
			b.WriteString(strings.TrimRight(strings.TrimSuffix(strings.TrimRight(run.Output, "\n"), "exit code: 0"), "\n"))
		}
		last = sp.End
		if err := ctx.Err(); err != nil {
			return Entry{}, err
		}
	}
	b.WriteString(rendered[last:])
	return Entry{Command: "/" + cmd.Name, Text: b.String() + refs, Allow: cmd.AllowedTools, Model: cmd.Model}, nil
}

// inlineRefs is text with the files its @references name appended.
func (c *Coordinator) inlineRefs(ctx context.Context, session, text string) string {
	return text + c.refBlocks(ctx, session, text)
}

// refBlocks resolves the @references of text (commands.Inline) and
// returns what they add; each read passes the gate as a read_file call
// would, so Read deny rules hold for what a person types too.
func (c *Coordinator) refBlocks(ctx context.Context, session, text string) string {
	if !strings.Contains(text, "@") {
		return ""
	}
	return c.fileRefBlocks(ctx, session, text) + c.resourceBlocks(ctx, session, text)
}

// resourceBlocks reads the MCP resources text names (@server:uri).
func (c *Coordinator) resourceBlocks(ctx context.Context, session, text string) string {
	if c.rt.Extensions == nil {
		return ""
	}
	out, notes := c.rt.Extensions.Resources(ctx, text)
	for _, n := range notes {
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: session, Text: n})
	}
	return out
}

// fileRefBlocks is refBlocks for the workspace files text names.
func (c *Coordinator) fileRefBlocks(ctx context.Context, session, text string) string {
	if c.rt.Env == nil {
		return ""
	}
	env := c.rt.Env
	out, notices := commands.Inline(text, commands.RefOptions{
		Root:    env.Root,
		Resolve: func(p string) (string, error) { return env.Resolve(p, false) },
		Denied: func(abs string) string {
			t, ok := c.rt.Tools.Get("read_file")
			if !ok || c.rt.Gate == nil {
				return ""
			}
			args, _ := json.Marshal(map[string]string{"path": abs})
			v := c.rt.Gate.Authorize(ctx, tools.Invocation{Session: session, Role: events.RoleUser, Tool: t, Args: args, Env: env,
				Reason: "an @reference the person typed"})
			if v.Allow {
				return ""
			}
			return v.Message
		},
	})
	for _, n := range notices {
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: session, Text: n})
	}
	return out[len(text):]
}

// shell runs command as a person's bash call: described and published as
// a tool call, authorised by a view of the gate with allow as rules for
// this call only
// ("Bash" for a ! line: typed by the person, so it runs unless a rule
// denies it or it is dangerous, which still asks), confined by the
// sandbox, watched by the control-file guard and redacted like any tool
// result.
func (c *Coordinator) shell(ctx context.Context, session, command string, allow []string) ShellRun {
	run := ShellRun{Command: command}
	t, ok := c.rt.Tools.Get("bash")
	if !ok || c.rt.Env == nil {
		run.Refused = "the bash tool is disabled"
		return run
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	acc, err := tools.Describe(t, args)
	if err != nil {
		run.Refused = err.Error()
		return run
	}
	env := c.rt.Env.Fork()
	env.OutputLimit = min(env.Limit(), maxShellOutput)
	info := &events.Tool{CallID: fmt.Sprintf("user-shell-%d", c.shellCalls.Add(1)), Name: t.Name(), Args: args,
		Kind: string(acc.Kind), Subject: acc.Subject()}
	c.rt.Sink.Publish(events.Event{Type: events.ToolStart, Session: session, Role: events.RoleUser, Tool: info})
	end := func(content, summary string, isErr, denied bool) {
		e := *info
		e.Result, e.Summary, e.IsError, e.Denied = content, summary, isErr, denied
		c.rt.Sink.Publish(events.Event{Type: events.ToolEnd, Session: session, Role: events.RoleUser, Tool: &e})
	}
	gate := c.callGate(session, allow)
	var verdict tools.Verdict
	if gate != nil {
		v := gate.Authorize(ctx, tools.Invocation{Session: session, Role: events.RoleUser, CallID: info.CallID, Tool: t,
			Args: args, Access: acc, Env: env, Reason: "typed by the person"})
		if !v.Allow {
			run.Refused = v.Message
			end("Error: "+v.Message, "refused", true, true)
			return run
		}
		verdict = v
	}
	var done func(tools.Verdict) string
	if c.rt.Guard != nil {
		done = c.rt.Guard.Watch(session, events.RoleUser, t.Name())
	}
	res, err := t.Execute(ctx, env, args)
	if err != nil {
		res.IsError, res.Content = true, "Error: "+err.Error()
	}
	if done != nil {
		if msg := done(verdict); msg != "" {
			res.IsError = true
			res.Content += "\n\n" + msg
		}
	}
	res.Content = tools.Truncate(env.Redact(res.Content), env.Limit())
	run.Output, run.Failed = res.Content, res.IsError
	end(res.Content, env.Redact(res.Summary), res.IsError, false)
	return run
}

// Commands lists every slash command Expand runs: custom commands, then
// skills and prompt commands whose names no custom command took, sorted
// by name. A skill a permission rule denies is left out.
func (c *Coordinator) Commands() []events.Command {
	var out []events.Command
	seen := map[string]bool{}
	for _, cmd := range c.rt.Commands.List() {
		seen[cmd.Name] = true
		desc := cmd.Description
		if cmd.ArgumentHint != "" {
			desc = cmd.ArgumentHint + "  " + desc
		}
		out = append(out, events.Command{Name: cmd.Name, Description: desc, Source: "command (" + cmd.Source + ")", Path: cmd.Path})
	}
	if c.rt.Skills != nil {
		for _, s := range c.rt.Skills.List() {
			if seen[s.Name] || c.rt.SkillAllow != nil && !c.rt.SkillAllow(s.Name) {
				continue
			}
			seen[s.Name] = true
			out = append(out, events.Command{Name: s.Name, Description: s.Description, Source: "skill (" + s.Source + ")", Path: s.Path})
		}
	}
	if c.rt.Prompts != nil {
		for _, p := range c.rt.Prompts.Prompts() {
			if seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			desc := p.Description
			if p.ArgumentHint != "" {
				desc = p.ArgumentHint + "  " + desc
			}
			out = append(out, events.Command{Name: p.Name, Description: desc, Source: p.Source})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// skill is the skill /name runs, unless a permission rule denies it.
func (c *Coordinator) skill(name string) (skills.Skill, bool) {
	if c.rt.Skills == nil {
		return skills.Skill{}, false
	}
	s, ok := c.rt.Skills.Get(name)
	if ok && c.rt.SkillAllow != nil && !c.rt.SkillAllow(s.Name) {
		return skills.Skill{}, false
	}
	return s, ok
}

// callGate is the gate with allow added for one call only: a view, so no
// other session running meanwhile gains anything. A rule that does not
// parse is left out with a notice.
func (c *Coordinator) callGate(session string, allow []string) tools.Authorizer {
	rg, ok := c.rt.Gate.(RoleGate)
	if !ok || len(allow) == 0 {
		return c.rt.Gate
	}
	var good []string
	for _, r := range allow {
		if _, err := rg.RoleView(events.RoleUser, false, "", []string{r}, nil, nil); err != nil {
			c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: session, Text: fmt.Sprintf("allowed-tools: %v; left out", err)})
			continue
		}
		good = append(good, r)
	}
	v, err := rg.RoleView(events.RoleUser, false, "", good, nil, nil)
	if err != nil {
		return c.rt.Gate
	}
	return v
}

// PreApprove allows rules for one turn through the gate (a command's
// allowed-tools); a rule that does not parse is reported and the turn
// runs without them. Call the returned function when the turn ends.
func (c *Coordinator) PreApprove(session string, rules []string) func() {
	ta, ok := c.rt.Gate.(TurnApprover)
	if !ok || len(rules) == 0 {
		return func() {}
	}
	release, err := ta.PreApprove(rules)
	if err != nil {
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: session, Text: err.Error()})
	}
	return release
}
