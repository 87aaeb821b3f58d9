package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// A repository's .mcp.json server asks once in the TUI, on the approval
// overlay; "always" starts it, its tools reach the first request, and the
// next start asks nothing.
func TestTUIMCPTrustQuestion(t *testing.T) {
	t.Parallel()
	plugin := pluginExample(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__example__wordcount", map[string]any{"text": "one two"})}},
		scripted.Turn{Text: "Counted the words."},
		scripted.Turn{Text: "Second session."},
	)
	e.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {"example": {"command": %q}}}`, plugin))
	tt := startTUI(t, e, "chat")
	tt.waitFor("mcp server example", plugin)
	tt.keys("a")
	waitRunning(tt, "example  running  stdio  2 tools, 1 prompts, 1 resources")
	tt.typeLine("count these words")
	tt.waitFor("mcp__example__wordcount", "Counted the words.")
	if names := toolNames(t, e.srv.Requests()[0]); !hasName(names, "mcp__example__echo") {
		t.Fatalf("the first request lacks the server's tools: %v", names)
	}
	tt.quit()
	trust, err := os.ReadFile(filepath.Join(e.home, "mcp-trust.json"))
	if err != nil || !strings.Contains(string(trust), `"example"`) {
		t.Fatalf("trust not remembered: %q, %v", trust, err)
	}

	again := startTUI(t, e, "chat")
	s := waitRunning(again, "example  running")
	if strings.Contains(s, "mcp server example") {
		t.Fatalf("asked again for a trusted definition:\n%s", s)
	}
	again.quit()
}

// waitRunning types /mcp until its list shows want (a server starts in
// the background, and each /mcp prints the state of its moment).
func waitRunning(tt *tuiTerm, want string) string {
	tt.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tt.typeLine("/mcp")
		time.Sleep(300 * time.Millisecond)
		if s := tt.screen(); strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("/mcp never showed %q:\n%s", want, tt.screen())
		}
	}
}

// A server that never answers its handshake does not hold the composer:
// the first prompt is sent and answered long before the server's 60 s
// handshake timeout, and /mcp shows it still starting.
func TestTUIMCPHangingServerDoesNotDelayTheComposer(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "answered without waiting"})
	e.write("reasonix.toml", "[[plugins]]\nname = \"slow\"\ncommand = \"sleep\"\nargs = [\"600\"]\ntimeout_ms = 60000\n")
	start := time.Now()
	tt := startTUI(t, e, "chat")
	tt.typeLine("hello")
	tt.waitFor("answered without waiting")
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the first answer took %s: the composer waited for the server", d)
	}
	tt.typeLine("/mcp")
	tt.waitFor("slow  starting")
	tt.quit()
}
