package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/reasonix/reasonix/commands"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/internal/credentials"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/tools"
	"github.com/reasonix/reasonix/tools/mcp"
)

// mcpSetup is what starting the MCP servers of a run needs.
type mcpSetup struct {
	loaded    *config.Loaded
	workspace string
	userHome  string
	// trustAll is --mcp-trust: project servers run in this process
	// without asking (nothing is recorded).
	trustAll bool
	notify   func(string)
	// elicitor, when set, puts servers' requests for input (MCP
	// elicitation: forms, addresses to open) to a person. Without one,
	// noForms says why they are declined (each with a notice naming the
	// server); without either the client declares no elicitation.
	elicitor elicitor
	noForms  string
	// secrets are the run's API keys, which no answer to a server's form
	// may carry.
	secrets *tools.Secrets
	// signInHint, when set, says how this front end signs a server in.
	signInHint func(server string) string
}

// mcpServers reads the run's server definitions ([[plugins]], .mcp.json,
// ~/.claude.json) and marks the project ones nobody trusted yet. Problems
// in the JSON files are notices: the servers that are fine still run.
func mcpServers(s mcpSetup) []mcp.Config {
	cfg := s.loaded.Config
	withheld := []string{config.EnvAPIKey}
	for _, p := range cfg.Providers {
		if p.APIKeyEnv != "" {
			withheld = append(withheld, p.APIKeyEnv)
		}
	}
	defs, err := config.MCPServers(cfg, s.loaded.Sources, s.workspace, s.userHome, os.Getenv, withheld)
	if err != nil && s.notify != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			s.notify("MCP: " + line)
		}
	}
	trust := mcp.OpenTrust(s.loaded.Home)
	var trustErr error // said once, not for every server
	out := make([]mcp.Config, 0, len(defs))
	for _, d := range defs {
		c := mcp.Config{Name: d.Name, Type: d.Type, Command: d.Command, Args: d.Args, Env: d.Env, Cwd: d.Cwd,
			URL: d.URL, Headers: d.Headers, Timeout: time.Duration(d.TimeoutMS) * time.Millisecond,
			Allow: d.Tools.Allow, Deny: d.Tools.Deny, Disabled: !d.On(), Source: d.Source,
			OAuth: mcp.OAuthClient{ClientID: d.OAuth.ClientID, ClientSecret: d.OAuth.ClientSecret, CallbackPort: d.OAuth.CallbackPort, Scopes: d.OAuth.Scopes}}
		if d.Project && !s.trustAll {
			ok, err := trust.Trusted(s.workspace, c)
			if err != nil && trustErr == nil {
				trustErr = err
				if s.notify != nil {
					s.notify("MCP: " + trustFileNotice(err))
				}
			}
			c.NeedsTrust = !ok
		}
		out = append(out, c)
	}
	return out
}

// newMCPManager builds the manager of a process; it starts nothing. The
// remote servers' OAuth sign-ins are kept with the API keys (the
// credential store: the OS keychain or a 0600 file under the Reasonix
// home, which commands and file tools may not read); only `reasonix mcp
// login` sets signIn, so no other command waits for a browser.
func newMCPManager(s mcpSetup, cfgs []mcp.Config) *mcp.Manager {
	return mcp.New(cfgs, mcpOptions(s))
}

func mcpOptions(s mcpSetup) mcp.Options {
	opts := mcp.Options{
		Root:    s.workspace,
		LogDir:  filepath.Join(s.loaded.Home, "logs", "mcp"),
		Environ: os.Environ(),
		Notify:  s.notify,
		Version: version,
		Tokens:  tokenStore(s.loaded),
		// Only the TUI's /mcp login and `reasonix mcp login` sign in.
		SignInHint: s.signInHint,
	}
	switch {
	case s.elicitor != nil:
		opts.Elicit = func(ctx context.Context, r mcp.ElicitRequest) (events.ElicitAnswer, error) {
			return s.elicitor.Elicit(ctx, r.Session, r.Elicitation)
		}
		opts.Secrets = s.secrets
		// Every front end with a person shows an address to open.
		opts.ElicitURL = true
	case s.noForms != "":
		opts.Elicit = declineElicitation(s.noForms, s.notify)
	}
	return opts
}

