// Command reasonix-plugin-example is a small MCP server over stdio, the
// reference for writing a Reasonix plugin: two tools (echo, and wordcount,
// which declares itself read-only), one prompt and one resource. Declare
// it in reasonix.toml:
//
//	[[plugins]]
//	name = "example"
//	command = "reasonix-plugin-example"
//
// and the model sees mcp__example__echo and mcp__example__wordcount.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// version is injected at build time like the main binary's.
var version = "dev"

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to send back"`
}

type countArgs struct {
	Text string `json:"text" jsonschema:"the text whose words to count"`
}

type countResult struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Bytes int `json:"bytes"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "reasonix-plugin-example", Version: version}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Return the text unchanged."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "wordcount", Description: "Count the words, lines and bytes of a text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in countArgs) (*mcp.CallToolResult, countResult, error) {
			lines := strings.Count(in.Text, "\n")
			if in.Text != "" && !strings.HasSuffix(in.Text, "\n") {
				lines++
			}
			return nil, countResult{Words: len(strings.Fields(in.Text)), Lines: lines, Bytes: len(in.Text)}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "review", Description: "Ask for a review of one file.",
		Arguments: []*mcp.PromptArgument{{Name: "file", Description: "the file to review", Required: true}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			file := r.Params.Arguments["file"]
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: "Review " + file + " for bugs and say what you would change."}}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "example://greeting", Name: "greeting", MIMEType: "text/plain",
		Description: "A fixed greeting."},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain",
				Text: "hello from the example plugin"}}}, nil
		})
	return s
}

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "--version" || os.Args[1] == "version") {
		fmt.Println("reasonix-plugin-example", version)
		return
	}
	if err := newServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "reasonix-plugin-example:", err)
		os.Exit(1)
	}
}
