package permission

import (
	"errors"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

// TestBashRuleInnerWildcard: Claude Code's Bash(git * main) and
// Bash(* --version) match the whole command, * spanning words; deny and
// ask rules find the command by its base name and ignore case; an allow
// rule of this form is a prefix rule for risky options (dropped then).
func TestBashRuleInnerWildcard(t *testing.T) {
	for _, c := range []struct {
		rule  string
		words string
		loose bool
		want  bool
	}{
		{"Bash(git * main)", "git push origin main", false, true},
		{"Bash(git * main)", "git push origin dev", false, false},
		{"Bash(git * main)", "git main", false, false},
		{"Bash(* --version)", "node --version", false, true},
		{"Bash(* --version)", "node --version --x", false, false},
		{"Bash(npm * --save)", "npm install left-pad --save", false, true},
		{"Bash(curl * evil.example)", "/usr/bin/CURL -s evil.example", true, true},
		{"Bash(curl * evil.example)", "/usr/bin/CURL -s evil.example", false, false},
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Fatalf("%s: %v", c.rule, err)
		}
		if got := r.matchWords(strings.Fields(c.words), c.loose); got != c.want {
			t.Errorf("%s on %q (loose %v) = %v, want %v", c.rule, c.words, c.loose, got, c.want)
		}
	}
	allow, _ := ParseRule("Bash(sort * data.txt)")
	if rules := exactWhenRisky(&shellAnalysis{noPrefix: []string{"-o"}}, []Rule{allow}); len(rules) != 0 {
		t.Errorf("a wildcard allow rule survived a risky option: %+v", rules)
	}
}

// TestWithholds: a deny rule without a specifier withholds every tool it
// applies to (a family's tools, one tool, a whole MCP server); a scoped
// deny rule, an ask rule or an allow rule withholds nothing.
func TestWithholds(t *testing.T) {
	for _, c := range []struct {
		deny, ask []string
		tool      string
		want      bool
	}{
		{[]string{"Bash"}, nil, "bash", true},
		{[]string{"Bash(rm:*)"}, nil, "bash", false},
		{[]string{"Bash(* --force)"}, nil, "bash", false},
		{nil, []string{"Bash"}, "bash", false},
		{[]string{"Edit"}, nil, "write_file", true},
		{[]string{"Edit"}, nil, "read_file", false},
		{[]string{"Edit(./x)"}, nil, "write_file", false},
		{[]string{"WebFetch"}, nil, "web_fetch", true},
		{[]string{"WebFetch(domain:example.com)"}, nil, "web_fetch", false},
		{[]string{"Task"}, nil, "task", true},
		{[]string{"Task(general)"}, nil, "task", false},
		{[]string{"mcp__gh"}, nil, "mcp__gh__issues", true},
		{[]string{"mcp__gh__*"}, nil, "mcp__gh__issues", true},
		{[]string{"mcp__gh__issues"}, nil, "mcp__gh__issues", true},
		{[]string{"mcp__gh__issues"}, nil, "mcp__gh__pulls", false},
		{[]string{"todo_write"}, nil, "todo_write", true},
		// Claude Code: a bare Read covers every file reader, a bare Grep,
		// Glob or LS that tool alone; likewise Edit and Write, MultiEdit.
		{[]string{"Read"}, nil, "grep", true},
		{[]string{"Read"}, nil, "ls", true},
		{[]string{"Grep"}, nil, "grep", true},
		{[]string{"Grep"}, nil, "read_file", false},
		{[]string{"Grep"}, nil, "ls", false},
		{[]string{"Grep"}, nil, "glob", false},
		{[]string{"Glob"}, nil, "glob", true},
		{[]string{"Glob"}, nil, "grep", false},
		{[]string{"LS"}, nil, "ls", true},
		{[]string{"LS"}, nil, "read_file", false},
		{[]string{"Write"}, nil, "write_file", true},
		{[]string{"Write"}, nil, "edit_file", false},
		{[]string{"MultiEdit"}, nil, "multi_edit", true},
		{[]string{"MultiEdit"}, nil, "edit_file", false},
		{[]string{"Edit"}, nil, "multi_edit", true},
		{[]string{"Grep(secrets/**)"}, nil, "grep", false},
	} {
		p, err := ParsePolicy("", nil, c.ask, c.deny, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Withholds(c.tool); got != c.want {
			t.Errorf("deny %v ask %v: Withholds(%s) = %v, want %v", c.deny, c.ask, c.tool, got, c.want)
		}
	}
}

// A bare Claude Code rule naming one reader or writer decides that tool's
// calls only, while a scoped one is a path rule of its family: Grep(x)
// denies reading x by every reader, as Read(x) does.
func TestClaudeOneToolRules(t *testing.T) {
	read := func(p string) tools.Access { return tools.Access{Kind: tools.KindRead, Reads: []string{p}} }
	write := tools.Access{Kind: tools.KindWrite, Writes: []string{"a.txt"}}
	p, err := ParsePolicy("ask", nil, nil, []string{"Grep", "Write", "Glob(secrets/**)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Workspace = t.TempDir()
	for _, c := range []struct {
		tool string
		ro   bool
		acc  tools.Access
		want Decision
	}{
		{"grep", true, read("src"), Deny},
		{"read_file", true, read("src/a.go"), Allow},
		{"glob", true, read("src"), Allow},
		{"ls", true, read("src"), Allow},
		{"read_file", true, read("secrets/key"), Deny},
		{"write_file", false, write, Deny},
		{"edit_file", false, write, Ask},
	} {
		if got := p.Explain(c.tool, c.ro, c.acc); got.Decision != c.want {
			t.Errorf("%s %+v: %v, want %v (%s)", c.tool, c.acc, got.Decision, c.want, got.Reason)
		}
	}
	if _, err := ParseRule("NotebookEdit"); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("a bare NotebookEdit (no such tool) parsed: %v", err)
	}
	if r, err := ParseRule("NotebookEdit(docs/**)"); err != nil || r.Family != FamilyEdit {
		t.Errorf("NotebookEdit(docs/**) = %+v, %v; want an Edit path rule", r, err)
	}
}