// tokenStore is where the MCP servers' sign-ins are kept.
func tokenStore(l *config.Loaded) *credentials.Store {
	return credStore(l, l.Config.CredentialsStore)
}

// elicitor puts an MCP server's request for input to a person and
// waits for the answer (permission.Broker.Elicit).
type elicitor interface {
	Elicit(ctx context.Context, session string, e events.Elicitation) (events.ElicitAnswer, error)
}

// declineElicitation declines every request for input with a notice
// naming the server and why (a run no person answers, an editor without
// forms): decline, not cancel, so the server knows no answer will come.
func declineElicitation(why string, notify func(string)) func(context.Context, mcp.ElicitRequest) (events.ElicitAnswer, error) {
	return func(_ context.Context, r mcp.ElicitRequest) (events.ElicitAnswer, error) {
		if notify != nil {
			notify(fmt.Sprintf("MCP server %s asked for input (%s); %s, so Reasonix declined", r.Server, text.Clip(text.OneLine(r.Message), 200), why))
		}
		return events.ElicitAnswer{Action: events.ElicitDecline}, nil
	}
}

// askTrust asks a person, through the approval path every front end
// shows, whether each project server may start. "allow" starts it for this
// process, "allow_always" also records the trust for this definition. A
// server whose command cannot be found is not asked about: a notice says
// it cannot start and why, as doctor does.
func askTrust(ctx context.Context, m *mcp.Manager, approver permission.Approver, workspace, home string, publish func(events.Event)) {
	trust := mcp.OpenTrust(home)
	for _, c := range m.Untrusted() {
		if c.URL == "" && c.Command != "" {
			if err := findCommand(c.Command, workspace, c.Cwd); err != nil {
				publish(events.Event{Type: events.Notice, Text: fmt.Sprintf("MCP server %s (from %s) cannot start: %v; not asking whether to trust it", c.Name, c.Source, err)})
				continue
			}
		}
		what := c.URL
		if what == "" {
			what = strings.Join(append([]string{c.Command}, c.Args...), " ")
		}
		reply, err := approver.Approve(ctx, permission.Request{
			Tool:    "mcp server " + c.Name,
			Subject: what,
			Impact: fmt.Sprintf("start the MCP server %q that %s defines; it runs with your user's rights. Allow once for this session, always to remember this definition for this project",
				c.Name, c.Source),
			Choices: []permission.Answer{permission.AllowOnce, permission.AllowAlways, permission.DenyAnswer},
		})
		if err != nil {
			return
		}
		switch reply.Answer {
		case permission.AllowAlways:
			if err := trust.Approve(workspace, c); err != nil {
				publish(events.Event{Type: events.Notice, Text: "MCP: " + err.Error()})
			}
			m.Trust(c.Name)
		case permission.AllowOnce, permission.AllowSession:
			m.Trust(c.Name)
		default:
			publish(events.Event{Type: events.Notice, Text: fmt.Sprintf("MCP server %s stays off (not trusted); `reasonix mcp list` shows it", c.Name)})
		}
	}
}

// mcpExtensions adapts the manager to the coordinator's Extensions and to
// commands.Prompts (prompt commands beside custom commands and skills).
type mcpExtensions struct{ m *mcp.Manager }

func (x mcpExtensions) Tools() []tools.Tool { return x.m.Tools() }
func (x mcpExtensions) Changes() string     { return x.m.Changes() }

func (x mcpExtensions) Resources(ctx context.Context, text string) (string, []string) {
	return x.m.ResourceBlocks(ctx, text)
}

