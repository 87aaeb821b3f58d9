// Command deepmcp is an MCP stdio server for the end-to-end tests: one
// tool, post_page, whose input schema nests objects three levels deep as
// Notion's server does. It answers with the arguments it received, so a
// test sees what reached the tool.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

//go:embed schema.json
var schema []byte

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "deepmcp", Version: "test"}, nil)
	s.AddTool(&mcp.Tool{Name: "post_page", Description: "Create a page under a parent page.", InputSchema: json.RawMessage(schema)},
		func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "received " + string(r.Params.Arguments)}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "deepmcp:", err)
		os.Exit(1)
	}
}
