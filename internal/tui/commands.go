package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rivo/uniseg"

	"github.com/reasonix/reasonix/commands"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers"
)

// helpText lists the commands and keys; skills are appended. Every line
// is something that works (TestHelpListsOnlyWorkingCommands checks the
// commands against submit).
const helpText = `[::b]commands[::-]
  /goal TEXT        keep working on TEXT over several turns until it is done
  /goal             the saved goal · /goal clear forgets it · /goal resume
  /plan TEXT        plan read-only first, then run the plan you approve
  /init [FOCUS[]     study the project and write AGENTS.md, its rules file
  /model [REF[]      pick the next request's model, or switch to provider/model
  /models           the configured models, and what each endpoint offers
  /effort [LEVEL[]   reasoning effort: low, medium, high or default
  /cost             tokens, cache hits and cost so far, per model
  /agents           the installed subagents and where each came from
  /skills           skills, custom commands and MCP prompts, with their source
  /new              start a new conversation (the current one stays saved)
  /clear            the same, after asking
  /resume           go on with an earlier conversation of this project
  /rewind           pick a turn: conversation and files go back to before it
  /rewind undo      undo the last rewind
  /compact [FOCUS[]  compact the context now · /context shows how full it is
  /hooks · /mcp     the loaded hooks · the MCP servers
  /mcp login NAME   sign in to a remote MCP server through the browser
  /jobs             the background jobs
  /help             this list
  /quit             leave (also /exit, Ctrl-D, or Ctrl-C twice)
  /NAME ARGS        a custom command or skill
  !CMD · @PATH      run a shell command · attach a file
[::b]keys[::-]
  Enter             send (queued while a turn runs); a paste is one input
  Ctrl-J, Alt-Enter a new line in the draft
  Esc, Ctrl-C       interrupt the running turn; Ctrl-C twice or Ctrl-D quits
  Shift-Tab         posture: ask → auto → yolo (yolo asks to confirm)
  / · @             the command menu · the file menu (↑/↓, Tab or Enter, Esc)
  Tab               complete a command or an @path
  Ctrl-T            expand or collapse blocks (reasoning, agents, diffs)
  Ctrl-O            the whole output of the recent tool calls
  PgUp/PgDn, wheel  scroll · End follows new output again
  ↑/↓               earlier prompts (on the first/last line) · Ctrl-R searches`

// submit handles one composer entry: a slash command or a chat turn.
// UI goroutine only.
func (a *App) submit(text string) { a.submitShown(text, text) }

// submitShown is submit with what the transcript shows of the prompt
// (large pastes as their placeholders).
func (a *App) submitShown(text, shown string) {
	a.endStream()
	a.followEnd() // a new request is read at the end
	if a.transcript.GetOriginalLineCount() > 1 {
		a.write("\n") // a blank line sets each request apart
	}
	a.line("[::b]›[::-] " + strings.ReplaceAll(escape(shown), "\n", "\n  "))
	if !strings.HasPrefix(text, "/") {
		a.chat(text)
		return
	}
	name, args, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	if i := strings.IndexByte(name, '\n'); i >= 0 {
		name, args = name[:i], name[i+1:]+" "+args
	}
	args = strings.TrimSpace(args)
	if !commands.ValidName(name) {
		a.chat(text) // "/usr/bin/env is missing" is a message, not a command
		return
	}
	switch name {
	case "quit", "exit":
		a.quit()
	case "help":
		a.help()
	case "model":
		a.modelCommand(args)
	case "models":
		a.modelsCommand()
	case "effort":
		a.effortCommand(args)
	case "cost":
		a.costCommand()
	case "agents":
		a.agentsCommand()
	case "skills":
		a.skillsCommand()
	case "hooks":
		a.listHooks()
	case "mcp":
		a.mcpCommand(args)
	case "jobs":
		a.listJobs()
	case "new":
		a.newConversation()
	case "clear":
		a.confirm(a.tr("Start a new conversation? The current one stays saved; /resume brings it back."), a.newConversation)
	case "resume":
		a.resumePicker()
	case "rewind":
		a.rewindCommand(args)
	case "compact":
		a.compactCommand(args)
	case "context":
		a.contextCommand()
	case "goal":
		a.goalCommand(args)
	case "init":
		// Expand renders it (a project's own /init wins there).
		a.startWork("/init", func(ctx context.Context) error {
			return a.eng.Send(ctx, strings.TrimSpace("/init "+args))
		})
	case "plan":
		if args == "" {
			a.note("usage: /plan TEXT")
			return
		}
		a.startWork("plan", func(ctx context.Context) error {
			return a.eng.Plan(ctx, args)
		})
	default:
		if a.command(name) {
			text := "/" + name
			if args != "" {
				text += " " + args
			}
			a.startWork("/"+name, func(ctx context.Context) error {
				return a.eng.Send(ctx, text)
			})
			return
		}
		a.line("[gray]" + escape(a.unknownCommand(name, a.eng.Commands())) + "[-]")
	}
}

