package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/settings"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/tools/mcp"
)

func cmdModels(args []string, io stdio) error {
	loaded, _, err := configCommand("models", args, io)
	if err != nil {
		return err
	}
	pcfgs, err := loaded.Config.ProviderConfigs(keyEnv(loaded))
	if err != nil {
		return usageError{err}
	}
	if len(pcfgs) == 0 {
		return usageError{fmt.Errorf("%s", config.NoProviderHelp(loaded.Home))}
	}
	defCfg, defModel, _ := providers.Resolve("", pcfgs, loaded.Config.DefaultModel)
	tw := tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPROVIDER\tCONTEXT\tKEY")
	for _, c := range pcfgs {
		models := c.Models
		if len(models) == 0 && c.DefaultModel != "" {
			models = []string{c.DefaultModel}
		}
		for _, m := range models {
			mark := ""
			if c.Name == defCfg.Name && m == defModel {
				mark = " (default)"
			}
			ctxw := "-"
			if w := c.WindowFor(m); w > 0 {
				ctxw = fmt.Sprint(w)
			} else if c.ContextWindow < 0 {
				ctxw = "off"
			}
			key := "none"
			switch {
			case c.APIKey != "":
				key = "set"
			case c.APIKeyEnv != "":
				key = "missing $" + c.APIKeyEnv
			}
			where := c.BaseURL
			if where == "" {
				where = orDefault(c.Kind, "openai")
			}
			fmt.Fprintf(tw, "%s/%s%s\t%s\t%s\t%s\n", c.Name, m, mark, where, ctxw, key)
		}
	}
	return tw.Flush()
}

func cmdConfig(args []string, io stdio) error {
	loaded, _, err := configCommand("config", args, io)
	if err != nil {
		return err
	}
	if len(loaded.Files) == 0 {
		fmt.Fprintln(io.out, "# no config files found; showing defaults")
	} else {
		fmt.Fprintf(io.out, "# files: %s\n", strings.Join(loaded.Files, ", "))
	}
	fmt.Fprint(io.out, loaded.Describe(true))
	return nil
}

