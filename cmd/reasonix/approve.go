package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"golang.org/x/term"

	"github.com/reasonix/reasonix/orchestrator"
)

// planApprovalEnv overrides terminal detection for plan approval: "prompt"
// always asks (the end-to-end tests drive the prompt through a pipe),
// "auto" never does (a script that happens to run in a terminal).
const planApprovalEnv = "REASONIX_PLAN_APPROVAL"

// newPlanApprover returns the approver asked before a fresh plan runs, or
// nil when plans are approved automatically: only a person at a terminal
// can answer, so a piped or redirected stdin means a headless run.
// planShown says the event renderer already prints every ready plan to out
// (the text format does), so the approver does not print it twice.
func newPlanApprover(in io.Reader, out io.Writer, getenv func(string) string, planShown bool) (orchestrator.PlanApprover, error) {
	switch v := getenv(planApprovalEnv); v {
	case "prompt":
	case "auto":
		return nil, nil
	case "":
		if !isTerminal(in) {
			return nil, nil
		}
	default:
		return nil, usagef("%s=%q: want prompt or auto", planApprovalEnv, v)
	}
	return &terminalPlanApprover{in: in, lines: bufio.NewReader(in), out: out, getenv: getenv, printPlan: !planShown}, nil
}

// isTerminal reports whether r (stdin or stdout) is a terminal. A
// character device is not enough: /dev/null is one too, and a run with
// stdin from /dev/null (cron, nohup, CI) has no one to ask.
func isTerminal(r any) bool {
	if u, ok := r.(interface{ Underlying() io.Writer }); ok {
		r = u.Underlying() // text.Printable
	}
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalPlanApprover shows a plan on stderr and reads the decision from
// stdin. Plans are approved one at a time, so it is not safe for
// concurrent use.
type terminalPlanApprover struct {
	in     io.Reader // raw stdin, handed to the editor
	lines  *bufio.Reader
	out    io.Writer
	getenv func(string) string
	// printPlan shows plans here because no renderer does.
	printPlan bool
	// pending is a line read still in flight after an interrupted prompt;
	// the next prompt takes it over instead of reading concurrently.
	pending chan lineResult
}

type lineResult struct {
	line string
	err  error
}

const planQuestion = "Execute this plan? [a]pprove / [e]dit / [r]eject: "

// Approve asks until it gets an answer: a, e (after a valid edit) or r.
func (t *terminalPlanApprover) Approve(ctx context.Context, p orchestrator.Plan) (orchestrator.Plan, orchestrator.PlanDecision, error) {
	if t.printPlan {
		fmt.Fprintf(t.out, "\n%s\n", p.Markdown())
	}
	var draft []byte // the last edit that did not validate, to fix in the editor
	for {
		fmt.Fprint(t.out, planQuestion)
		line, err := t.readLine(ctx)
		if err != nil {
			fmt.Fprintln(t.out)
			if errors.Is(err, io.EOF) {
				return p, orchestrator.PlanReject, errors.New("stdin closed before the plan was approved; nothing was run")
			}
			return p, orchestrator.PlanReject, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "a", "approve", "y", "yes":
			return p, orchestrator.PlanApprove, nil
		case "r", "reject", "n", "no":
			return p, orchestrator.PlanReject, nil
		case "e", "edit":
			if draft == nil {
				draft = p.JSON()
			}
			edited, text, err := t.edit(ctx, draft)
			switch {
			case ctx.Err() != nil:
				return p, orchestrator.PlanReject, ctx.Err()
			case err != nil:
				draft = text
				fmt.Fprintf(t.out, "%v\nThe proposed plan is unchanged; choose e to fix the edit.\n", err)
			case reflect.DeepEqual(edited, p):
				draft = nil
				fmt.Fprintln(t.out, "The plan was not changed.")
			default:
				if t.printPlan {
					fmt.Fprintf(t.out, "\n%s\n", edited.Markdown())
				}
				fmt.Fprintln(t.out, "Running the edited plan.")
				return edited, orchestrator.PlanEdit, nil
			}
		default:
			fmt.Fprintln(t.out, "Please answer a, e or r.")
		}
	}
}

// readLine reads one answer, giving up when ctx ends. A read the caller
// gave up on stays pending and serves the next call, so two reads never
// share the buffered reader.
func (t *terminalPlanApprover) readLine(ctx context.Context) (string, error) {
	if t.pending == nil {
		ch := make(chan lineResult, 1)
		go func() {
			s, err := t.lines.ReadString('\n')
			ch <- lineResult{s, err}
		}()
		t.pending = ch
	}
	select {
	case r := <-t.pending:
		t.pending = nil
		if r.err != nil && (r.err != io.EOF || strings.TrimSpace(r.line) == "") {
			return "", r.err
		}
		return r.line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// edit opens draft in the user's editor (orchestrator.EditPlan). The
// editor draws on out, where the prompt is, because stdout is reserved for
// the answer (`reasonix run ... > out.txt`); it gets stdin only when that
// is a real file.
func (t *terminalPlanApprover) edit(ctx context.Context, draft []byte) (orchestrator.Plan, []byte, error) {
	ed := orchestrator.PlanEditor{Command: orchestrator.EditorCommand(t.getenv), Stdout: t.out, Stderr: t.out}
	if in, ok := t.in.(*os.File); ok {
		ed.Stdin = in
	}
	return orchestrator.EditPlan(ctx, draft, ed)
}

// planFiles lists the files a plan's steps name, once each, for the write
// window; an empty list lets the window cover the whole workspace.
func planFiles(p orchestrator.Plan) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range p.Steps {
		for _, f := range s.Files {
			if f = strings.TrimSpace(f); f != "" && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}
