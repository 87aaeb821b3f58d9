package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func appendAndRead(t *testing.T, path, list, rule string) string {
	t.Helper()
	if err := AppendRule(path, list, rule); err != nil {
		t.Fatalf("AppendRule(%s, %q): %v", list, rule, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// rulesIn loads path as the only layer and returns its permissions.
func rulesIn(t *testing.T, path string) Permissions {
	t.Helper()
	l, err := Load(Options{Home: t.TempDir(), File: path, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("edited file does not load: %v", err)
	}
	return l.Config.Permissions
}

func TestAppendRuleCreatesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), ProjectFile)
	got := appendAndRead(t, path, "allow", `Bash(go test:*)`)
	if got != "[permissions]\nallow = [\"Bash(go test:*)\"]\n" {
		t.Errorf("new file = %q", got)
	}
}

func TestAppendRuleAddsTableKeepingText(t *testing.T) {
	path := filepath.Join(t.TempDir(), ProjectFile)
	orig := "# project settings\n[agent]\nmax_steps = 9 # keep me\n"
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	got := appendAndRead(t, path, "deny", `Bash(rm -rf:*)`)
	if !strings.HasPrefix(got, orig) {
		t.Errorf("existing text changed:\n%s", got)
	}
	if p := rulesIn(t, path); !slices.Equal(p.Deny, []string{"Bash(rm -rf:*)"}) {
		t.Errorf("deny = %q", p.Deny)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, %v; want the original 0640 kept", fi.Mode().Perm(), err)
	}
}

func TestAppendRuleIntoExistingTableAndList(t *testing.T) {
	path := filepath.Join(t.TempDir(), ProjectFile)
	orig := `# top comment
[permissions]
mode = "ask" # why we ask
allow = [
  "Read", # reading is fine
  "Edit(docs/**)"  # docs too
]

[sandbox]
network = false
`
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	got := appendAndRead(t, path, "allow", `Bash(go test:*)`)
	for _, keep := range []string{"# top comment", "# why we ask", "# reading is fine", "# docs too", "[sandbox]"} {
		if !strings.Contains(got, keep) {
			t.Errorf("lost %q:\n%s", keep, got)
		}
	}
	got = appendAndRead(t, path, "ask", `Bash(git push:*)`)
	p := rulesIn(t, path)
	if want := []string{"Read", "Edit(docs/**)", "Bash(go test:*)"}; !slices.Equal(p.Allow, want) {
		t.Errorf("allow = %q, want %q", p.Allow, want)
	}
	if !slices.Equal(p.Ask, []string{"Bash(git push:*)"}) {
		t.Errorf("ask = %q", p.Ask)
	}
	// The new key sits in [permissions], not after [sandbox].
	if strings.Index(got, "ask = ") > strings.Index(got, "[sandbox]") {
		t.Errorf("ask list placed outside [permissions]:\n%s", got)
	}

	// Adding a rule that is already there changes nothing.
	before := got
	if after := appendAndRead(t, path, "allow", "Read"); after != before {
		t.Errorf("duplicate rule edited the file:\n%s", after)
	}
}

func TestAppendRuleListShapes(t *testing.T) {
	cases := []struct{ list, want string }{
		{"[permissions]\nallow = []\n", `allow = ["X(y)"]`},
		{"[permissions]\nallow = [ ]\n", `allow = ["X(y)" ]`},
		{"[permissions]\nallow = [\"a\",]\n", `allow = ["a", "X(y)"]`},
		{"[permissions]\nallow = [\"a\"] # c\n", `allow = ["a", "X(y)"] # c`},
		{"[permissions]\nallow = ['lit]eral']\n", `allow = ['lit]eral', "X(y)"]`},
		{"permissions.allow = [\"a\"]\n", `permissions.allow = ["a", "X(y)"]`},
		{"[permissions]\nallow = [\n  \"a\",\n  # trailing comment\n]\n", "  \"a\", \"X(y)\"\n  # trailing comment\n]"},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), ProjectFile)
		if err := os.WriteFile(path, []byte(c.list), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := appendAndRead(t, path, "allow", "X(y)"); !strings.Contains(got, c.want) {
			t.Errorf("from %q got %q, want it to contain %q", c.list, got, c.want)
		}
	}
}

func TestAppendRuleRefusesWhatItCannotEdit(t *testing.T) {
	for _, text := range []string{
		"permissions = { allow = [\"a\"] }\n", // inline table: a header would redefine it
		"[permissions]\nallow = \"a\"\n",      // not a list
		"[permissions\n",                      // does not parse
	} {
		path := filepath.Join(t.TempDir(), ProjectFile)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := AppendRule(path, "allow", "X"); err == nil {
			t.Errorf("AppendRule on %q succeeded", text)
		}
		if data, _ := os.ReadFile(path); string(data) != text {
			t.Errorf("file %q was modified to %q", text, data)
		}
	}
	path := filepath.Join(t.TempDir(), ProjectFile)
	if err := AppendRule(path, "permit", "X"); err == nil {
		t.Error("unknown list accepted")
	}
	if err := AppendRule(path, "allow", " "); err == nil {
		t.Error("empty rule accepted")
	}
}

func TestAppendRuleQuotesSpecialCharacters(t *testing.T) {
	path := filepath.Join(t.TempDir(), ProjectFile)
	rule := `Bash(echo "a\b"	$x)`
	appendAndRead(t, path, "allow", rule)
	if p := rulesIn(t, path); !slices.Equal(p.Allow, []string{rule}) {
		t.Errorf("allow = %q, want %q", p.Allow, rule)
	}
}
