package mcp

import (
	"strings"
	"testing"
)

// Servers whose names normalize alike would offer tools under one name:
// the first keeps it, the next is left out with a notice.
func TestServersNormalizingAlikeAreLeftOut(t *testing.T) {
	t.Parallel()
	var notes []string
	m := New([]Config{{Name: "git_hub", Command: "a"}, {Name: "git.hub", Command: "b", Source: ".mcp.json"}, {Name: "git_hub", Command: "c"}},
		Options{Notify: func(s string) { notes = append(notes, s) }})
	defer m.Close()
	if len(m.servers) != 1 || m.servers[0].cfg.Command != "a" {
		t.Fatalf("servers %d", len(m.servers))
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "git.hub") || !strings.Contains(notes[0], "mcp__git_hub__") {
		t.Errorf("notices %q", notes)
	}
}
