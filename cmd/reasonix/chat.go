package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/tui"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/openai"
	"github.com/reasonix/reasonix/tools"
	"github.com/reasonix/reasonix/tools/mcp"
)

// cmdChat opens the interactive front end, with a PROMPT given as its
// first turn. It needs a terminal on both stdin and stdout: the TUI draws
// there and reads keys from it.
func cmdChat(ctx context.Context, args []string, io stdio) error {
	var f runFlags
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(io.err)
	f.sessionFlags(fs)
	fs.BoolVar(&f.hooksTrust, "hooks-trust", false, "run this project's hooks without asking")
	fs.BoolVar(&f.cont, "continue", false, "go on with the newest conversation of this project")
	fs.StringVar(&f.resume, "resume", "", "go on with the conversation with this id (or a unique prefix); without one, pick from a list")
	fs.BoolVar(&f.mcpTrust, "mcp-trust", false, "start the MCP servers of this project's .mcp.json without asking")
	// A bare --resume (Claude Code's -r) lists the conversations.
	typed := args
	args, f.pickResume = bareResume(args)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	// A prompt is the first turn, sent as if typed, as Claude Code's
	// claude -r ID "query" resumes that conversation with it.
	prompt := strings.Join(pos, " ")
	if prompt == "-" {
		return usagef("chat does not read its prompt from stdin (its stdin is the terminal); use reasonix run - in scripts")
	}
	if f.pickResume && (f.cont || f.resume != "") {
		return usagef("--continue and --resume are alternatives; give one")
	}
	if f.pickResume && prompt != "" {
		return usagef("a bare --resume opens the list of conversations; give the session id to send a prompt to it (reasonix -r ID PROMPT)")
	}
	if !isTerminal(io.in) || !isTerminal(io.out) {
		if prompt != "" {
			// A script that typed reasonix "a task" (or -c "a task")
			// meant the print mode: the same command with -p runs it.
			return usagef("the interactive mode needs a terminal on stdin and stdout; to run the prompt headless: reasonix -p %s", shellArgs(typed))
		}
		return usagef("chat needs a terminal on stdin and stdout; use reasonix run PROMPT in scripts")
	}
	loaded, wd, err := loadConfig(f.config)
	if err != nil {
		return err
	}
	// Trust comes first: a trusted project's providers may spare the
	// setup screen.
	if trusted, err := askProjectTrust(ctx, loaded, wd, io); err != nil {
		return err
	} else if trusted {
		// Loaded again, the settings now trusted apply.
		if loaded, _, err = loadConfig(f.config); err != nil {
			return err
		}
	}
	if err := firstRun(ctx, f, io, loaded); err != nil {
		return err
	}
	return runChat(ctx, f, io, prompt)
}

// askProjectTrust asks, before the session starts, whether the person
// trusts the project in wd when its reasonix.toml or Claude Code settings
// files make settings a project may only make once trusted (loaded.Held):
// each with its place and why.
// Trusting records it (config.TrustProject, as `reasonix trust` does) and
// reports true, so the caller loads the configuration again and they apply
// to this session; "Not now" leaves them held, with the usual notice. A
// headless run, acp and serve never ask: they only give the notice. Nor
// is a person asked when the trust file does not parse: the answer could
// not be recorded, and the session's notice names the file.
func askProjectTrust(ctx context.Context, loaded *config.Loaded, wd string, io stdio) (bool, error) {
	if len(loaded.Held) == 0 || loaded.TrustErr != nil {
		return false, nil
	}
	settings := make([]tui.TrustSetting, len(loaded.Held))
	for i, h := range loaded.Held {
		file := h.File
		if rel, err := filepath.Rel(wd, file); err == nil && filepath.IsLocal(rel) {
			file = rel
		}
		settings[i] = tui.TrustSetting{Place: fmt.Sprintf("%s:%d", file, h.Line), Key: h.Key, Why: h.Why}
	}
	lang, _ := loaded.Config.AnswerLanguage(loaded.Getenv)
	trust, err := tui.RunTrust(ctx, tui.TrustOptions{Language: lang, Folder: wd, Settings: settings})
	switch {
	case errors.Is(err, tui.ErrTrustCancelled):
		return false, context.Canceled
	case err != nil || !trust:
		return false, err
	}
	if _, err := config.TrustProjectAsShown(loaded.Home, wd, loaded.HeldDigest); err != nil {
		return false, usageError{err}
	}
	fmt.Fprintf(io.err, "reasonix: trusted %s; `reasonix trust --revoke` forgets it\n", wd)
	return true, nil
}

