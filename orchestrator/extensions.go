package orchestrator

import (
	"context"
	"strings"

	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/tools"
)

// Extensions are capabilities from outside the binary: the tools and
// resources of MCP servers (their prompts are [commands.Prompts], in
// Runtime.Prompts). cmd adapts tools/mcp to it, so the coordinator imports
// no MCP code.
type Extensions interface {
	// Tools is the snapshot a session opens with, sorted by name. A
	// session keeps it for its life, so its prefix stays byte-stable.
	Tools() []tools.Tool
	// Changes describes what changed since it was last called (a server
	// announced new tools, or came up late), once, for the next user
	// turn; "" for none. Taking a snapshot with Tools does not consume
	// it: a subagent opening must not swallow the conversation's news.
	Changes() string
	// Resources returns the text to append for the resources text names
	// (@server:uri), and notices for those that could not be read.
	Resources(ctx context.Context, text string) (string, []string)
}

// extensionTools is the extension tools of a session opening now.
func (c *Coordinator) extensionTools() []tools.Tool {
	if c.rt.Extensions == nil {
		return nil
	}
	return c.rt.Extensions.Tools()
}

// settleToolChanges drops the pending announcements of tool-list
// changes: a conversation opening now has the current tools, so they are
// no news to it. (Other sessions opening, such as subagents, leave them
// for the conversation's next turn.)
func (c *Coordinator) settleToolChanges() {
	if c.rt.Extensions != nil {
		c.rt.Extensions.Changes()
	}
}

// withToolChanges puts the announcement of tool-list changes since the
// session opened in front of a turn's text: it rides in the newest user
// turn, never in the prefix.
func (c *Coordinator) withToolChanges(text string) string {
	if c.rt.Extensions == nil {
		return text
	}
	if ch := c.rt.Extensions.Changes(); ch != "" {
		return "<tool-changes>\n" + ch + "\n</tool-changes>\n\n" + text
	}
	return text
}

// extensionRefresh returns what an executor session of role r offers
// after a compaction: its tools less the extension tools it opened with,
// plus the extension tools of now (as the role allows; a built-in keeps
// its name). Extension tools are MCP tools, all named mcp__server__tool,
// which no built-in is. The pending announcement of changes is settled:
// the session now has them. nil when there are no extensions.
func (c *Coordinator) extensionRefresh(r roles.Role) func(*tools.Registry) *tools.Registry {
	if c.rt.Extensions == nil {
		return nil
	}
	return func(cur *tools.Registry) *tools.Registry {
		next := cur.Filter(func(t tools.Tool) bool { return !strings.HasPrefix(t.Name(), extensionPrefix) })
		allowed := r.FilterTools(tools.NewRegistry(c.extensionTools()...))
		for _, n := range allowed.Names() {
			if _, builtin := next.Get(n); !builtin {
				t, _ := allowed.Get(n)
				next.Add(t)
			}
		}
		c.settleToolChanges()
		return next
	}
}

// extensionPrefix starts the name of every extension (MCP) tool.
const extensionPrefix = "mcp__"
