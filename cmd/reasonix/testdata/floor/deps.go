//go:build floordeps

package main

// Built with -tags floordeps, the floor links every third-party package
// Reasonix imports, and so runs their package init, without calling them:
// the bench's second reference, which splits Reasonix's distance to the
// floor into what its dependencies cost at start and what its own code
// does. TestFloorDepsListsEveryDependency keeps this list equal to the
// third-party packages Reasonix's own packages import.
import (
	_ "github.com/aymanbagabas/go-udiff"
	_ "github.com/bluekeyes/go-gitdiff/gitdiff"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/coder/acp-go-sdk"
	_ "github.com/gdamore/tcell/v2"
	_ "github.com/goccy/go-yaml/ast"
	_ "github.com/goccy/go-yaml/parser"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/modelcontextprotocol/go-sdk/auth"
	_ "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/modelcontextprotocol/go-sdk/oauthex"
	_ "github.com/pelletier/go-toml/v2"
	_ "github.com/rivo/tview"
	_ "github.com/rivo/uniseg"
	_ "golang.org/x/oauth2"
	_ "golang.org/x/sync/semaphore"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/term"
	_ "mvdan.cc/sh/v3/syntax"
)
