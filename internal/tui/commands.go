package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/rivo/tview"

	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/skills"
)

// helpText lists the commands and keys; skills are appended.
const helpText = `[::b]commands[::-]
  /goal TEXT    keep working on TEXT over several turns until it is done
  /goal         show the saved goal
  /goal clear   forget the saved goal
  /plan TEXT    plan read-only first, then run the plan once you approve it
  /clear        start a new conversation
  /help         this list
  /quit         leave (also Ctrl-D, or Ctrl-C twice)
  /NAME ARGS    run a skill
[::b]keys[::-]
  Enter sends · Ctrl-J or Alt-Enter newline · PgUp/PgDn scroll · Ctrl-C cancels the running turn`

// submit handles one composer entry: a slash command or a chat turn.
// UI goroutine only.
func (a *App) submit(text string) {
	a.endStream()
	if a.transcript.GetOriginalLineCount() > 1 {
		a.write("\n") // a blank line sets each request apart
	}
	a.line("[::b]›[::-] " + strings.ReplaceAll(tview.Escape(text), "\n", "\n  "))
	if !strings.HasPrefix(text, "/") {
		a.chat(text)
		return
	}
	name, args, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	if i := strings.IndexByte(name, '\n'); i >= 0 {
		name, args = name[:i], name[i+1:]+" "+args
	}
	args = strings.TrimSpace(args)
	switch name {
	case "quit", "exit":
		a.quit()
	case "help":
		a.help()
	case "clear":
		a.clear()
	case "goal":
		a.goalCommand(args)
	case "plan":
		if args == "" {
			a.note("usage: /plan TEXT")
			return
		}
		a.startWork("plan", func(ctx context.Context) error {
			_, err := a.be.Coordinator.PlanThenExecute(ctx, args)
			return err
		})
	default:
		if s, ok := a.skill(name); ok {
			a.runSkill(s, args)
			return
		}
		a.note(fmt.Sprintf("unknown command /%s; /help lists the commands", name))
	}
}

// chat sends one turn to the conversation.
func (a *App) chat(text string) {
	conv := a.be.Conversation
	a.startWork("chat", func(ctx context.Context) error {
		_, err := conv.Send(ctx, text)
		return err
	})
}

func (a *App) help() {
	a.line(helpText)
	if a.be.Skills == nil {
		return
	}
	var names []string
	for _, s := range a.be.Skills.List() {
		names = append(names, "/"+s.Name)
	}
	if len(names) > 0 {
		a.line("[::b]skills[::-]\n  " + tview.Escape(strings.Join(names, " ")))
	}
}

// clear starts a new conversation: a fresh executor session, so a fresh
// prefix and history.
func (a *App) clear() {
	if a.cancel != nil {
		a.note("still working; press Ctrl-C first")
		return
	}
	conv, err := a.be.Coordinator.Converse()
	if err != nil {
		a.line("[red]error:[-] " + tview.Escape(err.Error()))
		return
	}
	a.be.Conversation.Close()
	a.be.Conversation = conv
	a.transcript.Clear()
	a.rs = newRenderState()
	a.usage = providers.Usage{}
	a.note("new conversation")
}

// goalCommand is /goal, /goal clear and /goal TEXT.
func (a *App) goalCommand(args string) {
	switch args {
	case "":
		st, ok, err := a.be.Coordinator.CurrentGoal()
		switch {
		case err != nil:
			a.line("[red]error:[-] " + tview.Escape(err.Error()))
		case !ok:
			a.note("no goal; /goal TEXT sets one")
		default:
			a.goal = &st
			a.line(goalSummary(st))
		}
	case "clear":
		if a.goalBusy {
			a.note("a goal is running; press Ctrl-C first")
			return
		}
		if err := a.be.Coordinator.ClearGoal(); err != nil {
			a.line("[red]error:[-] " + tview.Escape(err.Error()))
			return
		}
		a.goal = nil
		a.note("goal cleared")
	default:
		conv := a.be.Conversation
		if a.cancel != nil {
			a.note("still working on " + a.workLabel + "; wait, or press Ctrl-C to cancel it")
			return
		}
		a.goalBusy = true
		a.goal = &orchestrator.GoalState{Goal: args, Status: orchestrator.GoalActive}
		a.startWork("goal", func(ctx context.Context) error {
			res, err := conv.Goal(ctx, args)
			a.post(func() {
				a.goalBusy = false
				st := res.GoalState
				if st.Goal != "" {
					a.goal = &st
				}
			})
			return err
		})
	}
}

// goalSummary describes a saved goal.
func goalSummary(st orchestrator.GoalState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[::b]goal[::-] %s\n  status %s after %d of at most %d turns", tview.Escape(st.Goal), st.Status, st.Turns, st.MaxTurns)
	if st.Reason != "" {
		fmt.Fprintf(&b, " (%s)", tview.Escape(st.Reason))
	}
	if st.Last != nil {
		fmt.Fprintf(&b, "\n  last report: %s: %s", tview.Escape(st.Last.Status), tview.Escape(oneLine(st.Last.Summary, 200)))
	}
	return b.String()
}

// skill looks up a discovered skill by name.
func (a *App) skill(name string) (skills.Skill, bool) {
	if a.be.Skills == nil {
		return skills.Skill{}, false
	}
	return a.be.Skills.Get(name)
}

// runSkill runs a skill: a runAs=subagent skill in its own session, an
// inline one as a turn of the conversation, so its instructions join the
// history like any other request.
func (a *App) runSkill(s skills.Skill, args string) {
	coord, conv := a.be.Coordinator, a.be.Conversation
	a.startWork("/"+s.Name, func(ctx context.Context) error {
		if s.RunAs == skills.RunSubagent {
			// Its session has no parent, so its answer streams like a
			// chat answer.
			_, err := coord.RunSkill(ctx, s.Name, args)
			return err
		}
		prompt, err := coord.SkillPrompt(s.Name, args)
		if err != nil {
			return err
		}
		_, err = conv.Send(ctx, prompt)
		return err
	})
}
