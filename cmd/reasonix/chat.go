package main

import (
	"context"
	"flag"
	"os"

	"github.com/reasonix/reasonix/internal/tui"
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
	ui := tui.New(tui.Options{Version: version})
	// The UI is the sink, the gate's approver and the plan approver, so it
	// exists before the coordinator it will drive.
	var plans = ui.PlanApprover()
	if os.Getenv(planApprovalEnv) == "auto" {
		plans = nil
	}
	app, err := assemble(assembleOptions{flags: f, sink: ui, stderr: io.err, planApprover: plans, approver: ui})
	if err != nil {
		return err
	}
	defer app.Close()
	conv, err := app.coord.Converse()
	if err != nil {
		return err
	}
	return ui.Run(ctx, tui.Backend{Coordinator: app.coord, Conversation: conv, Skills: app.skills})
}
