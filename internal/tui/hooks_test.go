package tui

import (
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/events"
)

// /hooks lists what the front end was given; a hook that blocks is shown
// in the transcript.
func TestHooksCommandAndBlockedHook(t *testing.T) {
	h := start(t, Options{Hooks: func() []string {
		return []string{"[project] PreToolUse [Bash]: ./check.sh  (.claude/settings.json:4)"}
	}})
	h.typeText("/hooks")
	h.key(tcell.KeyEnter)
	h.waitFor("PreToolUse [Bash]: ./check.sh")
	h.app.Publish(events.Event{Type: events.HookRun, Hook: &events.Hook{Event: "PreToolUse", Command: "./check.sh",
		Outcome: events.HookBlocked, Message: "curl is blocked here"}})
	h.waitFor("hook PreToolUse blocked:", "curl is blocked here")
}
