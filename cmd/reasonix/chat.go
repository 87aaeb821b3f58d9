package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/tui"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers/openai"
	"github.com/reasonix/reasonix/tools"
	"github.com/reasonix/reasonix/tools/mcp"
)

// cmdChat opens the interactive front end. It needs a terminal on both
// stdin and stdout: the TUI draws there and reads keys from it.
func cmdChat(ctx context.Context, args []string, io stdio) error {
	var f runFlags
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(io.err)
	f.sessionFlags(fs)
	fs.BoolVar(&f.hooksTrust, "hooks-trust", false, "run this project's hooks without asking")
	fs.BoolVar(&f.cont, "continue", false, "go on with the newest conversation of this project")
	fs.StringVar(&f.resume, "resume", "", "go on with the conversation with this id (or a unique prefix)")
	fs.BoolVar(&f.mcpTrust, "mcp-trust", false, "start the MCP servers of this project's .mcp.json without asking")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) > 0 {
		return usagef("chat takes no prompt; type it in the composer (or use reasonix run PROMPT)")
	}
	if !isTerminal(io.in) || !isTerminal(io.out) {
		return usagef("chat needs a terminal on stdin and stdout; use reasonix run PROMPT in scripts")
	}
	if err := firstRun(ctx, f, io); err != nil {
		return err
	}
	return runChat(ctx, f, io, "")
}

// firstRun opens the setup screen when no provider is configured, so a
// first `reasonix` in a terminal ends in a working config rather than an
// error; it does nothing otherwise.
func firstRun(ctx context.Context, f runFlags, io stdio) error {
	loaded, _, err := loadConfig(f.config)
	if err != nil {
		return err
	}
	if pcfgs, err := loaded.Config.ProviderConfigs(os.Getenv); err != nil || len(pcfgs) > 0 {
		return nil // a broken entry is reported by assemble, with its name
	}
	var presets []tui.SetupPreset
	for _, p := range config.Presets() {
		presets = append(presets, tui.SetupPreset{Name: p.Name, Label: p.Label, BaseURL: p.BaseURL, KeyEnv: p.KeyEnv,
			KeyFound: p.KeyEnv != "" && os.Getenv(p.KeyEnv) != "", Model: p.Default, SignUp: p.SignUp})
	}
	path := filepath.Join(loaded.Home, config.UserFile)
	_, saved, err := tui.RunSetup(ctx, tui.SetupOptions{
		Presets: presets,
		Test: func(ctx context.Context, c tui.SetupChoice) ([]string, error) {
			pre, _ := config.FindPreset(c.Preset)
			key := c.Key
			if key == "" && pre.KeyEnv != "" {
				key = os.Getenv(pre.KeyEnv)
			}
			if key == "" && pre.KeyEnv != "" {
				return nil, nil // nothing to test with; the run will name the variable
			}
			return openai.Probe(ctx, c.BaseURL, key, c.Model)
		},
		Save: func(c tui.SetupChoice) (string, error) {
			pre, _ := config.FindPreset(c.Preset)
			p := config.NewProvider{Name: pre.Name, BaseURL: c.BaseURL, KeyEnv: pre.KeyEnv, Key: c.Key,
				Models: []string{c.Model}, Default: c.Model, ContextWindow: pre.ContextWindow}
			for _, m := range pre.Models {
				if m != c.Model {
					p.Models = append(p.Models, m)
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
	ui := tui.New(tui.Options{Version: version, EditPlan: editPlanInTerminal, History: hist, Prompt: first,
		Hooks:          func() []string { return hookLines },
		MCP:            func() []string { return mcpLines(servers) },
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
		asker: tools.NewQuestions(hub.Publish)})
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
		return usageError{fmt.Errorf("resume: %w", err)}
	}
	return nil
}