// Prompts lists the prompts of the running servers as commands
// (mcp__<server>__<prompt>).
func (x mcpExtensions) Prompts() []commands.Prompt {
	var out []commands.Prompt
	for _, p := range x.m.Prompts() {
		var hint []string
		for _, a := range p.Arguments {
			if a.Required {
				hint = append(hint, "<"+a.Name+">")
			} else {
				hint = append(hint, "["+a.Name+"]")
			}
		}
		out = append(out, commands.Prompt{Name: p.Command, Description: p.Description,
			ArgumentHint: strings.Join(hint, " "), Source: "mcp:" + p.Server})
	}
	return out
}

// Render fetches a prompt with its arguments (by position or name=value).
func (x mcpExtensions) Render(ctx context.Context, name, args string) (string, error) {
	p, ok := x.m.Prompt(name)
	if !ok {
		return "", fmt.Errorf("no MCP prompt %q", name)
	}
	vals, err := mcp.PromptArgs(p, strings.Fields(args))
	if err != nil {
		return "", err
	}
	return x.m.GetPrompt(ctx, p.Server, p.Name, vals)
}

// cmdMCP is `reasonix mcp list` and `reasonix mcp get NAME`: the servers
// of this project, their state and what they offer. Trusted, enabled
// servers are started to be listed; untrusted ones never are. `login
// NAME` and `logout NAME` give a remote server an OAuth sign-in and take
// it away.
func cmdMCP(ctx context.Context, args []string, io stdio) error {
	if len(args) == 0 {
		return usagef("mcp needs a subcommand: list, get NAME, login NAME or logout NAME")
	}
	sub := args[0]
	if sub == "conformance-client" {
		// Hidden: the entry point of the MCP conformance suite's client
		// scenarios (see mcpconformance.go), not a user command.
		return cmdMCPConformance(ctx, args[1:], io)
	}
	fs := flag.NewFlagSet("mcp "+sub, flag.ContinueOnError)
	fs.SetOutput(io.err)
	cfgFile := fs.String("config", "", "config file")
	trustAll := fs.Bool("mcp-trust", false, "start this project's servers for this command without asking (nothing is recorded)")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return usageError{err}
	}
	switch {
	case sub == "list" && len(pos) == 0:
	case (sub == "get" || sub == "login" || sub == "logout") && len(pos) == 1:
	case sub == "get" || sub == "login" || sub == "logout":
		return usagef("mcp %s needs one server NAME", sub)
	default:
		return usagef("unknown mcp subcommand %q: want list, get NAME, login NAME or logout NAME", strings.Join(args, " "))
	}
	loaded, wd, err := loadConfig(*cfgFile)
	if err != nil {
		return err
	}
	// Problems in the JSON files are said first, on stderr; the
	// manager's own notices repeat what each server's line says.
	problems := 0
	s := mcpSetup{loaded: loaded, workspace: workspaceOf(loaded, wd), userHome: userHomeDir(), trustAll: *trustAll,
		notify: func(n string) { problems++; fmt.Fprintf(io.err, "reasonix: %s\n", n) }}
	cfgs := mcpServers(s)
	s.notify = func(string) {}
	if sub != "list" {
		var one []mcp.Config
		for _, c := range cfgs {
			if c.Name == pos[0] {
				one = append(one, c)
			}
		}
		if len(one) == 0 {
			return usagef("no MCP server named %q (reasonix mcp list shows them)", pos[0])
		}
		cfgs = one
	}
	switch sub {
	case "login":
		return mcpLogin(ctx, s, cfgs[0], io)
	case "logout":
		return mcpLogout(ctx, s, cfgs[0], io)
	}
	m := newMCPManager(s, cfgs)
	defer m.Close()
	m.Start()
	if err := m.Wait(ctx); err != nil {
		return err
	}
	if sub == "get" {
		st, _ := m.Status(pos[0])
		printServer(io, st, m.LogPath(st.Name))
		return nil
	}
	if len(cfgs) == 0 {
		if problems > 0 {
			fmt.Fprintln(io.out, "no usable MCP servers: see the problems above")
		} else {
			fmt.Fprintln(io.out, "no MCP servers configured ([[plugins]] in reasonix.toml, .mcp.json, or ~/.claude.json)")
		}
		return nil
	}
	tw := tabwriter.NewWriter(io.out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tTYPE\tTOOLS\tPROMPTS\tRESOURCES\tSOURCE")
	for _, st := range m.Statuses() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", st.Name, st.State, st.Type, len(st.Tools), len(st.Prompts), len(st.Resources), st.Source)
	}
	_ = tw.Flush()
	for _, st := range m.Statuses() {
		switch {
		case st.Err != "":
			fmt.Fprintf(io.err, "%s: %s\n", st.Name, st.Err)
		case st.State == mcp.StateUntrusted:
			fmt.Fprintf(io.err, "%s: defined by %s; not started until trusted (answer its question in `reasonix`, or add --mcp-trust to start it for one command)\n", st.Name, st.Source)
		}
	}
	return nil
}

