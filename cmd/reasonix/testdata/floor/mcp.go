//go:build floormcp

package main

// Built with -tags floormcp, the floor links only the official MCP Go SDK
// (which brings google/jsonschema-go with it), without calling it: the
// bench's third reference. The design makes both libraries Reasonix's, so
// what this floor costs over the bare floor is a part of every start that
// no change in Reasonix's own code can remove.
import _ "github.com/modelcontextprotocol/go-sdk/mcp"
