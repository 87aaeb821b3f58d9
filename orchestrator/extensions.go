package orchestrator

import (
	"context"

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
