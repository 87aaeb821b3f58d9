package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers"
)

// runFlags are the flags of `run` and `plan`.
type runFlags struct {
	model, config, format, plan, goal string
	input, resume                     string
	cont                              bool
	maxSteps                          int
	execute, yolo, auto               bool
	// hooksTrust runs the project's hooks without asking (--hooks-trust).
	hooksTrust bool
	// mcpTrust starts the project's .mcp.json servers without asking.
	mcpTrust bool
	// acceptModified runs a saved plan changed outside Reasonix as it
	// stands (run --plan ID --accept-modified).
	acceptModified bool
	// pickResume opens the list of conversations to resume from (chat
	// with a bare --resume).
	pickResume bool
}

// sessionFlags registers the flags of every command that runs sessions:
// the model, the config file, the step limit and the posture.
func (f *runFlags) sessionFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "model", "", "model reference")
	fs.StringVar(&f.config, "config", "", "config file")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "tool-loop step limit")
	fs.BoolVar(&f.yolo, "yolo", false, "allow every non-dangerous action without asking")
	fs.BoolVar(&f.auto, "auto", false, "allow writes without asking; explicit ask rules still apply")
}

// parseInterleaved parses flags that may appear before or after the
// positional arguments (`reasonix run "fix it" --model x`).
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func cmdRun(ctx context.Context, args []string, io stdio, planOnly bool) error {
	var f runFlags
	name := "run"
	if planOnly {
		name = "plan"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.err)
	f.sessionFlags(fs)
	fs.StringVar(&f.format, "output-format", "text", "text, json or stream-json")
	if !planOnly {
		fs.StringVar(&f.input, "input-format", "text", "text, or stream-json: read turns and approval answers as JSON lines on stdin")
		fs.BoolVar(&f.cont, "continue", false, "add this turn to the newest session of this project")
		fs.StringVar(&f.resume, "resume", "", "add this turn to the session with this id (or a unique prefix)")
		fs.BoolVar(&f.acceptModified, "accept-modified", false, "with --plan: run a saved plan (and its progress) changed outside Reasonix as it stands, taking the changes as your own")
	}
	fs.StringVar(&f.plan, "plan", "", "saved plan id or file to execute")
	fs.StringVar(&f.goal, "goal", "", "goal to pursue until done")
	fs.BoolVar(&f.execute, "execute", false, "plan: execute the plan after printing it")
	fs.BoolVar(&f.hooksTrust, "hooks-trust", false, "run this project's hooks (reasonix.toml, .claude/settings*.json) without asking")
	fs.BoolVar(&f.mcpTrust, "mcp-trust", false, "start the MCP servers of this project's .mcp.json without asking")
	if planOnly && len(args) == 2 && args[0] == "show" {
		if ok, err := showPlan(args[1], io); ok {
			return err
		}
	}
	resumePlan := false
	if !planOnly {
		args, resumePlan = bareResume(args)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	switch f.format {
	case "text", "json", "stream-json":
	default:
		return usagef("--output-format must be text, json or stream-json, not %q", f.format)
	}
	prompt := strings.Join(pos, " ")
	switch f.input {
	case "", "text":
	case "stream-json":
		if f.format != "stream-json" {
			return usagef("--input-format stream-json needs --output-format stream-json")
		}
		if f.plan != "" || f.goal != "" {
			return usagef("--input-format stream-json takes turns on stdin; --plan and --goal are not supported with it")
		}
		if f.cont && f.resume != "" {
			return usagef("--continue and --resume are alternatives; give one")
		}
		if prompt == "-" {
			return usagef("--input-format stream-json reads stdin as JSON lines; give the first turn there or as PROMPT")
		}
		return runStreamInput(ctx, f, prompt, io)
	default:
		return usagef("--input-format must be text or stream-json, not %q", f.input)
	}
	if prompt == "-" {
		b, err := io2all(io.in)
		if err != nil {
			return usagef("read prompt from stdin: %v", err)
		}
		prompt = strings.TrimSpace(string(b))
		if prompt == "" && f.plan == "" && f.goal == "" {
			// The person did give "-": saying it needs one would be wrong.
			return usagef("%s -: stdin was empty; nothing to do (pipe the prompt in: echo TASK | reasonix %s -)", name, name)
		}
	}
	if prompt == "" && f.plan == "" && f.goal == "" {
		return usagef("%s needs a PROMPT (or - to read it from stdin)", name)
	}
	if f.acceptModified && f.plan == "" {
		return usagef("--accept-modified goes with --plan (for a session changed outside Reasonix: reasonix fork ID --accept-modified)")
	}
	if resumePlan && f.plan == "" {
		return usagef("--resume needs a session id, or --plan ID to resume a plan run")
	}
	resuming := f.cont || f.resume != ""
	if resuming && (f.plan != "" || (f.goal != "" && f.goal != "resume")) {
		return usagef("--continue and --resume add a turn to a session; they do not combine with --plan or a new --goal")
	}

	var sink events.Sink
	var closer interface{ Close() }
	var collector *jsonCollector
	switch f.format {
	case "text":
		r := newTextRenderer(io.out, io.err)
		r.showPlan = !planOnly || f.execute
		sink, closer = r, r
	case "stream-json":
		r := newStreamJSON(io.out)
		sink, closer = r, r
	case "json":
		collector = &jsonCollector{}
		sink, closer = collector, collector
	}

	approver, err := newPlanApprover(io.in, io.err, os.Getenv, f.format == "text")
	if err != nil {
		return err
	}
	if f.goal == "clear" {
		return clearGoal(f.config, io)
	}

	// A ! line runs a command without a model: no connection for it.
	preconnect := !strings.HasPrefix(strings.TrimSpace(prompt), "!")
	app, err := assemble(assembleOptions{flags: f, sink: sink, stderr: io.err, planApprover: approver, waitMCP: ctx, preconnect: preconnect})
	if err != nil {
		return err
	}
	defer app.Close()
	// The prompt joins the history once the run is over (it ran, failed or
	// was interrupted), so its disk work is not on the way to the first
	// request; with the rest of the exit's disk work, at once.
	if h := historyText(f, prompt, planOnly); h != "" {
		app.atExit = append(app.atExit, func() { rememberPrompt(app.history(), h, sink.Publish) })
	}

	var res orchestrator.Result
	var runErr error
	var plan *orchestrator.Plan
	var goal *orchestrator.GoalResult
	var shell *orchestrator.ShellRun
	switch {
	case planOnly && !f.execute:
		var p orchestrator.Plan
		var id string
		p, id, res, runErr = app.coord.Plan(ctx, prompt)
		if runErr == nil {
			plan, res.PlanID = &p, id
		}
	case planOnly:
		res, runErr = app.coord.PlanThenExecute(ctx, prompt)
		plan = res.Plan
	case f.plan != "":
		res, runErr = app.coord.ExecuteSaved(ctx, f.plan, orchestrator.SavedRun{Resume: resumePlan, AcceptModified: f.acceptModified})
		runErr = explainPlanModified(runErr, f.plan, resumePlan)
		plan = res.Plan
	case f.goal == "resume" && resuming:
		var cv *orchestrator.Conversation
		if cv, runErr = openResumed(app, f); runErr == nil {
			var g orchestrator.GoalResult
			g, runErr = cv.ResumeGoal(ctx)
			cv.Close()
			goal = &g
			res = orchestrator.Result{SessionID: g.SessionID, Text: g.Text, Stop: g.Status, Steps: g.Turns, Usage: g.Usage, Total: g.Total}
		}
	case f.goal == "resume":
		var g orchestrator.GoalResult
		g, runErr = app.coord.ResumeGoal(ctx)
		runErr = explainModified(runErr)
		goal = &g
		res = orchestrator.Result{SessionID: g.SessionID, Text: g.Text, Stop: g.Status, Steps: g.Turns, Usage: g.Usage, Total: g.Total}
	case f.goal != "":
		text := f.goal
		if prompt != "" {
			text += "\n\n" + prompt
		}
		var g orchestrator.GoalResult
		g, runErr = app.coord.Goal(ctx, text)
		goal = &g
		res = orchestrator.Result{SessionID: g.SessionID, Text: g.Text, Stop: g.Status, Steps: g.Turns, Usage: g.Usage, Total: g.Total}
	case resuming:
		var cv *orchestrator.Conversation
		if cv, runErr = openResumed(app, f); runErr == nil {
			var ent orchestrator.Entry
			if ent, runErr = app.coord.Expand(ctx, cv.ID(), prompt); runErr == nil {
				shell = ent.Shell
				switch {
				case ent.Shell != nil:
					// The next turn of this session, here or in a later
					// run, gets the command and its output.
					cv.Note(ent.Shell.Record())
				case ent.Subagent != "":
					res, runErr = app.coord.RunSkill(ctx, ent.Subagent, ent.Args)
				default:
					release := app.coord.PreApprove(cv.ID(), ent.Allow)
					model := ent.Model
					if f.model != "" {
						model = "" // --model wins over the command's choice
					}
					res, runErr = cv.SendOn(ctx, ent.Text, model, ent.Command)
					release()
				}
			}
			cv.Close()
		}
	default:
		// What a person types in the TUI works the same here: /command,
		// /skill, !shell and @references (orchestrator.Expand).
		var ent orchestrator.Entry
		if ent, runErr = app.coord.Expand(ctx, "", prompt); runErr == nil {
			shell = ent.Shell
			switch {
			case ent.Shell != nil:
			case ent.Subagent != "":
				res, runErr = app.coord.RunSkill(ctx, ent.Subagent, ent.Args)
			default:
				release := app.coord.PreApprove("", ent.Allow)
				model := ent.Model
				if f.model != "" {
					model = "" // --model wins over the command's choice
				}
				res, runErr = app.coord.RunOn(ctx, ent.Text, model, ent.Command)
				release()
				plan = res.Plan
			}
		}
	}
	closer.Close()
	var unknown *orchestrator.UnknownCommandError
	if errors.As(runErr, &unknown) {
		// Never sent to the model as text: the user mistyped a command.
		return usageError{runErr}
	}
	if shell != nil {
		return shellResult(*shell, f.format, io)
	}
	usage := res.Total
	if usage == (providers.Usage{}) {
		usage = res.Usage
	}

	switch f.format {
	case "json":
		calls := any(res.Calls)
		if res.Calls == nil {
			calls = []any{}
		}
		out := finalJSON{Answer: res.Text, Stop: res.Stop, Steps: res.Steps, Session: res.SessionID,
			Usage: newUsageJSON(usage), ToolCalls: calls, Notices: collector.notes, PlanID: res.PlanID}
		if usage.Currency != "" {
			cost := usage.Cost
			out.Cost, out.Currency = &cost, usage.Currency
		}
		if plan != nil {
			out.Plan = plan
		}
		if len(res.StepResults) > 0 {
			out.PlanSteps = res.StepResults
		}
		if goal != nil {
			out.Goal = &goal.GoalState
		}
		if runErr != nil {
			out.Error = runErr.Error()
			if out.Stop == "" {
				// Say how the run stopped, as the exit code does (exitCode),
				// so a program need not parse the error.
				out.Stop = "error"
				if ctx.Err() != nil || errors.Is(runErr, context.Canceled) {
					out.Stop, out.Error = "interrupted", "interrupted"
				}
			}
		}
		enc := json.NewEncoder(io.out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	case "text":
		if len(res.StepResults) > 0 {
			fmt.Fprintln(io.out, res.Text)
		}
		if planOnly && !f.execute && plan != nil {
			fmt.Fprint(io.out, plan.Markdown())
			fmt.Fprintf(io.err, "plan saved as %s; run it with: reasonix run --plan %s\n", res.PlanID, res.PlanID)
		}
		if goal != nil {
			fmt.Fprintf(io.err, "goal %s after %s", goal.Status, text.Plural(goal.Turns, "turn"))
			if goal.Last != nil && goal.Last.Summary != "" {
				fmt.Fprintf(io.err, ": %s", goal.Last.Summary)
			}
			fmt.Fprintln(io.err)
		}
		if runErr == nil && res.Stop == agents.StopMaxSteps {
			fmt.Fprintf(io.err, "reasonix: stopped at the step limit (%d); raise --max-steps or agent.max_steps to let it continue\n", res.Steps)
		}
		if usage.PromptTokens > 0 {
			fmt.Fprintln(io.err, usageLine(usage))
		}
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(runErr, events.ErrPlanRejected) {
			// Rejecting is the user's decision, not a failure (docs/SPEC.md).
			fmt.Fprintln(io.err, "plan rejected; nothing was changed")
			return nil
		}
		if errors.Is(runErr, orchestrator.ErrNoPlan) {
			// The planner's answers were whole; they held no plan.
			return runErr
		}
		if res.Text != "" && f.format == "text" {
			fmt.Fprintln(io.err, "reasonix: the answer above is partial")
		}
		var ue usageError
		if errors.As(runErr, &ue) {
			return runErr
		}
		return fmt.Errorf("run failed: %w", runErr)
	}
	if goal != nil && goal.Status != "done" {
		return fmt.Errorf("goal not reached: %s", goal.Status)
	}
	return nil
}

// bareResume takes a --resume without a value (the last argument, or
// followed by another flag) out of args: with --plan it resumes the
// plan's saved run.
func bareResume(args []string) ([]string, bool) {
	out := make([]string, 0, len(args))
	found := false
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...), found
		}
		if (a == "--resume" || a == "-resume") && (i == len(args)-1 || strings.HasPrefix(args[i+1], "-")) {
			found = true
			continue
		}
		out = append(out, a)
	}
	return out, found
}

