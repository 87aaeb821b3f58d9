// Package mcp connects Reasonix to Model Context Protocol servers through
// the official Go SDK: local servers over stdio, remote ones over
// streamable HTTP (or the older HTTP+SSE transport). Their tools become
// tools named mcp__<server>__<tool> that describe their own access like
// any built-in, their prompts are listed for slash commands and their
// resources can be read by URI.
//
// A [Manager] owns every server of one process: it starts them in the
// background, restarts a crashed stdio server a bounded number of times,
// writes each server's stderr to a log file, and hands out a sorted
// snapshot of the tools of the servers that are up. A session takes that
// snapshot once, when it opens, so its tool schemas stay byte-stable; a
// server that changes its tool list later is announced, not swapped in.
package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// Transport types.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// DefaultTimeout bounds a server's handshake and each listing when its
// config names no timeout. Servers started through npx may download
// first, so it is generous.
const DefaultTimeout = 30 * time.Second

// Config is one server definition.
type Config struct {
	Name string
	// Type is TypeStdio (also when empty), TypeHTTP or TypeSSE.
	Type    string
	Command string
	Args    []string
	// Env is all the server's environment adds to the basics (PATH,
	// HOME, locale, temp directories): nothing else of Reasonix's
	// environment reaches it, provider keys least of all.
	Env map[string]string
	// Cwd is the stdio server's working directory; relative to the
	// workspace, empty is the workspace.
	Cwd     string
	URL     string
	Headers map[string]string
	// OAuth names a client registered by hand with the server's
	// authorization server; empty lets a sign-in register one itself.
	OAuth OAuthClient
	// Timeout bounds the handshake and each listing; 0 is DefaultTimeout.
	Timeout time.Duration
	// Allow, when non-empty, offers only the remote tools it matches
	// (path.Match globs); Deny then hides the ones it matches.
	Allow, Deny []string
	// Disabled servers are listed but never started.
	Disabled bool
	// NeedsTrust marks a server a repository defined (.mcp.json): it
	// starts only once [Manager.Trust] was called for it.
	NeedsTrust bool
	// Source is the file that defined the server, for messages.
	Source string
}

func (c Config) kind() string {
	if c.Type == "" {
		return TypeStdio
	}
	return c.Type
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// Hash identifies what the server runs: its transport, command, arguments,
// environment, directory, URL and headers. A person's trust is given to a
// hash, so a changed command asks again.
func (c Config) Hash() string {
	def := struct {
		Type    string            `json:"type"`
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		Cwd     string            `json:"cwd,omitempty"`
		URL     string            `json:"url,omitempty"`
		Headers map[string]string `json:"headers,omitempty"`
	}{c.kind(), c.Command, c.Args, c.Env, c.Cwd, c.URL, c.Headers}
	b, _ := json.Marshal(def) // maps marshal with sorted keys
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// clone returns a deep copy, so a Manager never shares maps with its caller.
func (c Config) clone() Config {
	c.Args = slices.Clone(c.Args)
	c.Env = maps.Clone(c.Env)
	c.Headers = maps.Clone(c.Headers)
	c.Allow = slices.Clone(c.Allow)
	c.Deny = slices.Clone(c.Deny)
	c.OAuth.Scopes = slices.Clone(c.OAuth.Scopes)
	return c
}