// firstRun opens the setup screen when no provider is usable, so a first
// `reasonix` in a terminal ends in a working config rather than an error:
// with no provider configured, the presets; with one whose key variable
// is unset (a new shell without the export), that provider alone, asking
// for its key. It does nothing otherwise.
func firstRun(ctx context.Context, f runFlags, io stdio, loaded *config.Loaded) error {
	pcfgs, err := loaded.Config.ProviderConfigs(keyEnv(loaded))
	if err != nil {
		return nil // a broken entry is reported by assemble, with its name
	}
	if len(pcfgs) > 0 {
		return askMissingKey(ctx, f, io, loaded, pcfgs)
	}
	var presets []tui.SetupPreset
	for _, p := range config.Presets() {
		presets = append(presets, tui.SetupPreset{Name: p.Name, Label: p.Label, BaseURL: p.BaseURL, KeyEnv: p.KeyEnv,
			KeyFound: p.KeyEnv != "" && os.Getenv(p.KeyEnv) != "", Model: p.Default, SignUp: p.SignUp})
	}
	path := filepath.Join(loaded.Home, config.UserFile)
	lang, _ := loaded.Config.AnswerLanguage(loaded.Getenv)
	var windows map[string]int // the tested server's, for Save
	_, saved, err := tui.RunSetup(ctx, tui.SetupOptions{
		Language: lang,
		Presets:  presets,
		Test: func(ctx context.Context, c tui.SetupChoice) ([]string, error) {
			pre, _ := config.FindPreset(c.Preset)
			key := c.Key
			if key == "" && pre.KeyEnv != "" {
				key = os.Getenv(pre.KeyEnv)
			}
			if key == "" && pre.KeyEnv != "" {
				return nil, nil // nothing to test with; the run will name the variable
			}
			ids, w, err := openai.ProbeWindows(ctx, c.BaseURL, key, c.Model)
			windows = w
			return ids, err
		},
		Save: func(c tui.SetupChoice) (string, error) {
			pre, _ := config.FindPreset(c.Preset)
			p := config.NewProvider{Name: pre.Name, BaseURL: c.BaseURL, KeyEnv: pre.KeyEnv, Key: c.Key,
				Models: []string{c.Model}, Default: c.Model, ContextWindow: pre.ContextWindow}
			if p.ContextWindow == 0 {
				p.ContextWindow = windows[c.Model] // a self-hosted server's, as it lists it
			}
			for _, m := range pre.Models {
				if m != c.Model {
					p.Models = append(p.Models, m)
				}
			}
			if p.Key != "" && p.KeyEnv != "" {
				// As `reasonix setup` does: a pasted key goes to the
				// credential store, which api_key_env lookups read.
				if _, err := credStore(loaded, loaded.Config.CredentialsStore).Set(p.KeyEnv, p.Key); err == nil {
					p.Key = ""
				}
			}
			return path, config.AddProvider(path, p, false)
		},
	})
	switch {
	case errors.Is(err, tui.ErrSetupCancelled):
		return usageError{fmt.Errorf("%s", config.NoProviderHelp(loaded.Home))}
	case err != nil:
		return err
	}
	fmt.Fprintf(io.err, "reasonix: wrote %s\n", saved)
	return nil
}

// askMissingKey opens the setup screen for the provider of the model the
// chat would use when that provider reads its key from a variable that is
// set nowhere (the environment, .env, the credential store). A key typed
// there is tested, then kept in the credential store under the variable's
// name; the config file is not touched. Leaving the screen leaves the
// error the run would have given.
func askMissingKey(ctx context.Context, f runFlags, io stdio, loaded *config.Loaded, pcfgs []providers.Config) error {
	def := loaded.Config.DefaultModel
	if f.model != "" {
		def = f.model
	}
	c, model, err := providers.Resolve(def, pcfgs, def)
	if err != nil || c.APIKey != "" || c.APIKeyEnv == "" {
		return nil // assemble reports a bad reference
	}
	preset := tui.SetupPreset{Name: c.Name, Label: c.Name + " · " + model, BaseURL: c.BaseURL,
		KeyEnv: c.APIKeyEnv, Model: model, KeyOnly: true}
	if pre, ok := config.FindPreset(c.Name); ok {
		preset.SignUp = pre.SignUp
	}
	store := credStore(loaded, loaded.Config.CredentialsStore)
	where := ""
	lang, _ := loaded.Config.AnswerLanguage(loaded.Getenv)
	_, _, err = tui.RunSetup(ctx, tui.SetupOptions{
		// The screen says the key of this one provider is missing.
		Language: lang,
		Presets:  []tui.SetupPreset{preset},
		Test: func(ctx context.Context, ch tui.SetupChoice) ([]string, error) {
			if ch.Key == "" {
				return nil, fmt.Errorf("paste the key, or quit and export %s", c.APIKeyEnv)
			}
			return openai.Probe(ctx, ch.BaseURL, ch.Key, ch.Model)
		},
		Save: func(ch tui.SetupChoice) (string, error) {
			w, err := store.Set(c.APIKeyEnv, ch.Key)
			if err != nil {
				return "", fmt.Errorf("could not keep the key: %w (export %s instead)", err, c.APIKeyEnv)
			}
			where = w
			return w, nil
		},
	})
	switch {
	case errors.Is(err, tui.ErrSetupCancelled):
		return usagef("provider %q needs an API key: set %s (api_key_env in the config)", c.Name, c.APIKeyEnv)
	case err != nil:
		return err
	}
	fmt.Fprintf(io.err, "reasonix: the key of %s is kept in %s as %s\n", c.Name, where, c.APIKeyEnv)
	return nil
}

