package commands

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDiscoverLayoutsAndPrecedence(t *testing.T) {
	d := t.TempDir()
	ws, home, user := filepath.Join(d, "ws"), filepath.Join(d, "u", ".reasonix"), filepath.Join(d, "u")
	review := write(t, filepath.Join(ws, ".claude/commands/review.md"), "---\ndescription: Review the diff\nargument-hint: [focus]\nallowed-tools: Bash(git diff:*), Bash(git status:*)\nmodel: fast\ndisable-model-invocation: true\n---\nReview $1.\n")
	write(t, filepath.Join(user, ".claude/commands/review.md"), "---\ndescription: user copy\n---\nUser.\n")
	write(t, filepath.Join(ws, ".claude/commands/git/commit.md"), "Commit the staged changes.\n\nMore.\n")
	write(t, filepath.Join(home, "commands/mine.md"), "---\ndescription: mine\n---\nMine.\n")
	write(t, filepath.Join(user, ".claude/commands/.hidden/x.md"), "no")
	write(t, filepath.Join(ws, ".reasonix/commands/notes.txt"), "no")
	broken := write(t, filepath.Join(ws, ".reasonix/commands/broken.md"), "---\n# a comment\n!!! [not a key\ndescription: x\n---\nbody\n")
	unclosed := write(t, filepath.Join(ws, ".reasonix/commands/unclosed.md"), "---\ndescription: x\n")
	badName := write(t, filepath.Join(ws, ".reasonix/commands/bad name.md"), "x")

	c, notices := Discover(Options{Workspace: ws, Home: home, UserHome: user})
	var names []string
	for _, cmd := range c.List() {
		names = append(names, cmd.Name)
	}
	if want := []string{"broken", "git:commit", "mine", "review"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("names = %v, want %v; notices %q", names, want, notices)
	}
	r, _ := c.Get("review")
	if r.Path != review || r.Source != SourceProject || r.Description != "Review the diff" || r.ArgumentHint != "[focus]" ||
		r.Model != "fast" || !r.DisableModelInvocation || !reflect.DeepEqual(r.AllowedTools, []string{"Bash(git diff:*)", "Bash(git status:*)"}) {
		t.Errorf("review = %+v", r)
	}
	if g, _ := c.Get("git:commit"); g.Description != "Commit the staged changes." {
		t.Errorf("description from the body: %+v", g)
	}
	if b, _ := c.Get("broken"); b.Description != "x" {
		t.Errorf("a line that is no key lost the command's keys: %+v", b)
	}
	if m, _ := c.Get("mine"); m.Source != SourceUser {
		t.Errorf("mine = %+v", m)
	}
	for _, want := range [][]string{
		{broken, "line 3", "left out"},
		{unclosed, "line 1", "never closed"},
		{badName, "not a command name"},
		{"shadowed by " + review},
	} {
		found := false
		for _, n := range notices {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(n, w)
			}
			found = found || ok
		}
		if !found {
			t.Errorf("no notice with %q in\n%s", want, strings.Join(notices, "\n"))
		}
	}
	body, err := r.Body()
	if err != nil || body != "Review $1." {
		t.Errorf("body = %q, %v", body, err)
	}
}

func TestRender(t *testing.T) {
	for _, c := range []struct{ body, args, want string }{
		{"Review $1 then $2.", "auth.go", "Review auth.go then ."},
		{"All: $ARGUMENTS; first $1", `"two words" x`, `All: "two words" x; first two words`},
		{"Costs $$5 and $10", "a b c d e f g h i j", "Costs $5 and j"},
		{"No placeholders.", "focus on tests", "No placeholders.\n\nARGUMENTS: focus on tests"},
		{"No placeholders.", "", "No placeholders."},
		{"Trailing $", "x", "Trailing $\n\nARGUMENTS: x"},
	} {
		if got := Render(c.body, c.args); got != c.want {
			t.Errorf("Render(%q, %q) = %q, want %q", c.body, c.args, got, c.want)
		}
	}
}

func TestShellSpans(t *testing.T) {
	text := "Status: !`git status`\n!`git diff HEAD`\ndone!`no` and !`` and !`unclosed\nx`"
	var got []string
	for _, s := range ShellSpans(text) {
		got = append(got, s.Command+"|"+text[s.Start:s.End])
	}
	want := []string{"git status|!`git status`", "git diff HEAD|!`git diff HEAD`"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spans = %q, want %q", got, want)
	}
}

func TestNear(t *testing.T) {
	names := []string{"review", "review-pr", "git:commit", "commit-push-pr", "deploy"}
	if got := Near("reveiw", names); len(got) == 0 || got[0] != "review" {
		t.Errorf("Near(reveiw) = %v", got)
	}
	if got := Near("commit", names); !reflect.DeepEqual(got, []string{"commit-push-pr", "git:commit"}) {
		t.Errorf("Near(commit) = %v", got)
	}
	if got := Near("zzzzzz", names); len(got) != 0 {
		t.Errorf("Near(zzzzzz) = %v", got)
	}
}

func TestFindRefs(t *testing.T) {
	var got []string
	for _, r := range FindRefs("see @src/a.go#L1-3, (@docs) me@x.com @alice. @b.go#L7 @c.go#Lx") {
		got = append(got, r.Token+"|"+r.Path)
	}
	want := []string{"src/a.go#L1-3|src/a.go", "docs|docs", "alice|alice", "b.go#L7|b.go", "c.go#Lx|c.go#Lx"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("refs = %q, want %q", got, want)
	}
	// A path with spaces is quoted, as Claude Code writes it; a quote
	// left open ends nothing and is text.
	got = nil
	for _, r := range FindRefs(`read @"my docs/a b.md", @"x y.go#L2-4" and (@"文件 名.txt") then @"open ended`) {
		got = append(got, r.Token+"|"+r.Path)
	}
	want = []string{`"my docs/a b.md"|my docs/a b.md`, `"x y.go#L2-4"|x y.go`, `"文件 名.txt"|文件 名.txt`, `"open|"open`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("quoted refs = %q, want %q", got, want)
	}
}

