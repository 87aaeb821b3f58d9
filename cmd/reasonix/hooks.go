package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/internal/hooks"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/settings"
	"github.com/reasonix/reasonix/tools"
)

// allHooks are the hooks of the config layers and the settings files, in
// that order; a project's hooks are marked as needing trust.
func allHooks(cfg *config.Config, set *settings.Set) []hooks.Hook {
	var out []hooks.Hook
	for _, h := range cfg.Hooks {
		out = append(out, hooks.Hook{Event: h.Event, Matcher: h.Matcher, Command: h.Command,
			Timeout: time.Duration(h.Timeout) * time.Second, Source: h.Source, Line: h.Line, Project: h.Project})
	}
	return append(out, set.Hooks()...)
}

// hookRunner builds the run's hook runner. Project hooks run once trusted:
// remembered trust of this exact set, --hooks-trust, or a person's answer
// through the approver (the TUI, stream-json); a headless run without the
// flag skips them and says so.
func hookRunner(hs []hooks.Hook, workspace, home string, trustFlag bool, approver permission.Approver,
	secrets *tools.Secrets, sink events.Sink, mode string, powerShell bool) *hooks.Runner {
	trust := func(ctx context.Context, project []hooks.Hook) bool {
		if trustFlag {
			return true
		}
		ok, err := hooks.Trusted(home, workspace, project)
		if ok {
			return true
		}
		if err != nil {
			// Nothing recorded counts, and asking would record nothing.
			sink.Publish(events.Event{Type: events.Notice, Text: fmt.Sprintf(
				"%d project hook(s) not run: %s; --hooks-trust runs them for this run", len(project), trustFileNotice(err))})
			return false
		}
		if approver == nil {
			sink.Publish(events.Event{Type: events.Notice, Text: fmt.Sprintf(
				"%d project hook(s) not run: nobody has trusted this project's hooks; review them with `reasonix doctor`, then trust them in interactive mode or pass --hooks-trust", len(project))})
			return false
		}
		var lines []string
		for _, h := range project {
			lines = append(lines, fmt.Sprintf("%s:%d  %s", relTo(workspace, h.Source), h.Line, h.Describe()))
		}
		reply, err := approver.Approve(ctx, permission.Request{Tool: "hooks", Subject: "run this project's hooks",
			Command: strings.Join(lines, "\n"),
			Impact:  "These commands come with the project and run on your machine at events of every session.",
			Choices: []permission.Answer{permission.AllowOnce, permission.AllowAlways, permission.DenyAnswer}})
		if err != nil {
			return false
		}
		switch reply.Answer {
		case permission.AllowAlways:
			if err := hooks.RememberTrust(home, workspace, project); err != nil {
				sink.Publish(events.Event{Type: events.Notice, Text: err.Error()})
			}
			return true
		case permission.AllowOnce, permission.AllowSession:
			return true
		}
		return false
	}
	return hooks.New(hooks.Options{Hooks: hs, Workspace: workspace, Secrets: secrets, Publish: sink.Publish,
		Trust: trust, PermissionMode: mode, PowerShell: powerShell,
		Transcript: func(id string) string {
			return filepath.Join(workspace, ".reasonix", "sessions", id+".jsonl")
		}})
}

func relTo(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// loadSettings reads the Claude Code settings files of the workspace and
// the user; the project files' allow rules apply only as loaded says (once
// the project is trusted, or the person's own).
func loadSettings(loaded *config.Loaded, workspace, userHome string) (*settings.Set, error) {
	set, err := settings.Load(workspace, userHome)
	if err != nil {
		return nil, usageError{err}
	}
	set.HoldAllow(loaded.SettingsAllowApplies)
	return set, nil
}
