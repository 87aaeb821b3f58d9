package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLen is the longest tool name providers accept (OpenAI-compatible
// APIs allow 64 characters of [a-zA-Z0-9_-]).
const MaxNameLen = 64

// Prefix starts every MCP tool name.
const Prefix = "mcp__"

// ToolName is the name Reasonix offers a server's tool under:
// mcp__<server>__<tool>, every character outside [a-zA-Z0-9_-] replaced by
// "_", and a name longer than MaxNameLen cut and ended with a hash of the
// full name, so the same server and tool always get the same name.
func ToolName(server, tool string) string {
	full := Prefix + Normalize(server) + "__" + Normalize(tool)
	if len(full) <= MaxNameLen {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return full[:MaxNameLen-9] + "_" + hex.EncodeToString(sum[:4])
}

// Normalize replaces every character outside [a-zA-Z0-9_-] with "_".
func Normalize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
