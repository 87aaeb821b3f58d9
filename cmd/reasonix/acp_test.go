package main

import "testing"

// TestPlainLine: a notice written to an editor's log is one line with no
// terminal escapes or bidirectional overrides a project's text put in it.
func TestPlainLine(t *testing.T) {
	for in, want := range map[string]string{
		"MCP server x is running (2 tools)":       "MCP server x is running (2 tools)",
		"two\nlines\r\n\tand a tab":               "two lines and a tab",
		"MCP server \x1b[31mred\x1b[0m stays off": "MCP server [31mred [0m stays off",
		"name\u202egnp.exe":                       "name gnp.exe",
		" \n ":                                    "",
	} {
		if got := plainLine(in); got != want {
			t.Errorf("plainLine(%q) = %q, want %q", in, got, want)
		}
	}
}
