package main

import (
	"context"
	"embed"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/internal/permission"
)

// demoFiles are the sample project the demo works on and the script the
// built-in scripted provider replays: no key, no network.
//
//go:embed demo
var demoFiles embed.FS

// demoPrompt is the task the demo's scripted model carries out.
const demoPrompt = "The test fails. Find the bug and fix it."

// demoConfig is the demo's whole configuration: the scripted provider and
// one rule, so only the edit asks.
const demoConfig = `# The configuration reasonix demo runs with (see docs/CONFIG.md).
default_model = "demo"

[[providers]]
name = "demo"
kind = "scripted"
script = "script.json"
model = "scripted-demo"

[permissions]
mode = "ask"
allow = ["Bash(sh test.sh)"]
`

// cmdDemo runs a scripted session in a throwaway copy of a small sample
// project: the real TUI (or, with --headless, the real tool loop printing
// as `run` does), the real tools and gate, and the scripted provider in
// place of a model. It reads, plans, edits with an approval and runs the
// project's test.
func cmdDemo(ctx context.Context, args []string, io stdio) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.err)
	headless := fs.Bool("headless", false, "print the session instead of opening the TUI; the approval is answered yes")
	keep := fs.Bool("keep", false, "keep the sample project afterwards and print where it is")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("demo takes no arguments")
	}
	if !*headless && (!isTerminal(io.in) || !isTerminal(io.out)) {
		return usagef("demo needs a terminal; use reasonix demo --headless in scripts")
	}
	root, err := os.MkdirTemp("", "reasonix-demo-")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if *keep {
		defer fmt.Fprintf(io.err, "the demo project is in %s\n", filepath.Join(root, "greet"))
	} else {
		defer os.RemoveAll(root)
	}
	project, home := filepath.Join(root, "greet"), filepath.Join(root, "home")
	if err := unpackDemo(project, home); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	// The demo is its own world: its home (config, sessions, history) and
	// its project, whatever the user has configured.
	for _, kv := range [][2]string{{config.EnvHome, home}, {config.EnvConfig, ""}, {config.EnvBaseURL, ""}} {
		if err := os.Setenv(kv[0], kv[1]); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	if err := os.Chdir(project); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	f := runFlags{model: "demo"}
	if !*headless {
		return runChat(ctx, f, io, demoPrompt)
	}
	r := newTextRenderer(io.out, io.err)
	fmt.Fprintf(io.err, "demo: a scripted session in a copy of a sample project (%s); no model, no key, no network\n› %s\n", project, demoPrompt)
	app, err := assemble(assembleOptions{flags: f, sink: r, stderr: io.err, approver: demoApprover{io}})
	if err != nil {
		r.Close()
		return err
	}
	defer app.Close()
	res, err := app.coord.Run(ctx, demoPrompt)
	r.Close()
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	test, _ := os.ReadFile(filepath.Join(project, "greet.sh"))
	if !strings.Contains(string(test), "$name!") {
		return fmt.Errorf("demo: the fix is not in greet.sh (stop: %s)", res.Stop)
	}
	fmt.Fprintln(io.err, "demo: done. Connect a real model with: reasonix setup")
	return nil
}

// unpackDemo writes the sample project and the demo's home.
func unpackDemo(project, home string) error {
	err := fs.WalkDir(demoFiles, "demo/project", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(project, strings.TrimPrefix(p, "demo/project"))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := demoFiles.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	script, err := demoFiles.ReadFile("demo/script.json")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(home, "script.json"), script, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(home, config.UserFile), []byte(demoConfig), 0o600)
}

// demoApprover answers the headless demo's approvals yes, saying so, where
// a person would be asked.
type demoApprover struct{ io stdio }

func (d demoApprover) Approve(_ context.Context, req permission.Request) (permission.Reply, error) {
	fmt.Fprintf(d.io.err, "demo: %s %s needs approval; a person would be asked here (reasonix demo without --headless). Answering yes, once.\n", req.Tool, req.Subject)
	return permission.Reply{Answer: permission.AllowOnce}, nil
}
