package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/rules"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/skills"
	"github.com/reasonix/reasonix/tools"
)

// userHomeDir is the user's home: $HOME when set, else the OS's idea.
func userHomeDir() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// rulesOptions says where this process looks for rules files.
func rulesOptions(l *config.Loaded, workspace, wd, userHome string) rules.Options {
	return rules.Options{Home: l.Home, UserHome: userHome, Workspace: workspace, Cwd: wd,
		Instructions: l.Config.Instructions}
}

// contextReadDenied is rulesReadDenied as a run would build it (the read
// deny list and every Read deny rule, Claude Code settings' included),
// so `reasonix context` shows the imports a session gets, and the deny
// policy that leaves out the tools a deny rule refuses every call of.
func contextReadDenied(loaded *config.Loaded, workspace, userHome string) (func(string) string, permission.Policy, error) {
	cfg := loaded.Config
	set, err := loadSettings(loaded, workspace, userHome)
	if err != nil {
		return nil, permission.Policy{}, err
	}
	extraDirs := set.Directories(workspace, userHome)
	guard, err := permission.NewConfiner(workspace, append(slices.Clone(cfg.Sandbox.AllowRead), extraDirs...),
		append(slices.Clone(cfg.Sandbox.AllowWrite), extraDirs...), loaded.Home)
	if err != nil {
		return nil, permission.Policy{}, usageError{err}
	}
	denyRules := append(slices.Clone(cfg.Permissions.Deny), set.Rules("deny")...)
	sbOpts := permission.SandboxOptions{Mode: cfg.Sandbox.Bash, Workspace: workspace, Home: loaded.Home,
		AllowWrite: append(slices.Clone(cfg.Sandbox.AllowWrite), extraDirs...)}
	guard.DenyRead(sandboxDenyRead(sbOpts, userHome, cfg.Sandbox.DenyRead, denyRules))
	pol, err := permission.ParsePolicy("", nil, nil, denyRules, nil)
	if err != nil {
		return nil, permission.Policy{}, usageError{err}
	}
	pol.Workspace = guard.Workspace()
	return rulesReadDenied(guard, pol), pol, nil
}

// rulesOnce reads the rules once per process, publishing its notices the
// first time, and hands every later caller the same bytes.
func rulesOnce(opts rules.Options, sink events.Sink) func() *rules.Prefix {
	return sync.OnceValue(func() *rules.Prefix {
		p := rules.Load(opts)
		for _, n := range p.Notices {
			sink.Publish(events.Event{Type: events.Notice, Text: n})
		}
		return p
	})
}

// contextPart is one row of `reasonix context`.
type contextPart struct {
	Part    string   `json:"part"`
	Source  string   `json:"source"`
	Imports []string `json:"imports,omitempty"`
	Tools   []string `json:"tools,omitempty"`
	Bytes   int      `json:"bytes"`
	Tokens  int      `json:"tokens_estimate"`
}

type contextReport struct {
	Role        string        `json:"role"`
	Parts       []contextPart `json:"parts"`
	SystemBytes int           `json:"system_bytes"`
	ToolsBytes  int           `json:"tools_bytes"`
	TotalBytes  int           `json:"total_bytes"`
	TotalTokens int           `json:"total_tokens_estimate"`
	Estimate    string        `json:"token_estimate"`
	// Model, Window and Percent: the default model, its context window
	// and the share of it the prefix takes (0 when the window is unknown).
	Model   string   `json:"model,omitempty"`
	Window  int      `json:"context_window"`
	Percent int      `json:"percent"`
	Notices []string `json:"notices,omitempty"`
	// Agents are the subagents the role's task tool can start (none when
	// it has no task tool), as its schema lists them.
	Agents []contextAgent `json:"agents,omitempty"`
}

// contextAgent is one subagent the task tool offers: its name, where it
// was defined ("builtin" or its agent file) and its description.
type contextAgent struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Description string `json:"description,omitempty"`
}

// estimateTokens is a rough count: four bytes a token.
func estimateTokens(n int) int { return (n + 3) / 4 }

