package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reasonix/reasonix/providers/scripted"
)

// e2eMCPServerEnv makes the test binary serve MCP on stdio instead of
// testing (see TestMain): a real server process the tests can crash and
// whose tool list they can change.
const e2eMCPServerEnv = "REASONIX_E2E_MCP_SERVER"

type liveText struct {
	Text string `json:"text"`
}

// serveE2EMCP is the server: echo (which names its process), die (exits
// at once, as a crash) and add_tool (adds the tool late, which makes the
// SDK send notifications/tools/list_changed).
func serveE2EMCP() {
	s := sdk.NewServer(&sdk.Implementation{Name: "reasonix-e2e", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Return the text and this process's id."},
		func(_ context.Context, _ *sdk.CallToolRequest, in liveText) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s (pid %d)", in.Text, os.Getpid())}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "die", Description: "Exit at once."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "add_tool", Description: "Offer one more tool."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			sdk.AddTool(s, &sdk.Tool{Name: "late", Description: "A tool added after the handshake."},
				func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "added"}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "e2e MCP server:", err)
		os.Exit(1)
	}
}

// liveServerConfig is a reasonix.toml that runs the test binary as the
// MCP server "live", its tools allowed.
func liveServerConfig(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
[[plugins]]
name = "live"
command = %q
env = { %s = "1" }

[permissions]
allow = ["mcp__live__*"]
`, self, e2eMCPServerEnv)
}

var pidRe = regexp.MustCompile(`\(pid (\d+)\)`)

// A server whose process dies mid-run is restarted, and the model's next
// call to it goes to the new process; the tools and the prefix stay.
func TestE2EMCPCrashedServerIsRestartedMidRun(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__live__echo", map[string]any{"text": "before"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__live__die", map[string]any{})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__live__echo", map[string]any{"text": "after"})}},
		scripted.Turn{Text: "The server came back."},
	)
	e.write("reasonix.toml", liveServerConfig(t))
	r := e.run("", "run", "use the live server")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d\nstderr: %s", len(reqs), r.stderr)
	}
	before := pidRe.FindStringSubmatch(string(messagesOf(t, reqs[1])))
	died := string(messagesOf(t, reqs[2]))
	after := pidRe.FindAllStringSubmatch(string(messagesOf(t, reqs[3])), -1)
	if before == nil || len(after) != 2 {
		t.Fatalf("echo results missing: before %v, after %v\n%s", before, after, messagesOf(t, reqs[3]))
	}
	if after[1][1] == before[1] {
		t.Fatalf("the call after the crash went to the same process %s", before[1])
	}
	if !strings.Contains(died, "MCP server live: die") {
		t.Errorf("the crashed call's error does not name the server and tool:\n%s", died)
	}
	if !strings.Contains(string(messagesOf(t, reqs[3])), "after (pid ") {
		t.Errorf("the call after the crash failed:\n%s", messagesOf(t, reqs[3]))
	}
	if !strings.Contains(r.stderr, "MCP server live stopped") || !strings.Contains(r.stderr, "restarting in") {
		t.Errorf("no restart notice:\n%s", r.stderr)
	}
	assertPrefixStable(t, reqs)
}

// A server that announces a new tool list mid-session: the person gets a
// notice, the model's tools stay the same for the rest of the session
// (the cached prefix holds) and its next user turn says what changed.
func TestE2EMCPToolListChangeIsAnnouncedInTheNextTurn(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__live__add_tool", map[string]any{})}},
		scripted.Turn{Text: "Asked it to add a tool."},
		scripted.Turn{Text: "I see the new tool was announced."},
	)
	e.write("reasonix.toml", liveServerConfig(t))
	c := startStream(t, e)
	c.send(userLine("add a tool"))
	c.await("the first turn's end", turnDone)
	changed := func(m map[string]any) bool {
		return m["type"] == "notice" && strings.Contains(fmt.Sprint(m["text"]), "mcp__live__late")
	}
	if !slices.ContainsFunc(c.seen, changed) {
		c.await("the notice of the changed list", changed)
	}
	c.send(userLine("what changed?"))
	c.await("the second turn's end", turnDone)
	c.stdin.Close()
	for range c.lines {
	}
	if err := <-c.exit; err != nil {
		t.Fatalf("exit: %v", err)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d", len(reqs))
	}
	first, last := toolNamesOf(t, reqs[0]), toolNamesOf(t, reqs[2])
	if !hasName(first, "mcp__live__add_tool") || hasName(first, "mcp__live__late") {
		t.Fatalf("first request's tools: %v", first)
	}
	if !slices.Equal(first, last) {
		t.Errorf("the tools changed mid-session:\n%v\n%v", first, last)
	}
	if strings.Contains(string(reqs[1]), "<tool-changes>") {
		t.Errorf("the change was announced inside the turn that caused it")
	}
	msgs := string(messagesOf(t, reqs[2]))
	i := strings.LastIndex(msgs, "<tool-changes>")
	if i < 0 || !strings.Contains(msgs[i:], "mcp__live__late") || !strings.Contains(msgs[i:], "what changed?") {
		t.Fatalf("the next user turn does not announce the new tool:\n%s", msgs)
	}
	assertPrefixStable(t, reqs)
}
