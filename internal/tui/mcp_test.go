package tui

import (
	"testing"

	"github.com/gdamore/tcell/v2"
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