// mcpLogin is `reasonix mcp login NAME`: it connects to the remote server
// with a fresh OAuth sign-in (the browser opens the authorization server's
// page; a loopback listener takes the answer) and keeps the grant in the
// credential store, where later runs find and refresh it.
func mcpLogin(ctx context.Context, s mcpSetup, c mcp.Config, io stdio) error {
	switch {
	case c.Type != mcp.TypeHTTP && c.Type != mcp.TypeSSE:
		return usagef("MCP server %s runs as a local command (stdio): it has no OAuth sign-in; give it its credentials in its env", c.Name)
	case c.Disabled:
		return usagef("MCP server %s is disabled; enable it first", c.Name)
	case c.NeedsTrust:
		return usagef("MCP server %s is defined by %s and not trusted yet: allow it in `reasonix`, or add --mcp-trust", c.Name, c.Source)
	}
	var opened sync.WaitGroup
	opts := mcpOptions(s)
	opts.Relogin = true
	opts.SignIn = browserSignIn(ctx, &opened, func(m string) { fmt.Fprintln(io.out, m) },
		func(m string) { fmt.Fprintln(io.err, "reasonix: "+m) })
	m := mcp.New([]mcp.Config{c}, opts)
	defer func() {
		m.Close()
		waitBriefly(&opened, 2*time.Second)
	}()
	m.Start()
	if err := m.Wait(ctx); err != nil {
		return err
	}
	st, _ := m.Status(c.Name)
	switch {
	case st.State == mcp.StateRunning && st.SignedIn:
		fmt.Fprintf(io.out, "Signed in to %s (%d tools); the sign-in is kept in %s and refreshed when it expires.\n", c.Name, len(st.Tools), tokenStore(s.loaded).Where())
		return nil
	case st.State == mcp.StateRunning:
		fmt.Fprintf(io.out, "MCP server %s did not ask for a sign-in (%d tools); nothing was kept.\n", c.Name, len(st.Tools))
		return nil
	}
	return fmt.Errorf("MCP server %s: %s\n(a server that takes a token instead of a sign-in is given it in its headers: \"Authorization\": \"Bearer ${TOKEN}\")", c.Name, st.Err)
}

// browserSignIn is the SignIn of a front end with a terminal: it says
// where to sign in (say) and opens the address in the browser; the
// browser's opener runs on, counted by opened, so the caller can wait a
// moment for it before exiting. The browser outlives the command, so it
// is not tied to ctx.
func browserSignIn(ctx context.Context, opened *sync.WaitGroup, say func(string), warn func(string)) func(server, url string) {
	return func(server, url string) {
		say(fmt.Sprintf("Sign in to %s in the browser. If it does not open, visit:\n  %s", server, url))
		opened.Go(func() {
			if err := openBrowser(context.WithoutCancel(ctx), url); err != nil {
				warn(fmt.Sprintf("could not open a browser (%v); open the address above", err))
			}
		})
	}
}

