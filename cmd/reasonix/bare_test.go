package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCommandNamesAreDispatched keeps the names typos are matched
// against in step with dispatch: each one reaches its command (which
// then refuses the unknown flag) rather than the unknown-command answer.
func TestCommandNamesAreDispatched(t *testing.T) {
	for _, name := range commandNames() {
		var out, errb bytes.Buffer
		dispatch(context.Background(), []string{name, "--zz-no-such-flag"}, stdio{strings.NewReader(""), &out, &errb})
		if strings.Contains(errb.String(), "unknown command") {
			t.Errorf("%s is not a command dispatch knows: %s", name, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := dispatch(context.Background(), []string{"zzcmd"}, stdio{strings.NewReader(""), &out, &errb}); code != exitUsage ||
		!strings.Contains(errb.String(), `unknown command "zzcmd"`) {
		t.Errorf("an unknown word: exit %d, %s", code, errb.String())
	}
}

// TestBarePrompt pins the rule between a prompt and a mistyped command.
func TestBarePrompt(t *testing.T) {
	for word, want := range map[string]bool{
		"fix the bug":    true,
		"修复登录错误":         true,
		"why?\n":         true,
		"seesions":       false, // a typo of sessions
		"fix":            false, // any ASCII word looks like a command
		"main.go":        false,
		"sésions":        false, // not ASCII, but a near miss of sessions
		"revisar el bug": true,
	} {
		if got := barePrompt(word); got != want {
			t.Errorf("barePrompt(%q) = %v, want %v", word, got, want)
		}
	}
	for word, want := range map[string]string{
		"seesions": "sessions", "sesions": "sessions", "sessinos": "sessions", "ran": "run", "mpc": "mcp",
		"comit": "", "fix": "", "ses": "sessions", "se": "", "co": "", "hlep": "help", "SESSIONS": "sessions",
		"upgrade": "", "statz": "stats", "what": "chat",
	} {
		if got := nearestCommand(word); got != want {
			t.Errorf("nearestCommand(%q) = %q, want %q", word, got, want)
		}
	}
}
