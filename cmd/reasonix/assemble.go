package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/commands"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/internal/credentials"
	"github.com/reasonix/reasonix/internal/hooks"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/rules"
	"github.com/reasonix/reasonix/internal/runtmp"
	"github.com/reasonix/reasonix/internal/settings"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/skills"
	"github.com/reasonix/reasonix/tools"
	"github.com/reasonix/reasonix/tools/mcp"
	"github.com/reasonix/reasonix/tools/recall"

	// Built-in tools and provider kinds register themselves.
	_ "github.com/reasonix/reasonix/providers/openai"
	_ "github.com/reasonix/reasonix/providers/scripted"
	_ "github.com/reasonix/reasonix/tools/builtin"
)

type assembleOptions struct {
	flags  runFlags
	sink   events.Sink
	stderr io.Writer
	// planApprover asks a person before a fresh plan runs; nil approves
	// automatically.
	planApprover orchestrator.PlanApprover
	// approver asks a person about tool calls; nil is a headless run.
	approver permission.Approver
	// asker puts the ask tool's questions to a person; nil answers that
	// no one can.
	asker tools.Asker
	// elicitor puts MCP servers' requests for input to a person; nil
	// declines them, each with a notice saying why: noForms, or that no
	// one answers in this run.
	elicitor elicitor
	noForms  string
	// editor is an editor's view of the files (reasonix acp); nil reads
	// and writes the disk only.
	editor tools.Editor
	// waitMCP, when set, makes assembly wait (under this context) until
	// the trusted MCP servers have finished their handshakes, each within
	// its own timeout, so their tools are in the first request. The TUI
	// leaves it nil: its composer never waits for a server.
	waitMCP context.Context
	// askMCPTrust asks the approver whether each untrusted project
	// server may start (the interactive front ends, and stream-json
	// input, whose program answers for a person).
	askMCPTrust bool
	// mcpSignInHint says how this front end gives a remote MCP server
	// its sign-in (the TUI's /mcp login); nil names `reasonix mcp login`.
	mcpSignInHint func(server string) string
	// preconnect dials the default model's endpoint while the rest is
	// assembled: a run's first request follows at once, so the connect
	// is off its path. The interactive front ends leave it off (their
	// first request may come minutes later).
	preconnect bool
}

// app is one assembled process: config, providers, tools, gate, coordinator.
type app struct {
	settings  *settings.Set
	hooks     *hooks.Runner
	loaded    *config.Loaded
	workspace string
	coord     *orchestrator.Coordinator
	gate      *permission.Gate
	skills    *skills.Catalog
	mcp       *mcp.Manager
	// trustAsked is closed once the start-up trust questions of the
	// project's MCP servers are answered (nil when none is asked).
	trustAsked chan struct{}
	// providers are the configured providers (/model, /models).
	providers *providerSet
	closers   []func()
	// atExit is disk work for the end of a run that nothing else waits
	// for and that depends on nothing but the closers having run (the
	// run's TMPDIR and the stale ones' sweep, the project registry, the
	// prompt history, the sweep of temporary files killed runs left in
	// .reasonix): Close does it all at once, after the closers.
	atExit []func()
}

func (a *app) Close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	var wg sync.WaitGroup
	for _, f := range a.atExit {
		wg.Go(f)
	}
	wg.Wait()
}

// loadConfig loads the merged configuration for the current directory.
func loadConfig(file string) (*config.Loaded, string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", fmt.Errorf("working directory: %w", err)
	}
	l, err := config.Load(config.Options{Workspace: wd, File: file, Env: os.Getenv})
	if err != nil {
		return nil, "", usageError{err}
	}
	return l, wd, nil
}

// credStore is the credential store of kind under l's home. The working
// directory is read again rather than passed down: it is the one
// loadConfig read, and the store must not run a secret-tool found on
// PATH inside the workspace (internal/lookpath).
func credStore(l *config.Loaded, kind string) *credentials.Store {
	wd, err := os.Getwd()
	if err != nil {
		wd = ""
	}
	ws := ""
	if wd != "" {
		ws = workspaceOf(l, wd)
	}
	return credentials.Open(l.Home, kind, ws)
}