// waitBriefly waits for wg, at most d: an opener normally returns at
// once, one that runs the browser itself is not waited for.
func waitBriefly(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// mcpLogout is `reasonix mcp logout NAME`: it revokes the server's kept
// sign-in at its authorization server where that one offers revocation,
// forgets it either way, and says which happened.
func mcpLogout(ctx context.Context, s mcpSetup, c mcp.Config, io stdio) error {
	out, err := mcp.SignOut(ctx, tokenStore(s.loaded), c)
	switch {
	case err != nil:
		return err
	case out.Revoked:
		fmt.Fprintf(io.out, "Signed out of %s: its sign-in was revoked at its authorization server and is forgotten.\n", c.Name)
	case out.Had:
		fmt.Fprintf(io.out, "Signed out of %s: its sign-in is forgotten here but was not revoked at its authorization server (%s).\n", c.Name, out.NotRevoked)
	default:
		fmt.Fprintf(io.out, "No sign-in to %s was kept.\n", c.Name)
	}
	return nil
}

func printServer(io stdio, st mcp.Status, logPath string) {
	fmt.Fprintf(io.out, "%s: %s (%s) %s\n", st.Name, st.State, st.Type, st.Target)
	if st.Source != "" {
		fmt.Fprintf(io.out, "  defined in %s\n", st.Source)
	}
	switch {
	case st.State == mcp.StateSignIn:
		fmt.Fprintf(io.out, "  %s\n", st.Err)
	case st.Err != "":
		fmt.Fprintf(io.out, "  error: %s\n", st.Err)
	}
	if st.SignedIn {
		fmt.Fprintf(io.out, "  signed in (OAuth; `reasonix mcp logout %s` forgets it)\n", st.Name)
	}
	if st.Type == mcp.TypeStdio && logPath != "" {
		fmt.Fprintf(io.out, "  stderr log: %s\n", logPath)
	}
	if st.State == mcp.StateUntrusted {
		fmt.Fprintln(io.out, "  not started: a person has not trusted this definition (answer its question in `reasonix`, or add --mcp-trust to start it for one command)")
	}
	if len(st.Tools) > 0 {
		fmt.Fprintf(io.out, "tools (%d):\n", len(st.Tools))
		for _, t := range st.Tools {
			ro := ""
			if t.ReadOnly {
				ro = " [read-only]"
			}
			fmt.Fprintf(io.out, "  %s%s  %s\n", t.Name, ro, firstLine(strings.TrimSpace(t.Description)))
		}
	}
	if len(st.Prompts) > 0 {
		fmt.Fprintf(io.out, "prompts (%d):\n", len(st.Prompts))
		for _, p := range st.Prompts {
			var args []string
			for _, a := range p.Arguments {
				if a.Required {
					args = append(args, a.Name)
				} else {
					args = append(args, "["+a.Name+"]")
				}
			}
			fmt.Fprintf(io.out, "  /%s %s  %s\n", p.Command, strings.Join(args, " "), firstLine(strings.TrimSpace(p.Description)))
		}
	}
	if len(st.Resources) > 0 {
		fmt.Fprintf(io.out, "resources (%d):\n", len(st.Resources))
		for _, r := range st.Resources {
			fmt.Fprintf(io.out, "  @%s:%s  %s\n", st.Name, r.URI, firstLine(strings.TrimSpace(r.Name)))
		}
	}
}

// mcpLines describes each server on one line for /mcp.
func mcpLines(m *mcp.Manager) []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, st := range m.Statuses() {
		line := fmt.Sprintf("%s  %s  %s  %d tools, %d prompts, %d resources", st.Name, st.State, st.Type, len(st.Tools), len(st.Prompts), len(st.Resources))
		switch {
		case st.Err != "":
			line += "  (" + st.Err + ")"
		case st.State == mcp.StateUntrusted:
			line += "  (from " + st.Source + "; not started until you allow it)"
		case st.SignedIn:
			line += "  (signed in)"
		}
		out = append(out, line)
	}
	return out
}
