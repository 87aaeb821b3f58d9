package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/oauthtest"
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

// A repository's .mcp.json server whose command does not exist is not
// the subject of a trust question: the TUI says it cannot start and why,
// and the other server's question still comes.
func TestTUIMCPMissingCommandIsNotAskedAbout(t *testing.T) {
	t.Parallel()
	plugin := pluginExample(t)
	e := newE2E(t, scripted.Turn{Text: "fine"})
	e.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {"aaghost": {"command": "reasonix-no-such-server"}, "example": {"command": %q}}}`, plugin))
	tt := startTUI(t, e, "chat")
	s := tt.waitFor("mcp server example", "aaghost", "not on PATH")
	if strings.Contains(s, "mcp server aaghost") {
		t.Fatalf("asked about a server that cannot start:\n%s", s)
	}
	tt.keys("a")
	waitRunning(tt, "example  running")
	tt.quit()
	if trust, _ := os.ReadFile(filepath.Join(e.home, "mcp-trust.json")); strings.Contains(string(trust), "aaghost") {
		t.Errorf("the missing server was trusted: %s", trust)
	}
}

// e2eBrowserEnv makes the test binary a browser that opens the address
// it is given and follows the redirects: $BROWSER in the sign-in tests.
const e2eBrowserEnv = "REASONIX_E2E_BROWSER"

func agreeAsBrowser(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "browser: want one address")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := oauthtest.Browse(ctx, args[0]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// A remote server that wants a sign-in, in the TUI: the start notice
// says to type /mcp login, /mcp lists it as needing one, and /mcp login
// opens $BROWSER (here a browser that agrees) and brings the server up
// in the running UI; the model is offered its tool from the next session
// and told of it meanwhile, and the sign-in is kept for the next start.
func TestTUIMCPLogin(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t, oauthtest.Options{})
	e := newE2E(t, scripted.Turn{Text: "first answer"}, scripted.Turn{Text: "second answer"})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.env = append(e.env, "BROWSER="+self, e2eBrowserEnv+"=1")
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte("credentials_store = \"file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.writeUserConfig(fmt.Sprintf("[[plugins]]\nname = \"remote\"\ntype = \"http\"\nurl = %q\n", srv.URL))
	tt := startTUI(t, e, "chat")
	tt.waitFor("MCP server remote needs an OAuth sign-in: type `/mcp login remote`")
	waitRunning(tt, "remote  needs sign-in  http")
	tt.typeLine("hello")
	tt.waitFor("first answer")
	tt.typeLine("/mcp login remote")
	tt.waitFor("Signed in to MCP server remote; it is running (1 tools)")
	waitRunning(tt, "remote  running  http  1 tools, 0 prompts, 0 resources  (signed in)")
	tt.typeLine("again")
	tt.waitFor("second answer")
	reqs := e.srv.Requests()
	if msgs := string(messagesOf(t, reqs[1])); !strings.Contains(msgs, "MCP server remote now offers: mcp__remote__whoami") {
		t.Errorf("the model was not told of the signed-in server:\n%s", msgs)
	}
	tt.quit()
	if c := srv.Counts(); c.Registrations != 1 || c.CodeGrants != 1 {
		t.Errorf("counts: %+v", c)
	}
	if b, _ := os.ReadFile(filepath.Join(e.home, "credentials.json")); !strings.Contains(string(b), "mcp-oauth:remote:") {
		t.Errorf("the sign-in was not kept:\n%s", b)
	}
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
	e.writeUserConfig("[[plugins]]\nname = \"slow\"\ncommand = \"sleep\"\nargs = [\"600\"]\ntimeout_ms = 60000\n")
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
