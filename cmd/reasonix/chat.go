package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/tui"
	"github.com/reasonix/reasonix/orchestrator"
)

// cmdChat opens the interactive front end. It needs a terminal on both
// stdin and stdout: the TUI draws there and reads keys from it.
func cmdChat(ctx context.Context, args []string, io stdio) error {
	var f runFlags
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.StringVar(&f.model, "model", "", "model reference")
	fs.StringVar(&f.config, "config", "", "config file")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "tool-loop step limit")
	fs.BoolVar(&f.yolo, "yolo", false, "allow every non-dangerous action without asking")
	fs.BoolVar(&f.auto, "auto", false, "allow writes without asking; explicit ask rules still apply")
	fs.BoolVar(&f.cont, "continue", false, "go on with the newest conversation of this project")
	fs.StringVar(&f.resume, "resume", "", "go on with the conversation with this id (or a unique prefix)")
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
	return runChat(ctx, f, io, "")
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
	ui := tui.New(tui.Options{Version: version, EditPlan: editPlanInTerminal, History: hist, Prompt: first})
	var plans orchestrator.PlanApprover = ui.PlanApprover()
	if os.Getenv(planApprovalEnv) == "auto" {
		plans = nil
	}
	app, err := assemble(assembleOptions{flags: f, sink: hub, stderr: io.err, planApprover: plans, approver: broker})
	if err != nil {
		return err
	}
	defer app.Close()
	hist.set(app.history())
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