// builtins are the TUI's own commands, for suggestions and the command
// menu, with what each does; noArgs reports those that run as they are.
var builtins = []struct{ name, desc string }{
	{"goal", "work on a goal over several turns"},
	{"plan", "plan read-only, then run the approved plan"},
	{"init", "write AGENTS.md for this project"},
	{"model", "switch the model of the next request"},
	{"models", "list the configured and offered models"},
	{"effort", "reasoning effort: low, medium, high"},
	{"cost", "tokens, cache hits and cost per model"},
	{"agents", "the installed subagents"},
	{"skills", "the installed skills and commands"},
	{"new", "start a new conversation"},
	{"clear", "start a new conversation, after asking"},
	{"resume", "go on with an earlier conversation"},
	{"rewind", "go back to before a turn"},
	{"compact", "compact the context now"},
	{"context", "how full the context is"},
	{"hooks", "the loaded hooks"},
	{"mcp", "the MCP servers"},
	{"jobs", "the background jobs"},
	{"help", "commands and keys"},
	{"quit", "leave"},
	{"exit", "leave"},
}

// noArgs reports the built-ins a menu's Enter runs at once.
func noArgs(name string) bool {
	switch name {
	case "model", "models", "effort", "cost", "agents", "skills", "new", "clear", "resume", "rewind",
		"context", "hooks", "mcp", "jobs", "help", "quit", "exit":
		return true
	}
	return false
}

// builtinNames are the built-ins' names.
func builtinNames() []string {
	out := make([]string, len(builtins))
	for i, b := range builtins {
		out[i] = b.name
	}
	return out
}

// unknownCommand says /name is unknown and names the closest commands.
func (a *App) unknownCommand(name string, cmds []events.Command) string {
	names := builtinNames()
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	msg := a.trf("unknown command /%s", name)
	if near := commands.Near(name, names); len(near) > 0 {
		msg += a.trf("; did you mean /%s?", strings.Join(near, ", /"))
	}
	return msg + a.tr(" (/help lists the commands)")
}

// chat sends one turn to the conversation.
func (a *App) chat(text string) {
	a.startWork("chat", func(ctx context.Context) error {
		return a.eng.Send(ctx, text)
	})
}

func (a *App) help() {
	a.line(a.helpFor())
	var names []string
	for _, c := range a.eng.Commands() {
		names = append(names, "/"+c.Name)
	}
	if len(names) > 0 {
		a.line("[::b]" + a.tr("commands and skills") + "[::-]\n  " + escape(strings.Join(names, " ")))
	}
}

// mcpCommand is /mcp (the list) and /mcp login NAME.
func (a *App) mcpCommand(args string) {
	f := strings.Fields(args)
	switch {
	case len(f) == 0:
		a.listMCP()
	case f[0] == "login" && len(f) == 2 && a.opts.MCPSignIn != nil:
		if err := a.opts.MCPSignIn(f[1]); err != nil {
			a.errorLine(err.Error())
			return
		}
		a.notef("signing in to %s: finish it in the browser", f[1])
	default:
		a.note("usage: /mcp, or /mcp login NAME")
	}
}

// listMCP shows the MCP servers: state, tool, prompt and resource counts.
func (a *App) listMCP() {
	var lines []string
	if a.opts.MCP != nil {
		lines = a.opts.MCP()
	}
	if len(lines) == 0 {
		a.note("no MCP servers configured ([[plugins]] in reasonix.toml, or .mcp.json)")
		return
	}
	a.line("[::b]" + a.tr("MCP servers") + "[::-]\n  " + escape(strings.Join(lines, "\n  ")))
}

// listHooks shows the loaded hooks.
func (a *App) listHooks() {
	var lines []string
	if a.opts.Hooks != nil {
		lines = a.opts.Hooks()
	}
	if len(lines) == 0 {
		a.note("no hooks loaded (hooks come from [[hooks]] in reasonix.toml and .claude/settings*.json)")
		return
	}
	a.line("[::b]" + a.tr("hooks") + "[::-]\n  " + escape(strings.Join(lines, "\n  ")))
}

// clear starts a new conversation: a fresh executor session, so a fresh
// prefix and history.
func (a *App) newConversation() {
	if a.cancel != nil {
		a.note("still working; press Ctrl-C first")
		return
	}
	if err := a.eng.NewConversation(); err != nil {
		a.errorLine(err.Error())
		return
	}
	a.resetTranscript()
	a.note("new conversation")
}

