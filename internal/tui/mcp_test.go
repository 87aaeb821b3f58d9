package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/internal/permission"
)

// /mcp lists the servers the front end was given, and says so when there
// are none.
func TestMCPCommand(t *testing.T) {
	h := start(t, Options{MCP: func() []string {
		return []string{"sentry  running  http  12 tools, 0 prompts, 0 resources", "repo  untrusted  stdio  0 tools, 0 prompts, 0 resources"}
	}})
	h.typeText("/mcp")
	h.key(tcell.KeyEnter)
	h.waitFor("MCP servers", "sentry  running  http  12 tools", "repo  untrusted")

	none := start(t, Options{})
	none.typeText("/mcp")
	none.key(tcell.KeyEnter)
	none.waitFor("no MCP servers configured")
}

// A project MCP server's trust question and a tool's approval that arrive
// together share one overlay: the first stays on screen saying one more
// waits, the second follows once it is answered, and a waiting one that
// is withdrawn leaves the queue without showing.
func TestTrustAndToolApprovalsQueueInOneOverlay(t *testing.T) {
	h := start(t, Options{})
	trust := permission.Request{Tool: "mcp server repo-tools", Subject: "node server.js",
		Impact:  "start the MCP server \"repo-tools\" that .mcp.json defines",
		Choices: []permission.Answer{permission.AllowOnce, permission.AllowAlways, permission.DenyAnswer}}
	bash := permission.Request{Tool: "bash", Command: "make build", Subject: "make build", Impact: "runs a shell command",
		Choices: []permission.Answer{permission.AllowOnce, permission.DenyAnswer}}
	answers := make(chan string, 3)
	ask := func(ctx context.Context, req permission.Request) {
		r, err := h.broker.Approve(ctx, req)
		if err != nil {
			answers <- req.Tool + " " + err.Error()
			return
		}
		answers <- req.Tool + " " + string(r.Answer)
	}
	go ask(context.Background(), trust)
	h.waitFor("approve mcp server repo-tools?")
	go ask(context.Background(), bash)
	s := h.waitFor("approve mcp server repo-tools?", "1 more waiting")
	if strings.Contains(s, "approve bash?") || strings.Contains(s, "make build") {
		t.Fatalf("the second question is on screen with the first:\n%s", s)
	}
	// A third, withdrawn while it waits, is never shown.
	ctx, cancel := context.WithCancel(context.Background())
	go ask(ctx, permission.Request{Tool: "write_file", Subject: "x.txt", Choices: []permission.Answer{permission.AllowOnce, permission.DenyAnswer}})
	h.waitFor("2 more waiting")
	cancel()
	if a := <-answers; !strings.HasPrefix(a, "write_file ") || !strings.Contains(a, "canceled") {
		t.Fatalf("withdrawn question: %q", a)
	}
	h.waitFor("1 more waiting")

	h.rune('y')
	if a := <-answers; a != "mcp server repo-tools "+string(permission.AllowOnce) {
		t.Fatalf("first answer %q", a)
	}
	s = h.waitFor("approve bash?", "make build")
	if strings.Contains(s, "more waiting") || strings.Contains(s, "repo-tools") || strings.Contains(s, "x.txt") {
		t.Fatalf("after the first answer:\n%s", s)
	}
	h.rune('n')
	if a := <-answers; a != "bash "+string(permission.DenyAnswer) {
		t.Fatalf("second answer %q", a)
	}
	waitGone(t, h, "approve bash?")
}