func TestInline(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "src/a.go"), "package a\n\nfunc A() {}\n\nfunc B() {}\n")
	write(t, filepath.Join(ws, "src/gen/out.txt"), "ignored\n")
	write(t, filepath.Join(ws, "src/.gitignore"), "gen/\n")
	write(t, filepath.Join(ws, ".env"), "KEY=secret\n")
	write(t, filepath.Join(ws, "img.bin"), "\x00\x01\x02")
	write(t, filepath.Join(ws, "big.txt"), strings.Repeat("x", MaxRefFile+10))
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := write(t, filepath.Join(t.TempDir(), "secret.txt"), "outside\n")
	o := RefOptions{Root: ws, Denied: func(abs string) string {
		if filepath.Base(abs) == ".env" {
			return "Read(./.env)"
		}
		return ""
	}}
	text := "look at @src/a.go#L3-3 and @src and @img.bin and @big.txt, not @.env or @" + outside + " or @../x; ping @alice"
	got, notices := Inline(text, o)
	if !strings.HasPrefix(got, text) {
		t.Fatalf("the typed text changed: %q", got)
	}
	for _, want := range []string{
		"<file path=\"src/a.go\" lines=\"3-3\">\nfunc A() {}\n</file>",
		"<directory path=\"src\">\n.gitignore\na.go\n</directory>",
		"<file path=\"img.bin\">\n(binary file, 3 bytes; not inlined)\n</file>",
		"bytes shown; read the file for the rest",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	for _, bad := range []string{"secret", "package a", "gen/", "outside\n"} {
		if strings.Contains(got[len(text):], bad) {
			t.Errorf("inlined %q:\n%s", bad, got)
		}
	}
	joined := strings.Join(notices, "\n")
	for _, want := range []string{"@.env is not inlined: reading it is denied by Read(./.env)", "outside the workspace"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no notice %q in\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "alice") {
		t.Errorf("a mention earned a notice: %s", joined)
	}
	if _, n := Inline("@src/a.go#L90-99", o); len(n) != 1 || !strings.Contains(n[0], "5 lines") {
		t.Errorf("range past the end: %q", n)
	}
}

// TestInvalidYAMLFrontmatter: a Claude Code command file whose
// frontmatter is not valid YAML (unquoted colons, a capitalised key, a
// key given twice, a blank line before the block) loads with every key
// that can be read; each line that cannot is a notice naming the file and
// line; the body never includes the block.
func TestInvalidYAMLFrontmatter(t *testing.T) {
	ws := t.TempDir()
	fix := write(t, filepath.Join(ws, ".claude/commands/fix.md"),
		"---\ndescription: Fix: the failing test\nModel: opus\nargument-hint: [test-name] [flags]\n"+
			"allowed-tools: Bash(go test:*), Read\nmodel: fast\ndescription: again\n---\nRun $1.\n")
	lead := write(t, filepath.Join(ws, ".claude/commands/lead.md"), "\n\n---\ndescription: Led by blank lines\nmodel: fast\n---\nLead body.\n")
	block := write(t, filepath.Join(ws, ".claude/commands/block.md"), "---\ndescription: Colons: fine\nargument-hint: |\n  usage: x\n---\nBlock body.\n")
	sub := write(t, filepath.Join(ws, ".claude/commands/sub.md"), "---\ndescription: Review\n  focus: the diff\n---\nSub body.\n")
	c, notices := Discover(Options{Workspace: ws})
	if s, _ := c.Get("sub"); s.Description != "Review\nfocus: the diff" {
		t.Errorf("sub = %+v", s)
	}
	f, ok := c.Get("fix")
	if !ok || f.Description != "again" || f.ArgumentHint != "[test-name] [flags]" || f.Model != "fast" ||
		!reflect.DeepEqual(f.AllowedTools, []string{"Bash(go test:*)", "Read"}) {
		t.Errorf("fix = %+v, %v (notices %q)", f, ok, notices)
	}
	l, ok := c.Get("lead")
	if !ok || l.Description != "Led by blank lines" || l.Model != "fast" {
		t.Errorf("lead = %+v, %v", l, ok)
	}
	for cmd, want := range map[string]string{"fix": "Run $1.", "lead": "Lead body.", "block": "Block body."} {
		got, _ := c.Get(cmd)
		if body, err := got.Body(); err != nil || body != want {
			t.Errorf("/%s body = %q, %v; want %q", cmd, body, err, want)
		}
	}
	want := [][]string{
		{fix, "line 3", "Model: opus", "left out"},
		{fix, "line 7", "description is given again"},
		{sub, "line 3", "does not set the key focus", "read as part of description"},
	}
	if len(notices) != len(want) {
		t.Errorf("notices = %q, want %d", notices, len(want))
	}
	for _, w := range want {
		found := false
		for _, n := range notices {
			ok := true
			for _, part := range w {
				ok = ok && strings.Contains(n, part)
			}
			found = found || ok
		}
		if !found {
			t.Errorf("no notice with %q in\n%s", w, strings.Join(notices, "\n"))
		}
	}
	for _, n := range notices {
		if strings.Contains(n, lead) || strings.Contains(n, block) {
			t.Errorf("a notice for a file with nothing lost: %s", n)
		}
	}
}