// runChat runs the TUI; a non-empty first prompt is sent as if typed.
func runChat(ctx context.Context, f runFlags, io stdio, first string) error {
	// Events reach the UI through a hub it subscribes to; tool approvals
	// are events too, answered through the engine (one path for every
	// front end).
	hub := &events.Hub{}
	broker := permission.NewBroker(hub.Publish)
	defer broker.Close("the interface was closed")
	hist := &lateHistory{}
	// The hooks are known once assembled; /hooks is only typed later.
	var hookLines []string
	var servers *mcp.Manager // set once assembled, before the UI runs
	var a *app               // likewise
	// /mcp login opens the browser; its openers are waited for, briefly,
	// when the UI ends.
	var opened sync.WaitGroup
	defer waitBriefly(&opened, 2*time.Second)
	say := func(m string) { hub.Publish(events.Event{Type: events.Notice, Text: m}) }
	ui := tui.New(tui.Options{Version: version, EditPlan: editPlanInTerminal, History: hist, Prompt: first, PickResume: f.pickResume,
		Hooks: func() []string { return hookLines },
		MCP:   func() []string { return mcpLines(servers) },
		MCPSignIn: func(name string) error {
			if servers == nil {
				return fmt.Errorf("no MCP server named %q", name)
			}
			return servers.SignIn(name, browserSignIn(ctx, &opened, say, say))
		},
		// An MCP server's address, once the person agreed to open it.
		OpenURL: func(u string) {
			opened.Go(func() {
				if err := openBrowser(context.WithoutCancel(ctx), u); err != nil {
					say(fmt.Sprintf("could not open a browser (%v); open the address yourself: %s", err, u))
				}
			})
		},
		Models:         func() []tui.ModelChoice { return a.providers.choices() },
		ProviderModels: func(ctx context.Context, name string) ([]string, error) { return a.providers.offered(ctx, name) },
		Posture:        func() string { return string(a.gate.Posture()) },
		SetPosture:     func(p string) error { return a.gate.SetPosture(permission.Mode(p)) },
	})
	var plans orchestrator.PlanApprover = ui.PlanApprover()
	if os.Getenv(planApprovalEnv) == "auto" {
		plans = nil
	}
	app, err := assemble(assembleOptions{flags: f, sink: hub, stderr: io.err, planApprover: plans, approver: broker, askMCPTrust: true,
		mcpSignInHint: func(name string) string {
			return "type `/mcp login " + name + "` (or run `reasonix mcp login " + name + "`)"
		},
		asker: tools.NewQuestions(hub.Publish), elicitor: broker})
	if err != nil {
		return err
	}
	defer app.Close()
	servers, a = app.mcp, app
	ui.SetTheme(app.loaded.Config.Theme)
	// The labels follow the answer language: language, $REASONIX_LANG,
	// else $LANG (zh_CN.UTF-8 gives Chinese labels).
	lang, _ := app.loaded.Config.AnswerLanguage(app.loaded.Getenv)
	ui.SetLanguage(lang)
	hist.set(app.history())
	for _, h := range app.hooks.Hooks() {
		scope := "user"
		if h.Project {
			scope = "project"
		}
		hookLines = append(hookLines, fmt.Sprintf("[%s] %s  (%s:%d)", scope, h.Describe(), h.Source, h.Line))
	}
	eng, err := orchestrator.NewEngine(app.coord, hub, broker)
	if err != nil {
		return err
	}
	if err := resumeEngine(app, eng, f); err != nil {
		eng.Close()
		return err
	}
	return ui.Run(ctx, eng)
}

// editPlanInTerminal edits a plan's JSON in $VISUAL or $EDITOR on the
// terminal the TUI has handed over.
func editPlanInTerminal(ctx context.Context, draft []byte) (orchestrator.Plan, []byte, error) {
	return orchestrator.EditPlan(ctx, draft, orchestrator.PlanEditor{
		Command: orchestrator.EditorCommand(os.Getenv),
		Stdin:   os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
	})
}

// resumeEngine makes the session --continue or --resume names the
// engine's conversation; without either it does nothing.
func resumeEngine(a *app, eng *orchestrator.Engine, f runFlags) error {
	path, err := resumePath(a, f.cont, f.resume)
	if err != nil || path == "" {
		return err
	}
	if err := eng.Resume(path, f.model); err != nil {
		return explainModified(usageError{fmt.Errorf("resume: %w", err)})
	}
	return nil
}