// keyEnv reads api_key_env variables: the environment, the working
// directory's .env, then the credential store.
func keyEnv(l *config.Loaded) func(string) string {
	get := l.Getenv
	if get == nil {
		get = os.Getenv
	}
	return credentials.Lookup(get, credStore(l, l.Config.CredentialsStore))
}

// providerSet resolves model references lazily and builds each provider
// once; nothing touches the network until a session streams.
type providerSet struct {
	mu    sync.Mutex
	cfgs  []providers.Config
	def   string
	built map[string]providers.Provider
}

func (p *providerSet) resolve(ref string) (providers.Provider, string, error) {
	c, model, err := providers.Resolve(ref, p.cfgs, p.def)
	if err != nil {
		return nil, "", usageError{err}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prov, ok := p.built[c.Name]; ok {
		return prov, model, nil
	}
	if c.APIKey == "" && c.APIKeyEnv != "" {
		return nil, "", usagef("provider %q needs an API key: set %s (api_key_env in the config)", c.Name, c.APIKeyEnv)
	}
	prov, err := providers.New(c)
	if err != nil {
		return nil, "", usageError{err}
	}
	p.built[c.Name] = prov
	return prov, model, nil
}

func assemble(o assembleOptions) (*app, error) {
	loaded, wd, err := loadConfig(o.flags.config)
	if err != nil {
		return nil, err
	}
	cfg := loaded.Config
	getenv := keyEnv(loaded)
	pcfgs, err := cfg.ProviderConfigs(getenv)
	if err != nil {
		return nil, usageError{err}
	}
	if len(pcfgs) == 0 {
		msg := config.NoProviderHelp(loaded.Home)
		if len(loaded.Held) > 0 {
			msg += "\n" + heldNotice(loaded.Held)
		}
		return nil, usageError{fmt.Errorf("%s", msg)}
	}
	// Said here, not before: without a provider the error says it.
	if len(loaded.Held) > 0 && o.sink != nil {
		if loaded.TrustErr != nil {
			o.sink.Publish(events.Event{Type: events.Notice, Text: trustFileNotice(loaded.TrustErr)})
		}
		o.sink.Publish(events.Event{Type: events.Notice, Text: heldNotice(loaded.Held)})
	}
	ps := &providerSet{cfgs: pcfgs, def: cfg.DefaultModel, built: map[string]providers.Provider{}}
	if o.flags.model != "" {
		ps.def = o.flags.model
	}
	// Fail fast on a bad model reference: it is a usage error, not a
	// provider failure halfway through a run.
	prov, _, err := ps.resolve("")
	if err != nil {
		return nil, err
	}
	// In a repository, git status for the environment block is the
	// longest part of the way to the first request: started now, git
	// runs while the rest is assembled (the rules goroutine takes it).
	gitStatus := rules.StartStatus(wd, 0)
	stopWarm := func() {}
	if pc, ok := prov.(interface {
		Preconnect(context.Context) func()
	}); ok && o.preconnect {
		stopWarm = pc.Preconnect(context.Background())
	}
	assembled := false
	var tmpDir *runtmp.Dir
	defer func() {
		if !assembled {
			gitStatus.Close()
			stopWarm() // no request will take the connection
			if tmpDir != nil {
				tmpDir.Remove()
			}
		}
	}()

	workspace := workspaceOf(loaded, wd)
	a := &app{loaded: loaded, workspace: workspace, providers: ps}
	a.closers = append(a.closers, stopWarm, gitStatus.Close)
	userHome := userHomeDir()
	// Claude Code settings files: a few small JSON reads.
	set, err := loadSettings(loaded, workspace, userHome)
	if err != nil {
		return nil, err
	}
	a.settings = set
	extraDirs := set.Directories(workspace, userHome)
	allowRead := append(slices.Clone(cfg.Sandbox.AllowRead), extraDirs...)
	allowWrite := append(slices.Clone(cfg.Sandbox.AllowWrite), extraDirs...)

	reg, err := runTools(cfg.Tools.Disabled, cfg.Tools.Enabled, workspace, loaded.Home)
	if err != nil {
		return nil, err
	}
	if err := preferShell(reg, cfg.Tools.Shell, loaded.Sources); err != nil {
		return nil, err
	}
	// A project with sessions joins the list a global history search
	// reads; done on the way out, off the path to the first request.
	a.atExit = append(a.atExit, func() {
		if _, err := os.Stat(filepath.Join(workspace, ".reasonix", "sessions")); err == nil {
			_ = recall.RegisterProject(loaded.Home, workspace)
		}
	})
	// A run killed between a session or plan file's temporary file and
	// its rename left the temporary file behind; later runs remove it,
	// on the way out like the registry, so start-up never pays.
	a.atExit = append(a.atExit, func() {
		state, now := filepath.Join(workspace, ".reasonix"), time.Now()
		for _, dir := range []string{"sessions", "plans", filepath.Join("plans", "runs")} {
			store.SweepTemps(filepath.Join(state, dir), now)
		}
	})

	env := tools.NewEnv(workspace)
	env.OutputLimit = cfg.Tools.OutputLimit
	env.BashTimeout = cfg.Tools.BashTimeout
	env.BashMaxTimeout = cfg.Tools.BashMaxTimeout
	if n := cfg.Tools.BashTimeoutSeconds; n != nil {
		env.BashTimeout, env.BashMaxTimeout = time.Duration(*n)*time.Second, time.Duration(*n)*time.Second
		if *n == 0 {
			env.BashTimeout, env.BashMaxTimeout = noTimeLimit, noTimeLimit
		}
	}
	env.Asker = o.asker
	env.Secrets = runSecrets(cfg, pcfgs, getenv)
	guard, err := permission.NewConfiner(workspace, allowRead, allowWrite, loaded.Home)
	if err != nil {
		return nil, usageError{err}
	}
	env.Guard = guard
	env.WriteRoots = append([]string{workspace}, allowWrite...)
	// A private temporary directory per run: bash gets it as TMPDIR and
	// the sandbox leaves the shared /tmp out. It is made for the first
	// command (runtmp.Dir), not now.
	tmpDir = runtmp.New("")
	runTmp := tmpDir.Path()
	denyRules := append(slices.Clone(cfg.Permissions.Deny), set.Rules("deny")...)
	sbOpts := permission.SandboxOptions{Mode: cfg.Sandbox.Bash, Workspace: workspace, AllowWrite: allowWrite,
		Network: cfg.Sandbox.Network, Home: loaded.Home, TempDir: runTmp}
	denyRead, denyExcept := sandboxDenyRead(sbOpts, userHome, cfg.Sandbox.DenyRead, denyRules)
	sbOpts.DenyRead, sbOpts.DenyReadExcept = denyRead, denyExcept
	guard.DenyRead(denyRead, denyExcept)
	// A workspace that holds part of the read deny list (a home
	// directory holds ~/.ssh): Landlock cannot deny a read inside a
	// writable tree, so those paths become Read deny rules, which the
	// gate and the file tools refuse and the sandbox hides (below).
	denyRules = append(denyRules, permission.InsideDenyRules(denyRead, denyExcept, workspace, guard.Workspace())...)
	a.atExit = append(a.atExit, func() {
		// Runs killed before this point left theirs behind; a run that
		// made its own sweeps them, at the end so start-up never pays.
		if tmpDir.Remove() {
			runtmp.Sweep("", time.Now())
		}
	})
	env.TempDir, env.MakeTempDir = runTmp, tmpDir.Make
	// The guard hands back symlink-free paths; the root must be the same
	// form or tools would show absolute paths and miss ignore files when
	// the workspace sits behind a symlink (/tmp on macOS).
	env.Root = guard.Workspace()

	sink := o.sink
	if sink == nil {
		sink = events.Discard
	}
	env.Shell = cfg.Tools.Shell.Path
	env.Editor = o.editor
	projectTrusted := projectTrust(loaded, workspace, func(msg string) { sink.Publish(events.Event{Type: events.Notice, Text: msg}) })
	sbOpts.Notify = func(msg string) { sink.Publish(events.Event{Type: events.Notice, Text: msg}) }
	// Read deny rules for paths inside the workspace: Landlock cannot
	// deny them, so commands start with those files hidden.
	mainHidden := permission.HiddenReads(denyRules, guard.Workspace())
	sbOpts.Hide = []*permission.Hidden{mainHidden}
	// A plan worker's worktree has its own list, which its sandbox and
	// the gate's questions about it share.
	workerHidden := hiddenByRoot{make: func(root string) *permission.Hidden { return permission.HiddenReads(denyRules, root) }}
	// Edit deny rules for paths inside the workspace: Landlock cannot
	// deny writing them either, so commands start with those files and
	// folders mounted read-only.
	mainProtected := permission.ProtectedWrites(denyRules, guard.Workspace())
	sbOpts.Protect = []*permission.Hidden{mainProtected}
	// An API key Reasonix read from the workspace's .env: commands start
	// with a copy of that file without the key's line.
	sbOpts.Redact = dotEnvKeys(loaded, pcfgs)
	// The D-Bus session bus leads to the Secret Service: commands that
	// may make unix sockets start with it hidden (the process's own
	// environment, not the project's .env, says where it is).
	sbOpts.Bus = permission.FindSessionBus(os.Getenv, os.Getuid())
	sbOpts.KeysOnBus = func() bool { return credStore(loaded, cfg.CredentialsStore).InOSStore() }
	if cfg.Sandbox.Bash != "off" {
		// What a command leaves running outside its process group ends
		// after it, and at the latest when Reasonix does (closers run
		// last to first: this one after the sessions and their jobs).
		sbOpts.Orphans = permission.NewOrphans(func(n int) {
			sink.Publish(events.Event{Type: events.Notice, Text: fmt.Sprintf("sandbox: ended %d process(es) a command left running outside its process group", n)})
		})
		a.closers = append(a.closers, sbOpts.Orphans.Close)
		if env.Editor != nil {
			env.Editor = quietEditor{ed: env.Editor, orphans: sbOpts.Orphans}
		}
		sb := permission.NewSandbox(sbOpts)
		env.Sandbox, env.PrepareSandbox = sb.Start, sb.Prepare
		// Private caches of projects not worked on for a month go, on
		// the way out so start-up never pays.
		a.atExit = append(a.atExit, func() { permission.SweepCaches(loaded.Home, time.Now()) })
	}

	// Permission gate, shared by every session of this run.
	mode := cfg.Permissions.Mode
	if m := set.Mode(); m != "" && loaded.Sources["permissions.mode"] == config.SourceDefault {
		// A Reasonix file that names a mode wins over a settings file; a
		// project's file loosens the posture only once it is trusted.
		if set.ProjectLoosens() && !projectTrusted() {
			sink.Publish(events.Event{Type: events.Notice, Text: "this project's .claude/settings.json asks for defaultMode " + m +
				", which a project may set only once you trust it; the run stays in the ask posture. Read it, then run `reasonix trust` in this folder"})
		} else {
			mode = m
		}
	}
	if o.flags.yolo {
		mode = "yolo"
	} else if o.flags.auto {
		mode = "auto"
	}
	// Claude Code settings rules join Reasonix's own; deny wins wherever
	// it was written.
	pol, err := permission.ParsePolicy(mode, append(slices.Clone(cfg.Permissions.Allow), set.Rules("allow")...),
		append(slices.Clone(cfg.Permissions.Ask), set.Rules("ask")...), denyRules, cfg.Permissions.Dangerous)
	if err != nil {
		return nil, usageError{err}
	}
	pol.TempDir = runTmp
	// Files grep finds by walking a folder were never before the gate.
	env.ReadDenied = func(abs string) bool {
		if _, ok := guard.ReadDenied(abs); ok {
			return true
		}
		_, ok := pol.ReadDenied(abs)
		return ok
	}
	// A recursive reader (grep -r .) need not ask about a .env the
	// sandbox hides from it; asked only when one meets a Read deny rule.
	pol.Hidden = func(ws string) []string {
		if cfg.Sandbox.Bash == "off" {
			return nil
		}
		if enforced, _, _ := permission.SandboxStatus(sbOpts); !enforced {
			return nil
		}
		if ok, _ := permission.HidingAvailable(); !ok {
			return nil
		}
		h := mainHidden
		if ws != guard.Workspace() {
			// A plan worker's worktree: its sandbox hides what the
			// rules match there (WorkspaceFor), as this walk finds it.
			h = workerHidden.get(ws)
		}
		if h == nil {
			return nil
		}
		return h.Paths()
	}
	var controlGuard *permission.ControlGuard // set below; the gate's rule saving tells it
	gate := permission.NewGate(permission.GateOptions{
		Policy:        pol,
		Approver:      o.approver,
		Workspace:     workspace,
		Home:          loaded.Home,
		ProjectConfig: filepath.Join(workspace, "reasonix.toml"),
		LogPath:       filepath.Join(loaded.Home, "permissions.log"),
		Publish:       sink.Publish,
		SaveRule: func(list, rule string) error {
			// An "always allow" answer is the person's rule: recorded as
			// theirs, so it applies without trusting the project.
			var err error
			if list == "allow" {
				err = config.AllowAlways(loaded.Home, workspace, rule)
			} else {
				err = config.AppendRule(filepath.Join(workspace, "reasonix.toml"), list, rule)
			}
			controlGuard.Accept(filepath.Join(guard.Workspace(), "reasonix.toml"))
			return err
		},
	})
	controlGuard = gate.ControlGuard()
	a.gate = gate
	a.closers = append(a.closers, func() { _ = gate.Close() })

	_, powerShell := powerShellNames(cfg.Tools.Shell.Prefer) // preferShell found it, or assembly stopped
	a.hooks = hookRunner(allHooks(cfg, set), workspace, loaded.Home, o.flags.hooksTrust, o.approver, env.Secrets, sink, mode, powerShell)

	// Roles and skills: a few directory reads, no file bodies.
	roleSet, notices := roles.Load(roles.LoadOptions{Workspace: workspace, Home: loaded.Home, UserHome: userHome,
		ProjectTrusted: projectTrusted})
	catalog, skillNotices := skills.Discover(skills.Options{Workspace: workspace, Home: loaded.Home, UserHome: userHome,
		Paths: cfg.Skills.Paths, Excluded: cfg.Skills.ExcludedPaths, Disabled: cfg.Skills.DisabledSkills})
	cmdCatalog, cmdNotices := commands.Discover(commands.Options{Workspace: workspace, Home: loaded.Home, UserHome: userHome})
	notices = append(notices, cmdNotices...)
	for _, n := range append(notices, skillNotices...) {
		sink.Publish(events.Event{Type: events.Notice, Text: n})
	}
	a.skills = catalog
	skillAllow := func(name string) bool {
		return pol.Decide(skills.ToolName, true, tools.Access{Kind: tools.KindDelegate, Skill: name}) != permission.Deny
	}

	// MCP servers start in the background now; sessions take a snapshot
	// of the tools of the servers that are up when they open.
	notify := func(msg string) { sink.Publish(events.Event{Type: events.Notice, Text: msg}) }
	ms := mcpSetup{loaded: loaded, workspace: workspace, userHome: userHome, trustAll: o.flags.mcpTrust, notify: notify,
		elicitor: o.elicitor, noForms: o.noForms, signInHint: o.mcpSignInHint, secrets: env.Secrets}
	if ms.elicitor == nil && ms.noForms == "" {
		ms.noForms = "no one answers in this run"
	}
	if mcfgs := mcpServers(ms); len(mcfgs) > 0 {
		a.mcp = newMCPManager(ms, mcfgs)
		a.closers = append(a.closers, a.mcp.Close)
		a.mcp.Start()
		if o.waitMCP != nil {
			if err := a.mcp.Wait(o.waitMCP); err != nil {
				a.Close()
				return nil, err
			}
			for _, c := range a.mcp.Untrusted() {
				if o.askMCPTrust && o.approver != nil {
					break // asked below instead
				}
				notify(fmt.Sprintf("MCP server %s (from %s) is not started: this project's servers run only once trusted; run `reasonix` to answer, or pass --mcp-trust", c.Name, c.Source))
			}
		}
		if o.askMCPTrust && o.approver != nil && len(a.mcp.Untrusted()) > 0 {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			a.trustAsked = done
			go func() {
				defer close(done)
				askTrust(ctx, a.mcp, o.approver, workspace, loaded.Home, sink.Publish)
			}()
			// Before the manager closes: the question is withdrawn first.
			a.closers = append(a.closers, func() { cancel(); <-done })
		}
	}

	maxSteps := stepLimit(cfg.Agent.MaxSteps)
	if o.flags.maxSteps > 0 {
		maxSteps = o.flags.maxSteps
	}
	// What the person's deny lists keep from the model, for the system
	// prompt file and the rules files alike.
	readDenied := rulesReadDenied(guard, gate.Policy())
	system, err := systemPrompt(cfg, loaded, readDenied)
	if err != nil {
		return nil, err
	}
	ropts := rulesOptions(loaded, workspace, wd, userHome)
	ropts.Denied = readDenied
	ropts.Status = gitStatus
	loadRules := a.startRules(ropts, sink)
	rulesText := sync.OnceValue(func() string { return loadRules().Text() })
	// The files the prefix holds, which no file tool's call attaches again.
	prefixFiles := func() []string { return loadRules().Files() }
	if extra := languageRules(cfg, os.Getenv); extra != "" {
		get := rulesText
		rulesText = func() string { return get() + extra }
	}
	a.coord = orchestrator.New(orchestrator.Runtime{
		Workspace: workspace,
		StateDir:  filepath.Join(workspace, ".reasonix"),
		Resolve:   ps.resolve,
		Tools:     reg,
		Env:       env,
		// nil when no server is configured: an interface holding a nil
		// manager would not be nil.
		Extensions: extensionsOf(a.mcp),
		Gate:       gate,
		// Control files are also guarded by what changes on disk.
		Guard:      controlGuard,
		Sink:       events.Serial(sink),
		Roles:      roleSet,
		Skills:     catalog,
		SkillAllow: skillAllow,
		Commands:   cmdCatalog,
		Prompts:    promptsOf(a.mcp),
		Rules:      rulesText,
		NestedRules: func(root string) agents.NestedRules {
			o := ropts
			if root == workspace || root == guard.Workspace() {
				return rules.NewNested(o, root, prefixFiles)
			}
			if g, err := guard.WithWorkspace(root); err == nil {
				// A plan worker's worktree: its imports are judged by the
				// rules as they read there.
				p := gate.Policy()
				p.Workspace = g.Workspace()
				o.Denied = rulesReadDenied(g, p)
			}
			return rules.NewNested(o, root, prefixFiles)
		},
		System:      system,
		Hooks:       a.hooks,
		Checkpoints: checkpointOpener(workspace, loaded.Home),
		Home:        loaded.Home,
		// A plan worker in its own worktree is confined there, with the
		// same extra roots, sandbox posture and control-file guard.
		WorkspaceFor: func(root string) (*tools.Env, agents.ChangeGuard, error) {
			g, err := guard.WithWorkspace(root)
			if err != nil {
				return nil, nil, err
			}
			wenv := env.Fork()
			wenv.Guard, wenv.Root = g, g.Workspace()
			if cfg.Sandbox.Bash != "off" {
				o := sbOpts
				o.Workspace, o.CacheFor = g.Workspace(), workspace
				// The rules' relative paths name files in this checkout;
				// the workspace's own stay hidden too.
				o.Hide = []*permission.Hidden{workerHidden.get(g.Workspace()), mainHidden}
				o.Protect = []*permission.Hidden{permission.ProtectedWrites(denyRules, g.Workspace()), mainProtected}
				sb := permission.NewSandbox(o)
				wenv.Sandbox, wenv.PrepareSandbox = sb.Start, sb.Prepare
			}
			cg := permission.NewControlGuard(g.Workspace(), loaded.Home)
			return wenv, cg, nil
		},
		// A person who approved a plan is not asked again about each of
		// its edits for a while; automatic approval opens no window.
		PlanApprover: o.planApprover,
		OnPlanApproved: func(p orchestrator.Plan) {
			gate.OpenWriteWindow(cfg.Agent.PlanWriteWindow, planFiles(p))
		},
		Settings: orchestrator.Settings{
			MaxSteps:        maxSteps,
			PlannerModel:    cfg.Agent.PlannerModel,
			PlannerMaxSteps: stepLimit(cfg.Agent.PlannerMaxSteps),
			SubagentModel:   cfg.Agent.SubagentModel,
			SubagentModels:  cfg.Agent.SubagentModels,
			MaxParallel:     cfg.Agent.MaxParallel,
			PlanIsolation:   cfg.Agent.PlanIsolation,
			GoalMaxTurns:    cfg.Agent.GoalMaxTurns,
			Temperature:     cfg.Agent.Temperature,
			CompactRatio:    compactRatio(cfg.Agent.CompactRatio),
			Validation: orchestrator.ValidationSettings{Enabled: cfg.Validation.Enabled, Command: cfg.Validation.Command,
				MaxAttempts: cfg.Validation.MaxAttempts},
			Budget: budgetOf(cfg.Agent.Budget),
		},
	})
	// A session's last sync is not waited for when it closes: it goes on
	// beside the rest of the exit's disk work, and the exit waits for it.
	a.atExit = append(a.atExit, a.coord.Wait)
	assembled = true
	return a, nil
}

// heldNotice says which settings of the project (its reasonix.toml and
// its Claude Code settings files' allow rules) wait for the person's
// trust, and how to give it.
func heldNotice(held []config.HeldKey) string {
	return fmt.Sprintf("this project sets %s, which a project may only do once you trust it "+
		"(another model endpoint, a weaker sandbox, a looser posture, calls run without asking); they are not applied. "+
		"Read the files, then run `reasonix trust` in this folder", config.HeldSummary(held))
}

// dotEnvKeys is what commands may not read of the workspace's .env: the
// lines of the API key variables Reasonix took from there (the
// environment's own are scrubbed from commands already), nil when none.
func dotEnvKeys(l *config.Loaded, pcfgs []providers.Config) []permission.Redaction {
	if l.DotEnv == "" {
		return nil
	}
	var names []string
	add := func(n string) {
		if n != "" && l.FromDotEnv(n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, p := range l.Config.Providers {
		add(p.APIKeyEnv)
	}
	for _, pc := range pcfgs {
		add(pc.APIKeyEnv)
	}
	if len(names) == 0 {
		return nil
	}
	return []permission.Redaction{{Path: l.DotEnv, Names: names}}
}

// extensionsOf adapts the MCP manager, nil when there is none.
func extensionsOf(m *mcp.Manager) orchestrator.Extensions {
	if m == nil {
		return nil
	}
	return mcpExtensions{m}
}

// promptsOf offers the MCP servers' prompts as commands, nil when there
// is no manager.
func promptsOf(m *mcp.Manager) commands.Prompts {
	if m == nil {
		return nil
	}
	return mcpExtensions{m}
}

// workspaceOf is the workspace root: [sandbox] workspace_root, relative to
// the start directory, or the start directory itself.
func workspaceOf(l *config.Loaded, wd string) string {
	root := l.Config.Sandbox.WorkspaceRoot
	switch {
	case root == "":
		return wd
	case filepath.IsAbs(root):
		return root
	default:
		return filepath.Join(wd, root)
	}
}

// runTools is the registry of built-in tools and the history and memory
// tools (which need the run's workspace and home), less the disabled
// ones and, when enabled is not empty, only those: what a run offers and
// `reasonix context` measures.
func runTools(disabled, enabled []string, workspace, home string) (*tools.Registry, error) {
	all := map[string]tools.Tool{}
	var names []string
	for _, n := range tools.BuiltinNames() {
		if t, ok := tools.Builtin(n); ok {
			all[n] = t
			names = append(names, n)
		}
	}
	for _, t := range recall.Tools(recall.Options{Workspace: workspace, Home: home}) {
		all[t.Name()] = t
		names = append(names, t.Name())
	}
	off := map[string]bool{}
	for _, n := range disabled {
		off[n] = true
	}
	on := map[string]bool{}
	for _, n := range enabled {
		if _, ok := all[n]; !ok {
			return nil, usagef("[tools] enabled: unknown tool %q (built-in tools: %s)", n, strings.Join(names, ", "))
		}
		on[n] = true
	}
	reg := tools.NewRegistry()
	for _, n := range names {
		if !off[n] && (len(on) == 0 || on[n]) {
			reg.Add(all[n])
		}
	}
	return reg, nil
}

// noLimit stands for "no limit" where a limit is a number: max_steps = 0,
// bash_timeout_seconds = 0.
const noLimit = 1 << 40

// noTimeLimit is bash_timeout_seconds = 0: about 146 years.
const noTimeLimit = time.Duration(1 << 62)

// stepLimit maps a configured step limit to the sessions': 0 is no limit.
func stepLimit(n int) int {
	if n == 0 {
		return noLimit
	}
	return n
}

// compactRatio is the configured [agent] compact_ratio, 0 (the default)
// when unset or outside (0, 1].
func compactRatio(r *float64) float64 {
	if r == nil || *r <= 0 || *r > 1 {
		return 0
	}
	return *r
}

// startRules begins reading the rules files (and the git status of the
// environment block) in the background, so that work overlaps the rest of
// start-up instead of standing before the first request; the first
// session waits for it. The app waits for it on Close.
func (a *app) startRules(opts rules.Options, sink events.Sink) func() *rules.Prefix {
	get := rulesOnce(opts, sink)
	done := make(chan struct{})
	go func() {
		defer close(done)
		get()
	}()
	a.closers = append(a.closers, func() { <-done })
	return get
}

// budgetOf is the configured [agent] budget, 0 (no limit) when unset.
func budgetOf(b *float64) float64 {
	if b == nil || *b < 0 {
		return 0
	}
	return *b
}

// hiddenByRoot keeps the HiddenReads of each plan worker's worktree, so
// the gate's question about a recursive reader there reads the list its
// sandbox keeps up to date instead of walking the worktree (and taking an
// inotify instance and descriptors until the collector runs) once per
// question. The lists are held weakly: each goes with the last sandbox
// that uses it.
type hiddenByRoot struct {
	make func(root string) *permission.Hidden
	mu   sync.Mutex
	m    map[string]weak.Pointer[permission.Hidden]
}

func (c *hiddenByRoot) get(root string) *permission.Hidden {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.m[root].Value(); h != nil {
		return h
	}
	h := c.make(root)
	if h != nil {
		if c.m == nil {
			c.m = map[string]weak.Pointer[permission.Hidden]{}
		}
		c.m[root] = weak.Make(h)
	}
	return h
}

// rulesReadDenied is what a repository's rules files may not import:
// what the file tools may not read (the read deny list, wherever the file
// is, and Read deny rules).
func rulesReadDenied(guard *permission.Confiner, pol permission.Policy) func(string) string {
	return func(p string) string {
		if d, ok := guard.ReadDenied(p); ok {
			return "the read deny list (" + d + ")"
		}
		out := pol.Explain("read_file", true, tools.Access{Kind: tools.KindRead, Reads: []string{p}})
		if out.Decision == permission.Deny {
			if out.Rule != "" {
				return "the rule " + out.Rule
			}
			return "the permission mode"
		}
		return ""
	}
}

// sandboxDenyRead is the read deny list of a run's sandbox and file tools:
// the credential stores, the Reasonix home and [sandbox] deny_read, plus
// the paths outside every writable tree that Read deny rules (Reasonix's
// and Claude Code settings') name outright, so a command cannot read them
// by a path the gate never sees (permission.ReadRuleDenies).
func sandboxDenyRead(opts permission.SandboxOptions, userHome string, configured, denyRules []string) (deny, except []string) {
	deny, except = permission.DenyReadPaths(userHome, opts.Home, configured)
	paths, _ := permission.ReadRuleDenies(denyRules, permission.WritablePaths(opts))
	for _, p := range paths {
		if !slices.Contains(deny, p) {
			deny = append(deny, p)
		}
	}
	return deny, except
}
