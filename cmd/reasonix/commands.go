package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/reasonix/reasonix/commands"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/skills"
	"github.com/reasonix/reasonix/tools"
)

// cmdCommands is `reasonix commands`: every slash command a prompt may
// start with (custom commands, skills, MCP prompts) and where it comes
// from. It needs no provider. Trusted, enabled MCP servers are started to
// list their prompts, as `reasonix mcp list` does; untrusted ones never are.
func cmdCommands(ctx context.Context, args []string, io stdio) error {
	fs := flag.NewFlagSet("commands", flag.ContinueOnError)
	fs.SetOutput(io.err)
	asJSON := fs.Bool("json", false, "print a JSON array")
	file := fs.String("config", "", "config file")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("commands takes no arguments")
	}
	loaded, wd, err := loadConfig(*file)
	if err != nil {
		return err
	}
	cfg := loaded.Config
	workspace := workspaceOf(loaded, wd)
	userHome := userHomeDir()
	cmds, notices := commands.Discover(commands.Options{Workspace: workspace, Home: loaded.Home, UserHome: userHome})
	catalog, skillNotices := skills.Discover(skills.Options{Workspace: workspace, Home: loaded.Home, UserHome: userHome,
		Paths: cfg.Skills.Paths, Excluded: cfg.Skills.ExcludedPaths, Disabled: cfg.Skills.DisabledSkills})
	for _, n := range append(notices, skillNotices...) {
		fmt.Fprintln(io.err, "reasonix: "+n)
	}
	pol, err := permission.ParsePolicy(cfg.Permissions.Mode, cfg.Permissions.Allow, cfg.Permissions.Ask, cfg.Permissions.Deny, cfg.Permissions.Dangerous)
	if err != nil {
		return usageError{err}
	}
	var prompts commands.Prompts
	ms := mcpSetup{loaded: loaded, workspace: workspace, userHome: userHome, notify: func(n string) { fmt.Fprintln(io.err, "reasonix: "+n) }}
	if cfgs := mcpServers(ms); len(cfgs) > 0 {
		m := newMCPManager(ms, cfgs)
		defer m.Close()
		m.Start()
		if err := m.Wait(ctx); err != nil {
			return err
		}
		for _, c := range m.Untrusted() {
			fmt.Fprintf(io.err, "reasonix: MCP server %s is not trusted yet; its prompts are not listed\n", c.Name)
		}
		prompts = promptsOf(m)
	}
	coord := orchestrator.New(orchestrator.Runtime{Workspace: workspace, Commands: cmds, Skills: catalog, Prompts: prompts,
		SkillAllow: func(name string) bool {
			return pol.Decide(skills.ToolName, true, tools.Access{Kind: tools.KindDelegate, Skill: name}) != permission.Deny
		}})
	list := coord.Commands()
	if *asJSON {
		if list == nil {
			list = []events.Command{}
		}
		enc := json.NewEncoder(io.out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(io.err, "no commands: add Markdown files to .reasonix/commands or .claude/commands (review.md is /review)")
		return nil
	}
	tw := tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMMAND\tSOURCE\tFILE\tDESCRIPTION")
	for _, c := range list {
		fmt.Fprintf(tw, "/%s\t%s\t%s\t%s\n", c.Name, c.Source, shortPath(c.Path, workspace, userHome), text.Clip(text.OneLine(c.Description), 70))
	}
	return tw.Flush()
}

// shortPath shows p relative to the workspace, or under ~.
func shortPath(p, workspace, home string) string {
	if p == "" {
		return "-"
	}
	if rel, err := filepath.Rel(workspace, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	if home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return p
}