// resetTranscript empties the transcript and what it remembers.
func (a *App) resetTranscript() {
	a.transcript.Clear()
	a.atLineStart = false
	a.resetBlocks()
	a.rs = newRenderState()
	a.usage = providers.Usage{}
	a.window = nil
	a.goal = nil
	a.todos = nil
	a.workers = map[string]bool{}
	a.costs = map[string]*modelCost{}
}

// resumePicker lists the project's conversations; Enter resumes one.
func (a *App) resumePicker() {
	if a.cancel != nil {
		a.note("still working; press Ctrl-C first")
		return
	}
	list, err := a.eng.Sessions()
	if err != nil {
		a.errorLine(err.Error())
		return
	}
	var items []pickItem
	for _, s := range list {
		title := s.Title
		if title == "" {
			title = a.tr("(no prompt yet)")
		}
		title = oneLine(title, 60)
		label := a.trf("%s  %d turn(s)  %s  %s", a.ago(s.Updated), s.Turns, shortID(s.ID), title)
		it := pickItem{label: label, value: s.Path}
		if strings.HasSuffix(label, title) {
			// The title last: a long one continues under itself.
			it.hang = uniseg.StringWidth(label) - uniseg.StringWidth(title)
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		a.note("no saved conversations in this project")
		return
	}
	a.pick(a.tr("resume a conversation"), items, func(path string) {
		err := a.eng.Resume(path, "")
		var mod *store.ModifiedError
		if errors.As(err, &mod) {
			a.askModified(path, mod)
			return
		}
		if err != nil {
			a.errorLine(err.Error())
			return
		}
		a.resumed()
	})
}

// resumed shows the conversation a resume made current.
func (a *App) resumed() {
	a.resetTranscript()
	if st, ok, err := a.eng.CurrentGoal(); err == nil && ok {
		a.goal = &st
	}
}

// askModified asks what to do with a conversation changed outside
// Reasonix (a command may write its file): nothing of it is sent as the
// person's unless they say the changes are theirs. Either way on is a
// new conversation; the file stays as it is.
func (a *App) askModified(path string, mod *store.ModifiedError) {
	a.errorLine(mod.Error())
	items := []pickItem{
		{label: a.trf("go on from what Reasonix wrote (before line %d), as a new conversation", mod.Line), value: "keep"},
		{label: a.tr("take it as it stands, the changes as mine, as a new conversation"), value: "accept"},
		{label: a.tr("leave it"), value: "leave"},
	}
	a.pick(a.tr("this conversation was changed outside Reasonix"), items, func(choice string) {
		if choice != "keep" && choice != "accept" {
			return
		}
		rep, err := a.eng.ResumeFork(path, choice == "accept")
		if err != nil {
			a.errorLine(err.Error())
			return
		}
		a.resumed()
		for _, n := range rep.Notices {
			a.note(n)
		}
		a.notef("forked %s into %s", rep.From, rep.ID)
	})
}

// goalCommand is /goal, /goal clear and /goal TEXT.
func (a *App) goalCommand(args string) {
	switch args {
	case "":
		st, ok, err := a.eng.CurrentGoal()
		switch {
		case err != nil:
			a.errorLine(err.Error())
		case !ok:
			a.note("no goal; /goal TEXT sets one")
		default:
			a.goal = &st
			a.line(a.goalSummary(st))
		}
	case "clear":
		if a.goalBusy {
			a.note("a goal is running; press Ctrl-C first")
			return
		}
		if err := a.eng.ClearGoal(); err != nil {
			a.errorLine(err.Error())
			return
		}
		a.goal = nil
		a.note("goal cleared")
	default:
		if a.cancel != nil {
			a.notef("still working on %s; wait, or press Ctrl-C to cancel it", a.tr(a.workLabel))
			return
		}
		a.goalBusy = true
		if args != "resume" {
			a.goal = &events.GoalState{Goal: args, Status: events.GoalActive}
		}
		// The goal's saved states arrive as GoalUpdate events.
		a.startWork("goal", func(ctx context.Context) error {
			err := a.eng.Goal(ctx, args)
			a.post(func() { a.goalBusy = false })
			return err
		})
	}
}

// goalSummary describes a saved goal.
func (a *App) goalSummary(st events.GoalState) string {
	var b strings.Builder
	b.WriteString(a.trf("[::b]goal[::-] %s\n  status %s after %d of at most %d turns", escape(st.Goal), st.Status, st.Turns, st.MaxTurns))
	if st.Reason != "" {
		b.WriteString(a.trf(" (%s)", escape(st.Reason)))
	}
	if st.Last != nil {
		b.WriteString(a.trf("\n  last report: %s: %s", escape(st.Last.Status), escape(oneLine(st.Last.Summary, 200))))
	}
	return b.String()
}

// command reports whether the engine runs /name (a skill).
func (a *App) command(name string) bool {
	for _, c := range a.eng.Commands() {
		if c.Name == name {
			return true
		}
	}
	return false
}

// rewindCommand is /rewind (a turn picker) and /rewind undo.
func (a *App) rewindCommand(args string) {
	if a.cancel != nil {
		a.note("still working; press Ctrl-C first")
		return
	}
	if args == "undo" {
		a.rewind(0, true)
		return
	}
	turns := a.eng.Turns()
	if len(turns) == 0 {
		a.note("nothing to rewind: this conversation has no turns yet")
		return
	}
	var items []pickItem
	for i := len(turns) - 1; i >= 0; i-- {
		num := fmt.Sprintf("%2d  ", i+1)
		items = append(items, pickItem{label: num + oneLine(turns[i], 90), value: fmt.Sprint(i + 1), hang: len(num)})
	}
	a.pick(a.tr("rewind to just before"), items, func(v string) {
		var to int
		fmt.Sscan(v, &to)
		a.rewind(to, false)
		if to >= 1 && to <= len(turns) && a.composer.GetText() == "" {
			// The rewound prompt comes back to the composer, to edit and resend.
			a.composer.SetText(turns[to-1], true)
		}
	})
}

// rewind runs a rewind and shows what it did in the reloaded transcript.
func (a *App) rewind(to int, undo bool) {
	res, err := a.eng.Rewind(a.ctx, to, undo)
	if res.Session != "" {
		a.resetTranscript() // the reloaded history arrives next
		if st, ok, gerr := a.eng.CurrentGoal(); gerr == nil && ok {
			a.goal = &st
		}
		a.post(func() { a.rewindReport(res) })
	}
	if err != nil {
		a.post(func() { a.errorLine(err.Error()) })
	}
}

func (a *App) rewindReport(res events.RewindResult) {
	switch {
	case res.Undone:
		a.notef("undid the rewind to turn %d", res.To)
	default:
		a.notef("rewound to just before turn %d of %d (/rewind undo reverts it)", res.To, res.Turns)
	}
	if res.NoChanges {
		a.note("no file changed since then")
	}
	for _, l := range []struct {
		what  string
		paths []string
	}{{a.tr("restored"), res.Restored}, {a.tr("created"), res.Created}, {a.tr("removed"), res.Removed}, {a.tr("kept (ignored or too large)"), res.Kept}} {
		for _, p := range l.paths {
			a.line("  [gray]" + l.what + "[-] " + escape(p))
		}
	}
}

// windowEngine is what an engine offers for /compact and /context
// (orchestrator.Engine does); an engine without it has no window to show.
type windowEngine interface {
	Compact(ctx context.Context, focus string) error
	Context() events.ContextInfo
}

// compactCommand is /compact [focus]: the compaction arrives as a
// Compacted event.
func (a *App) compactCommand(focus string) {
	we, ok := a.eng.(windowEngine)
	if !ok {
		a.note("this front end's engine cannot compact")
		return
	}
	if a.cancel != nil {
		a.notef("still working on %s; wait, or press Ctrl-C to cancel it", a.tr(a.workLabel))
		return
	}
	a.startWork("compact", func(ctx context.Context) error { return we.Compact(ctx, focus) })
}

// contextCommand is /context: used / limit / percent and the parts.
func (a *App) contextCommand() {
	we, ok := a.eng.(windowEngine)
	if !ok {
		a.note("this front end's engine reports no context window")
		return
	}
	info := we.Context()
	a.window = &info
	a.line(a.contextText(info))
}

// contextText shows a window's fill and its parts.
func (a *App) contextText(info events.ContextInfo) string {
	var b strings.Builder
	if info.Limit > 0 {
		b.WriteString(a.trf("[::b]context[::-] %s of %s tokens (%d%%)", count(info.Used), count(info.Limit), info.Percent))
	} else {
		b.WriteString(a.trf("[::b]context[::-] %s tokens; the window is unknown (context_window = 0), so nothing compacts on its own; /compact still folds", count(info.Used)))
	}
	for _, p := range info.Parts {
		fmt.Fprintf(&b, "\n  %-8s ~%s", p.Name, count(p.Tokens))
	}
	if len(info.Parts) > 0 {
		b.WriteString("\n  [gray]" + a.tr("(parts are estimates; /compact folds the history)") + "[-]")
	}
	return b.String()
}

// validationLine is one validation run in the transcript.
func (a *App) validationLine(v *events.ValidationRun) string {
	if v.Passed {
		return a.trf("[green]validation passed[-] %s [gray](%d ms)[-]", escape(v.Command), v.Millis)
	}
	return a.trf("[red]validation failed[-] %s [gray](exit %d, attempt %d)[-]", escape(v.Command), v.ExitCode, v.Attempt)
}
