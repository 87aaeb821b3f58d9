package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

// The rule forms real Claude Code settings files use parse and decide as
// their authors meant.
func TestClaudeRuleForms(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	ws := t.TempDir()
	p, err := ParsePolicy("ask", []string{"mcp__docs__*", "Skill(ns:name)"}, nil,
		[]string{"Read(~/.ssh/**)", "Read(./.env)", "Bash(rm -rf*)", "Bash(git push*)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Workspace = ws
	p.Exists = func(string) bool { return false }
	read := func(path string) tools.Access { return tools.Access{Kind: tools.KindRead, Reads: []string{path}} }
	for _, tc := range []struct {
		name string
		tool string
		ro   bool
		acc  tools.Access
		want Decision
	}{
		{"home ssh key", "read_file", true, read(filepath.Join(home, ".ssh", "id_rsa")), Deny},
		{"home other", "read_file", true, read(filepath.Join(home, "notes.txt")), Allow},
		{".env", "read_file", true, read(filepath.Join(ws, ".env")), Deny},
		{"README", "read_file", true, read(filepath.Join(ws, "README.md")), Allow},
		{"rm -rf", "bash", false, tools.Access{Kind: tools.KindExecute, Command: "rm -rf build"}, Deny},
		{"rm -rfv", "bash", false, tools.Access{Kind: tools.KindExecute, Command: "rm -rfv build"}, Deny},
		{"git push", "bash", false, tools.Access{Kind: tools.KindExecute, Command: "git push origin main"}, Deny},
		{"git pull", "bash", false, tools.Access{Kind: tools.KindExecute, Command: "git pull"}, Ask},
		{"mcp tool of the server", "mcp__docs__search", false, tools.Access{Kind: tools.KindOther}, Allow},
		{"mcp tool of another server", "mcp__other__search", false, tools.Access{Kind: tools.KindOther}, Ask},
		{"namespaced skill", "skill", false, tools.Access{Kind: tools.KindDelegate, Skill: "ns:name"}, Allow},
	} {
		if got := p.Decide(tc.tool, tc.ro, tc.acc); got != tc.want {
			t.Errorf("%s: %v, want %v (%s)", tc.name, got, tc.want, p.Explain(tc.tool, tc.ro, tc.acc).Reason)
		}
	}
}

// The spec's mode names: allow is auto, deny refuses what no rule allows.
func TestModeAllowDeny(t *testing.T) {
	write := tools.Access{Kind: tools.KindWrite, Writes: []string{"a.txt"}}
	for mode, want := range map[string]Decision{"allow": Allow, "deny": Deny, "dontAsk": Deny, "ask": Ask} {
		p, err := ParsePolicy(mode, []string{"Edit(docs/**)"}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Workspace = t.TempDir()
		if got := p.Decide("write_file", false, write); got != want {
			t.Errorf("mode %s: %v, want %v", mode, got, want)
		}
		if got := p.Decide("write_file", false, tools.Access{Kind: tools.KindWrite, Writes: []string{"docs/x.md"}}); got != Allow {
			t.Errorf("mode %s: an allow rule still allows, got %v", mode, got)
		}
	}
}

// A Read deny rule also stops a shell command that names the file, in
// every posture: cat .env must not do what read_file .env may not.
func TestReadDenyCoversShellArguments(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("K=v\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := ParsePolicy("yolo", nil, nil, []string{"Read(./.env)", "Read(~/.ssh/**)", "Edit(src/gen/**)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Workspace = ws
	for cmd, want := range map[string]Decision{
		"cat .env":                 Deny,
		"grep KEY ./.env":          Deny,
		"head -1 sub/.env":         Deny,
		"cat .e*":                  Deny,
		"tool --env-file=.env run": Deny,
		"cat ~/.ssh/id_rsa":        Deny,
		"cat " + ws + "/.env":      Deny,
		"cat .env.example":         Allow,
		"go build ./src/gen/...":   Allow, // Edit denies are not read denies
		"ls -la":                   Allow,
	} {
		if got := p.Explain("bash", false, tools.Access{Kind: tools.KindExecute, Command: cmd}); got.Decision != want {
			t.Errorf("%q: %v, want %v (%s)", cmd, got.Decision, want, got.Reason)
		}
	}
}
