package commands

import "context"

// Prompt is a slash command whose text another part of Reasonix renders,
// such as a prompt an MCP server offers.
type Prompt struct {
	Name         string
	Description  string
	ArgumentHint string
	// Source names where it comes from, for lists ("mcp:github").
	Source string
}

// Prompts is the registration point for prompt commands: the MCP client
// implements it, and the coordinator lists and runs its prompts beside
// custom commands and skills. Prompts must be cheap (no network); Render
// may block and must honour ctx.
type Prompts interface {
	Prompts() []Prompt
	Render(ctx context.Context, name, args string) (string, error)
}
