package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const sample = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(npm run lint)", "WebSearch(domain:github.com)", "mcp__docs__*"],
    "deny": [
      "Read(./.env)",
      "Read(~/.ssh/**)",
      "Edit(/src/generated/**)"
    ],
    "additionalDirectories": ["../shared"],
    "defaultMode": "acceptEdits"
  },
  "env": {"FOO": "1"},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "echo pre", "timeout": 5}]}
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    "Stop": [{"hooks": [{"type": "prompt", "prompt": "are you done?"}]}]
  }
}`

func TestParseClaudeSettings(t *testing.T) {
	f, errs := Parse("/p/.claude/settings.json", Project, []byte(sample))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	set := &Set{Files: []*File{f}}
	if got := set.Rules("deny"); strings.Join(got, ",") != "Read(./.env),Read(~/.ssh/**),Edit(./src/generated/**)" {
		t.Errorf("deny = %q", got)
	}
	if got := set.Rules("allow"); strings.Join(got, ",") != "Bash(npm run lint),mcp__docs__*" {
		t.Errorf("allow = %q (WebSearch is unsupported and kept aside)", got)
	}
	var unsupported []string
	for _, r := range f.Rules {
		if r.Unsupported != "" {
			unsupported = append(unsupported, r.Text)
			if r.Line != 4 {
				t.Errorf("unsupported rule line %d, want 4", r.Line)
			}
		}
	}
	if strings.Join(unsupported, ",") != "WebSearch(domain:github.com)" {
		t.Errorf("unsupported = %q", unsupported)
	}
	if set.Mode() != "acceptEdits" {
		t.Errorf("mode %q", set.Mode())
	}
	// A project's file may not open a folder outside the workspace; the
	// user's may.
	if got, ign := set.Directories("/p", "/home/u"), set.IgnoredDirectories("/p", "/home/u"); len(got) != 0 || len(ign) != 1 || ign[0] != "/shared" {
		t.Errorf("project file: dirs %q, ignored %q", got, ign)
	}
	uf, _ := Parse("/home/u/.claude/settings.json", User, []byte(`{"permissions": {"additionalDirectories": ["/shared", "~/notes"]}}`))
	pf, _ := Parse("/p/.claude/settings.json", Project, []byte(`{"permissions": {"additionalDirectories": ["sub", "../up", "~/x"]}}`))
	both := &Set{Files: []*File{uf, pf}}
	if got := strings.Join(both.Directories("/p", "/home/u"), ","); got != "/shared,/home/u/notes,/p/sub" {
		t.Errorf("dirs %q", got)
	}
	if got := strings.Join(both.IgnoredDirectories("/p", "/home/u"), ","); got != "/up,/home/u/x" {
		t.Errorf("ignored %q", got)
	}
	hs := set.Hooks()
	if len(hs) != 1 || hs[0].Matcher != "Edit|Write" || hs[0].Timeout != 5*time.Second || !hs[0].Project || hs[0].Line != 16 {
		t.Errorf("hooks %+v", hs)
	}
	ign := strings.Join(f.Ignored, "\n")
	for _, want := range []string{`key "env"`, "Notification", `type "prompt"`} {
		if !strings.Contains(ign, want) {
			t.Errorf("ignored list %q lacks %q", ign, want)
		}
	}
}

func TestParseErrorsNameFileLineKey(t *testing.T) {
	for name, tc := range map[string]struct{ body, want string }{
		"syntax":     {"{\n  \"permissions\": {\n    \"deny\": [\"Read(x)\",]\n  }\n}", "settings.json:3:"},
		"type":       {"{\n  \"permissions\": {\n    \"deny\": \"Read(x)\"\n  }\n}", `settings.json:3: key "permissions.deny": expected an array`},
		"bad rule":   {"{\"permissions\": {\n\"deny\": [\n\"Read(x)\",\n\"Bash(\"\n]}}", `settings.json:4: key "permissions.deny[1]": permission rule "Bash("`},
		"bad mode":   {`{"permissions": {"defaultMode": "sideways"}}`, `key "permissions.defaultMode": unknown mode "sideways"`},
		"no command": {"{\"hooks\": {\"PreToolUse\": [{\"hooks\": [\n{\"type\": \"command\"}]}]}}", `settings.json:2: key "hooks.PreToolUse[0].hooks[0].command"`},
	} {
		_, errs := Parse("/p/.claude/settings.json", Project, []byte(tc.body))
		if len(errs) == 0 || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%s: errors %v, want %q", name, errs, tc.want)
		}
	}
}

func TestBypassOnlyFromUser(t *testing.T) {
	body := []byte(`{"permissions": {"defaultMode": "bypassPermissions"}}`)
	f, _ := Parse("p", Project, body)
	if (&Set{Files: []*File{f}}).Mode() != "" || f.DefaultModeIgnored == "" {
		t.Errorf("a project file switched the gate off")
	}
	u, _ := Parse("u", User, body)
	if (&Set{Files: []*File{u}}).Mode() != "bypassPermissions" {
		t.Errorf("the user's own bypassPermissions was not honoured")
	}
}

func TestLoadOrderAndMissing(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".claude"), 0o755)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"permissions":{"deny":["Read(a)"]}}`), 0o644)
	os.WriteFile(filepath.Join(ws, ".claude", "settings.local.json"), []byte(`{"permissions":{"deny":["Read(b)"]}}`), 0o644)
	set, err := Load(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(set.Rules("deny"), ","); got != "Read(a),Read(b)" {
		t.Errorf("deny %q", got)
	}
	if set.Files[0].Scope != User || set.Files[1].Scope != Local {
		t.Errorf("scopes %v %v", set.Files[0].Scope, set.Files[1].Scope)
	}
	os.WriteFile(filepath.Join(ws, ".claude", "settings.json"), []byte("{"), 0o644)
	if _, err := Load(ws, home); err == nil || !strings.Contains(err.Error(), filepath.Join(ws, ".claude", "settings.json")) {
		t.Errorf("broken file: %v", err)
	}
}

// HoldAllow leaves out the project files' allow rules that do not apply
// yet, asked with the rule as written (a path rule before normalising);
// the user's own file and every ask and deny rule are untouched.
func TestHoldAllow(t *testing.T) {
	user, errs := Parse("/u/.claude/settings.json", User, []byte(`{"permissions": {"allow": ["Bash(ls:*)"]}}`))
	project, errs2 := Parse("/p/.claude/settings.json", Project, []byte(`{"permissions": {"allow": ["Read(/docs/**)", "Bash(make:*)"], "deny": ["Bash(rm:*)"]}}`))
	if len(errs)+len(errs2) > 0 {
		t.Fatal(errs, errs2)
	}
	set := &Set{Files: []*File{user, project}}
	var asked []string
	set.HoldAllow(func(file, rule string) bool {
		asked = append(asked, file+" "+rule)
		return rule == "Read(/docs/**)"
	})
	if got := strings.Join(asked, ","); got != "/p/.claude/settings.json Read(/docs/**),/p/.claude/settings.json Bash(make:*)" {
		t.Errorf("asked %q", got)
	}
	if got := strings.Join(set.Rules("allow"), ","); got != "Bash(ls:*),Read(./docs/**)" {
		t.Errorf("allow = %q", got)
	}
	if got := strings.Join(set.Rules("deny"), ","); got != "Bash(rm:*)" {
		t.Errorf("deny = %q", got)
	}
	var nilSet *Set
	nilSet.HoldAllow(func(string, string) bool { return false })
}