// shellResult reports a ! line that ran without a model: its output on
// stdout (the stream-json renderer already carried it as tool events), an
// error when it was refused or failed.
func shellResult(r orchestrator.ShellRun, format string, io stdio) error {
	switch format {
	case "text":
		fmt.Fprint(io.out, r.Output)
		if r.Output != "" && !strings.HasSuffix(r.Output, "\n") {
			fmt.Fprintln(io.out)
		}
	case "json":
		enc := json.NewEncoder(io.out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		out := struct {
			Command string `json:"command"`
			Output  string `json:"output"`
			Refused string `json:"refused,omitempty"`
		}{r.Command, r.Output, r.Refused}
		_ = enc.Encode(out)
	}
	switch {
	case r.Refused != "":
		return fmt.Errorf("!%s was not run: %s", r.Command, r.Refused)
	case r.Failed:
		return fmt.Errorf("!%s failed", r.Command)
	}
	return nil
}

// historyText is the prompt history's entry for a run: the prompt, or
// what the TUI's composer would take for the same work ("/plan PROMPT",
// "/goal TEXT"), so Up in the TUI can run it again; "" for none.
func historyText(f runFlags, prompt string, planOnly bool) string {
	switch {
	case f.plan != "", f.goal == "resume":
		return ""
	case f.goal != "":
		text := "/goal " + f.goal
		if prompt != "" {
			text += "\n\n" + prompt
		}
		return text
	case planOnly && prompt != "":
		return "/plan " + prompt
	}
	return prompt
}

func io2all(r io.Reader) ([]byte, error) {
	if r == nil {
		r = os.Stdin
	}
	return io.ReadAll(r)
}

// clearGoal forgets the saved goal (`--goal clear`, the CLI's /goal
// clear): the goal of the newest session that has one. It needs no model,
// so it runs before providers are assembled.
func clearGoal(configFile string, io stdio) error {
	loaded, wd, err := loadConfig(configFile)
	if err != nil {
		return err
	}
	had, err := orchestrator.ClearSavedGoal(filepath.Join(workspaceOf(loaded, wd), ".reasonix"), loaded.Home)
	if err != nil {
		return explainModified(err)
	}
	if had {
		fmt.Fprintln(io.err, "goal cleared")
	} else {
		fmt.Fprintln(io.err, "no goal to clear")
	}
	return nil
}

// openResumed reopens the session --continue or --resume names.
func openResumed(a *app, f runFlags) (*orchestrator.Conversation, error) {
	path, err := resumePath(a, f.cont, f.resume)
	if err != nil {
		return nil, err
	}
	return resumeConversation(a, path, f.model)
}