// partName is how `reasonix context` names a kind of prefix part.
func partName(kind string) string {
	switch kind {
	case rules.KindPreamble:
		return "rules preamble"
	case rules.KindGlobal:
		return "global rules"
	case rules.KindProject:
		return "project rules"
	case rules.KindInstructions:
		return "instructions"
	case rules.KindEnvironment:
		return "environment"
	}
	return ""
}

// cmdContext is `reasonix context [--json] [--role NAME]`: the frozen
// prefix a new session sends, part by part, with no model involved.
func cmdContext(args []string, io stdio) error {
	fs := flag.NewFlagSet("context", flag.ContinueOnError)
	fs.SetOutput(io.err)
	asJSON := fs.Bool("json", false, "print JSON")
	role := fs.String("role", roles.Executor, "role whose prefix to show: executor, planner or a subagent")
	configFile := fs.String("config", "", "config file")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("context takes no arguments")
	}
	loaded, wd, err := loadConfig(*configFile)
	if err != nil {
		return err
	}
	cfg := loaded.Config
	workspace := workspaceOf(loaded, wd)
	userHome := userHomeDir()

	ropts := rulesOptions(loaded, workspace, wd, userHome)
	var denyPol permission.Policy
	if ropts.Denied, denyPol, err = contextReadDenied(loaded, workspace, userHome); err != nil {
		return err
	}
	pre := rules.Load(ropts)
	notices := append([]string(nil), pre.Notices...)
	roleSet, roleNotices := roles.Load(roles.LoadOptions{Workspace: workspace, Home: loaded.Home, UserHome: userHome,
		ProjectTrusted: projectTrust(loaded, workspace, func(msg string) { notices = append(notices, msg) })})
	catalog, skillNotices := skills.Discover(skills.Options{Workspace: workspace, Home: loaded.Home, UserHome: userHome,
		Paths: cfg.Skills.Paths, Excluded: cfg.Skills.ExcludedPaths, Disabled: cfg.Skills.DisabledSkills})
	notices = append(append(notices, roleNotices...), skillNotices...)
	pol, err := permission.ParsePolicy(cfg.Permissions.Mode, cfg.Permissions.Allow, cfg.Permissions.Ask, cfg.Permissions.Deny, cfg.Permissions.Dangerous)
	if err != nil {
		return usageError{err}
	}
	reg, err := runTools(cfg.Tools.Disabled, cfg.Tools.Enabled, workspace, loaded.Home) // the same tools assemble offers
	if err != nil {
		return err
	}
	if err := preferShell(reg, cfg.Tools.Shell, loaded.Sources); err != nil {
		return err
	}
	// As sessions are: without the tools a deny rule refuses every call of.
	reg = reg.Filter(func(t tools.Tool) bool { return !denyPol.Withholds(t.Name()) })
	text := pre.Text() + languageRules(cfg, os.Getenv)
	// The same read check a session applies: a project's reasonix.toml
	// naming a denied file (an SSH key) is refused, not read.
	system, err := systemPrompt(cfg, loaded, ropts.Denied)
	if err != nil {
		return err
	}
	coord := orchestrator.New(orchestrator.Runtime{
		Workspace: workspace, Tools: reg, Roles: roleSet, Skills: catalog, System: system,
		SkillAllow: func(name string) bool {
			return pol.Decide(skills.ToolName, true, tools.Access{Kind: tools.KindDelegate, Skill: name}) != permission.Deny
		},
		Rules: func() string { return text },
	})
	p, err := coord.Prefix(*role)
	if err != nil {
		return usageError{err}
	}

	roleSrc := p.RoleSource
	if roleSrc == roles.SourceBuiltin {
		roleSrc = "builtin " + p.Role
	}
	row := func(part, source string, n int) contextPart {
		return contextPart{Part: part, Source: source, Bytes: n, Tokens: estimateTokens(n)}
	}
	rep := contextReport{Role: p.Role, Estimate: "bytes/4", Notices: notices}
	if p.RolePrompt != "" {
		rep.Parts = append(rep.Parts, row("role prompt", roleSrc, len(p.RolePrompt)))
	}
	for _, pt := range pre.Parts {
		r := row(partName(pt.Kind), pt.Source, len(pt.Text))
		r.Imports = pt.Imports
		rep.Parts = append(rep.Parts, r)
	}
	if p.SkillIndex != "" {
		rep.Parts = append(rep.Parts, row("skill index", fmt.Sprintf("%d skills", len(catalog.List())), len(p.SkillIndex)))
	}
	tr := row("tool schemas", fmt.Sprintf("%d tools", len(p.ToolNames)), len(p.Tools))
	tr.Tools = p.ToolNames
	rep.Parts = append(rep.Parts, tr)
	if slices.Contains(p.ToolNames, "task") {
		for _, a := range roleSet.Subagents() {
			rep.Agents = append(rep.Agents, contextAgent{Name: a.Name, Source: a.Source, Description: a.Description})
		}
	}
	rep.SystemBytes, rep.ToolsBytes = len(p.System), len(p.Tools)
	rep.TotalBytes = rep.SystemBytes + rep.ToolsBytes
	rep.TotalTokens = estimateTokens(rep.TotalBytes)
	// The window of the model a run would use, read from the config
	// alone: nothing is built, no network.
	if pcfgs, err := cfg.ProviderConfigs(os.Getenv); err == nil && len(pcfgs) > 0 {
		if pc, model, err := providers.Resolve("", pcfgs, cfg.DefaultModel); err == nil {
			rep.Model, rep.Window = pc.Name+"/"+model, pc.WindowFor(model)
			rep.Percent = events.Percent(rep.TotalTokens, rep.Window)
		}
	}

	for _, n := range notices {
		fmt.Fprintln(io.err, "reasonix: "+n)
	}
	if *asJSON {
		enc := json.NewEncoder(io.out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(io.out, "Frozen prefix of a new %s session, in order (read once per process; the same for every turn):\n\n", p.Role)
	tw := tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PART\tSOURCE\tBYTES\t~TOKENS\t")
	for _, r := range rep.Parts {
		src := r.Source
		if len(r.Imports) > 0 {
			src += " (imports " + strings.Join(relAll(r.Imports, filepath.Dir(r.Source)), ", ") + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t\n", r.Part, src, r.Bytes, r.Tokens)
	}
	fmt.Fprintf(tw, "total\t\t%d\t%d\t\n", rep.TotalBytes, rep.TotalTokens)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Agents) > 0 {
		// Claude Code's .claude/agents land in the task tool's schema, not
		// in a part of their own: name them, or they are nowhere to be seen.
		names := make([]string, len(rep.Agents))
		for i, a := range rep.Agents {
			src := a.Source
			if src != roles.SourceBuiltin {
				src = relAll([]string{src}, workspace)[0]
			}
			names[i] = a.Name + " (" + src + ")"
		}
		fmt.Fprintf(io.out, "\nSubagents the task tool can start (in its schema): %s\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(io.out, "\nThe system prompt is %d bytes (its parts joined by blank lines); the tool schemas, %d bytes, are sent beside it.\n"+
		"Token counts are estimates (bytes/4); the model's tokenizer decides the real count.\n", rep.SystemBytes, rep.ToolsBytes)
	switch {
	case rep.Window > 0:
		fmt.Fprintf(io.out, "Context window of %s: %d tokens; the prefix takes ~%d (%d%%) before any history. /context in a conversation shows the live figure.\n",
			rep.Model, rep.Window, rep.TotalTokens, rep.Percent)
	case rep.Model != "":
		fmt.Fprintf(io.out, "The context window of %s is unknown (context_window = 0 or an unlisted model): nothing is measured or compacted on its own (/compact and reasonix compact still fold).\n", rep.Model)
	}
	return nil
}

// relAll shows paths relative to base where that is shorter.
func relAll(paths []string, base string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		if r, err := filepath.Rel(base, p); err == nil && len(r) < len(p) {
			out[i] = r
		}
	}
	return out
}