func cmdDoctor(args []string, io stdio) error {
	loaded, wd, err := configCommand("doctor", args, io)
	if err != nil {
		return err
	}
	cfg := loaded.Config
	fmt.Fprintf(io.out, "reasonix %s (%s/%s)\n", version, runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(io.out, "home:       %s\n", loaded.Home)
	fmt.Fprintf(io.out, "workspace:  %s\n", wd)
	if len(loaded.Files) > 0 {
		fmt.Fprintf(io.out, "config:     %s\n", strings.Join(loaded.Files, ", "))
	} else {
		fmt.Fprintln(io.out, "config:     none (defaults)")
	}
	if loaded.TrustErr != nil {
		fmt.Fprintf(io.out, "trust:      %s\n", trustFileNotice(loaded.TrustErr))
	}
	if len(loaded.Held) > 0 {
		fmt.Fprintln(io.out, "trust:      NOT APPLIED until you trust this project (read these files, then `reasonix trust`):")
		for _, h := range loaded.Held {
			fmt.Fprintf(io.out, "            %s\n", h)
		}
	}
	pcfgs, err := cfg.ProviderConfigs(keyEnv(loaded))
	switch {
	case err != nil:
		fmt.Fprintf(io.out, "providers:  error: %v\n", err)
	case len(pcfgs) == 0:
		fmt.Fprintf(io.out, "providers:  none\n%s\n", config.NoProviderHelp(loaded.Home))
	default:
		for _, c := range pcfgs {
			key := "no key needed"
			if c.APIKeyEnv != "" && c.APIKey == "" {
				key = "MISSING $" + c.APIKeyEnv
			} else if c.APIKey != "" {
				key = "key set"
			}
			fmt.Fprintf(io.out, "provider:   %s (%s) %s, %s\n", c.Name, orDefault(c.Kind, "openai"), c.BaseURL, key)
		}
	}
	mode := orDefault(cfg.Permissions.Mode, "ask")
	userHome := userHomeDir()
	set, setErr := settings.Load(workspaceOf(loaded, wd), userHome)
	set.HoldAllow(loaded.SettingsAllowApplies)
	if m := set.Mode(); m != "" && loaded.Sources["permissions.mode"] == config.SourceDefault {
		mode = m + " (from a Claude Code settings file)"
		if set.ProjectLoosens() {
			if trusted, err := config.ProjectTrusted(loaded.Home, workspaceOf(loaded, wd)); err != nil {
				mode = "ask (the project's .claude/settings.json asks for " + m + ", NOT APPLIED: " + trustFileNotice(err) + ")"
			} else if !trusted {
				mode = "ask (the project's .claude/settings.json asks for " + m + ", NOT APPLIED until you trust the project: `reasonix trust`)"
			}
		}
	}
	fmt.Fprintf(io.out, "permissions: mode %s, %d allow, %d ask, %d deny rules (with Claude Code settings: %d, %d, %d); dangerous commands always need a person\n",
		mode, len(cfg.Permissions.Allow), len(cfg.Permissions.Ask), len(cfg.Permissions.Deny),
		len(cfg.Permissions.Allow)+len(set.Rules("allow")), len(cfg.Permissions.Ask)+len(set.Rules("ask")), len(cfg.Permissions.Deny)+len(set.Rules("deny")))
	fmt.Fprintf(io.out, "files:      confined to %s (+%d read, +%d write paths, and the Reasonix home)\n",
		wd, len(cfg.Sandbox.AllowRead), len(cfg.Sandbox.AllowWrite))
	sb := permission.SandboxOptions{Mode: cfg.Sandbox.Bash, Workspace: wd, AllowWrite: cfg.Sandbox.AllowWrite, Network: cfg.Sandbox.Network,
		Home: loaded.Home, TempDir: filepath.Join(os.TempDir(), "reasonix-run-*"),
		Bus:       permission.FindSessionBus(os.Getenv, os.Getuid()),
		KeysOnBus: func() bool { return credStore(loaded, cfg.CredentialsStore).InOSStore() }}
	sb.DenyRead, sb.DenyReadExcept = sandboxDenyRead(sb, userHome, cfg.Sandbox.DenyRead,
		append(slices.Clone(cfg.Permissions.Deny), set.Rules("deny")...))
	enforced, abi, detail := permission.SandboxStatus(sb)
	switch {
	case cfg.Sandbox.Bash == "off":
		fmt.Fprintln(io.out, "bash:       sandbox off by config ([sandbox] bash = \"off\")")
	case enforced:
		fmt.Fprintf(io.out, "bash:       confined (Landlock ABI %d)\n", abi)
	default:
		fmt.Fprintf(io.out, "bash:       NOT confined: %s\n", detail)
	}
	if enforced {
		for _, p := range permission.SandboxProtections(sb) {
			state := "in force"
			if !p.Active {
				state = "UNAVAILABLE"
			}
			fmt.Fprintf(io.out, "  %-34s %s: %s\n", p.Name, state, p.Detail)
		}
	}
	if exe, err := powerShellPath(cfg.Tools.Shell, loaded.Sources); err != nil {
		fmt.Fprintf(io.out, "shell:      error: %v\n", err)
	} else if exe != "" {
		fmt.Fprintf(io.out, "shell:      PowerShell %s ([tools.shell] prefer = %q): every line asks unless an exact rule allows it\n", exe, cfg.Tools.Shell.Prefer)
	}
	fmt.Fprintf(io.out, "file tools: refuse the read deny list (%d paths) and hard-linked files\n", len(sb.DenyRead))
	denyRules := append(slices.Clone(cfg.Permissions.Deny), set.Rules("deny")...)
	if _, gateOnly := permission.ReadRuleDenies(denyRules, permission.WritablePaths(sb)); len(gateOnly) > 0 {
		hidden := permission.HiddenReads(denyRules, wd)
		ok, why := false, "no Landlock"
		if enforced && cfg.Sandbox.Bash != "off" {
			ok, why = permission.HidingAvailable()
		}
		switch {
		case ok && hidden != nil:
			fmt.Fprintf(io.out, "read rules: %s: inside the workspace, where Landlock cannot deny a file; each command starts with the matching files hidden (a mount namespace; now: %s), and the gate refuses the file tools and commands that name them\n",
				strings.Join(gateOnly, ", "), orDefault(strings.Join(hidden.Paths(), ", "), "none exist"))
		default:
			fmt.Fprintf(io.out, "read rules: %s: enforced by the gate only (file tools, and commands that name the path or read a folder holding it): Landlock cannot keep out a path inside a writable tree, and the sandbox cannot hide it here (%s)\n",
				strings.Join(gateOnly, ", "), why)
		}
	}
	if protected := permission.ProtectedWrites(denyRules, wd); protected != nil {
		ok, why := false, "no Landlock"
		if enforced && cfg.Sandbox.Bash != "off" {
			ok, why = permission.HidingAvailable()
		}
		if ok {
			fmt.Fprintf(io.out, "edit rules: inside the workspace, where Landlock cannot deny a write; each command starts with the matching files and folders that exist mounted read-only (a mount namespace; now: %s); new files under a denied folder that does not exist yet are refused by the gate only\n",
				orDefault(strings.Join(protected.Paths(), ", "), "none exist"))
		} else {
			fmt.Fprintf(io.out, "edit rules: inside the workspace: enforced by the gate only (file tools, and commands that name the path): Landlock cannot deny a write inside a writable tree, and the sandbox cannot mount it read-only here (%s)\n", why)
		}
	}
	if lang, _ := cfg.AnswerLanguage(loaded.Getenv); lang != "" {
		fmt.Fprintf(io.out, "language:   %s\n", lang)
	}
	if loaded.DotEnv != "" {
		fmt.Fprintf(io.out, ".env:       %s (for ${VAR} and api_key_env; never passed to commands)\n", loaded.DotEnv)
		if r := dotEnvKeys(loaded, pcfgs); len(r) > 0 {
			if ok, why := permission.HidingAvailable(); ok {
				fmt.Fprintf(io.out, "            commands read it without the lines of %s (Reasonix's API keys; each command starts through the namespace helper, a few ms more; the credential store avoids that)\n", strings.Join(r[0].Names, ", "))
			} else {
				fmt.Fprintf(io.out, "            WARNING: commands can read %s, Reasonix's API keys, from it: the sandbox cannot keep lines from them here (%s); keep the keys in the credential store (reasonix setup) instead\n", strings.Join(r[0].Names, ", "), why)
			}
		}
		if n := loaded.DotEnvSkipped; len(n) > 0 {
			fmt.Fprintf(io.out, "            IGNORED lines %v: not KEY=VALUE (multi-line values are not read)\n", n)
		}
	}
	fmt.Fprintf(io.out, "keys:       credentials_store %s: %s\n", cfg.CredentialsStore, credStore(loaded, cfg.CredentialsStore).Where())
	printImports(io.out, workspaceOf(loaded, wd), loaded.Home, userHome, allHooks(cfg, set), set, setErr)
	printMCP(io.out, mcpSetup{loaded: loaded, workspace: workspaceOf(loaded, wd), userHome: userHome})
	return nil
}

// printMCP writes doctor's list of MCP servers: each definition, where it
// comes from and whether it would start, without starting any; problems
// in the JSON files (a syntax error, a server with no command, a ${VAR}
// that is not set) are named.
func printMCP(w io.Writer, s mcpSetup) {
	var problems []string
	s.notify = func(n string) { problems = append(problems, n) }
	cfgs := mcpServers(s)
	if len(cfgs) == 0 && len(problems) == 0 {
		fmt.Fprintln(w, "mcp:        no servers ([[plugins]] in reasonix.toml, .mcp.json, ~/.claude.json)")
		return
	}
	fmt.Fprintf(w, "mcp:        %d server(s); `reasonix mcp list` starts the trusted ones and counts their tools\n", len(cfgs))
	for _, c := range cfgs {
		state := "starts with each session"
		switch {
		case c.Disabled:
			state = "disabled (enabled = false)"
		case c.NeedsTrust:
			state = "NOT trusted yet: starts after a person allows it in `reasonix`, or with --mcp-trust"
		}
		if c.URL != "" && mcp.SignedIn(tokenStore(s.loaded), c) {
			state += "; signed in (OAuth)"
		}
		if c.URL == "" && c.Command != "" && !c.Disabled {
			if err := findCommand(c.Command, s.workspace, c.Cwd); err != nil {
				state += "; WILL FAIL to start: " + err.Error()
			}
		}
		what := c.URL
		if what == "" {
			what = strings.Join(append([]string{c.Command}, c.Args...), " ")
		}
		fmt.Fprintf(w, "  %s (%s) %s\n    from %s; %s\n", c.Name, orDefault(c.Type, mcp.TypeStdio), what, c.Source, state)
	}
	for _, p := range problems {
		fmt.Fprintf(w, "  PROBLEM: %s\n", strings.TrimPrefix(p, "MCP: "))
	}
}

// findCommand checks, without running it, that a stdio server's command
// can be started: found on PATH, or a file when it names a path (relative
// to the server's working directory, cwd under the workspace).
func findCommand(command, workspace, cwd string) error {
	if !strings.ContainsAny(command, `/\`) {
		if _, err := exec.LookPath(command); err != nil {
			return fmt.Errorf("command %q is not on PATH", command)
		}
		return nil
	}
	p := command
	if !filepath.IsAbs(p) {
		dir := workspace
		if cwd != "" {
			dir = cwd
			if !filepath.IsAbs(cwd) {
				dir = filepath.Join(workspace, cwd)
			}
		}
		p = filepath.Join(dir, p)
	}
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("command %s does not exist", p)
	}
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// configCommand parses the flags of a command that only reads the config
// (--config FILE) and loads it.
func configCommand(name string, args []string, io stdio) (*config.Loaded, string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	file := fs.String("config", "", "config file")
	if err := fs.Parse(args); err != nil {
		return nil, "", usageError{err}
	}
	return loadConfig(*file)
}
