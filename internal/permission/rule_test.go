package permission

import (
	"strings"
	"testing"
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
