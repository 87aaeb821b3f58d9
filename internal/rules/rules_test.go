package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

type fix struct {
	t                      *testing.T
	root, home, user, repo string
}

func newFix(t *testing.T) *fix {
	root := t.TempDir()
	f := &fix{t: t, root: root, home: filepath.Join(root, "user", ".reasonix"), user: filepath.Join(root, "user"), repo: filepath.Join(root, "repo")}
	for _, d := range []string{f.home, f.repo} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fix) write(path, text string) string {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return path
}

func (f *fix) opts(cwd string) Options {
	return Options{Home: f.home, UserHome: f.user, Workspace: cwd, Cwd: cwd, NoGit: true,
		Now: func() time.Time { return time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC) }}
}

func sources(p *Prefix) []string {
	var out []string
	for _, pt := range p.Parts {
		out = append(out, pt.Kind+" "+pt.Source)
	}
	return out
}

func TestDiscoveryOrder(t *testing.T) {
	f := newFix(t)
	if err := os.MkdirAll(filepath.Join(f.repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(filepath.Join(f.repo, ".git", "HEAD"), "ref: refs/heads/feature/x\n")
	sub := filepath.Join(f.repo, "a", "b")
	files := []string{
		f.write(filepath.Join(f.home, "AGENTS.md"), "reasonix global"),
		f.write(filepath.Join(f.user, ".claude", "CLAUDE.md"), "claude global"),
		f.write(filepath.Join(f.repo, "AGENTS.md"), "root agents"),
		f.write(filepath.Join(f.repo, "CLAUDE.md"), "root claude"),
		f.write(filepath.Join(f.repo, ".claude", "CLAUDE.md"), "root dot claude"),
		f.write(filepath.Join(f.repo, "CRUSH.md"), "root crush"),
		f.write(filepath.Join(f.repo, "REASONIX.md"), "root reasonix"),
		f.write(filepath.Join(f.repo, "a", "CLAUDE.md"), "a claude"),
		f.write(filepath.Join(sub, "AGENTS.md"), "b agents"),
		f.write(filepath.Join(sub, "docs", "extra.md"), "extra"),
	}
	f.write(filepath.Join(f.root, "AGENTS.md"), "above the git root: never read")
	f.write(filepath.Join(f.repo, "a", "b", "c", "AGENTS.md"), "below cwd: never read")
	opts := f.opts(sub)
	opts.Instructions = []string{"docs/*.md", "missing.md"}
	p := Load(opts)
	got := sources(p)
	want := []string{"preamble reasonix"}
	kinds := []string{KindGlobal, KindGlobal, KindProject, KindProject, KindProject, KindProject, KindProject, KindProject, KindProject, KindInstructions}
	for i, file := range files {
		want = append(want, kinds[i]+" "+file)
	}
	want = append(want, "environment taken at session start")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	text := p.Text()
	if strings.Contains(text, "never read") {
		t.Errorf("read a file outside the walk:\n%s", text)
	}
	last := -1
	for _, s := range []string{"reasonix global", "claude global", "root agents", "root claude", "root dot claude", "root crush", "root reasonix", "a claude", "b agents", "extra"} {
		i := strings.Index(text, s)
		if i <= last {
			t.Errorf("%q out of order", s)
		}
		last = i
	}
	if !strings.Contains(text, `<rules source="`+files[2]+`" kind="project">`+"\nroot agents\n</rules>") {
		t.Errorf("project file not labelled:\n%s", text)
	}
	env := p.Parts[len(p.Parts)-1].Text
	for _, w := range []string{"Working directory: " + sub, "Workspace:", "Date: 2025-03-04", "Git branch: feature/x", "Git root: " + f.repo} {
		if w == "Workspace:" {
			if strings.Contains(env, w) {
				t.Errorf("workspace line when it equals cwd:\n%s", env)
			}
			continue
		}
		if !strings.Contains(env, w) {
			t.Errorf("environment lacks %q:\n%s", w, env)
		}
	}
	if len(p.Notices) != 1 || !strings.Contains(p.Notices[0], "missing.md") {
		t.Errorf("notices = %q", p.Notices)
	}
	// The same inputs give the same bytes.
	if again := Load(opts).Text(); again != text {
		t.Error("a second load differs")
	}
}

func TestNoGitRootWalksFromWorkspace(t *testing.T) {
	f := newFix(t)
	sub := filepath.Join(f.repo, "sub")
	f.write(filepath.Join(f.root, "AGENTS.md"), "above")
	f.write(filepath.Join(f.repo, "AGENTS.md"), "ws")
	f.write(filepath.Join(sub, "AGENTS.md"), "sub")
	opts := f.opts(sub)
	opts.Workspace = f.repo
	text := Load(opts).Text()
	if strings.Contains(text, "above") || !strings.Contains(text, "ws") || !strings.Contains(text, "sub") {
		t.Errorf("text:\n%s", text)
	}
	if !strings.Contains(text, "Workspace: "+f.repo) {
		t.Errorf("no workspace line:\n%s", text)
	}
	// Only the environment when there are no rules at all.
	empty := Load(f.opts(filepath.Join(f.root, "user")))
	if len(empty.Parts) != 1 || empty.Parts[0].Kind != KindEnvironment {
		t.Errorf("parts = %q", sources(empty))
	}
}

func TestGitFileWorktreeBranch(t *testing.T) {
	f := newFix(t)
	gd := filepath.Join(f.root, "main.git", "worktrees", "wt")
	f.write(filepath.Join(gd, "HEAD"), "0123456789abcdef0123456789abcdef01234567\n")
	f.write(filepath.Join(f.repo, ".git"), "gitdir: "+gd+"\n")
	if got := GitRoot(filepath.Join(f.repo, "x", "y")); got != f.repo {
		t.Errorf("GitRoot = %q", got)
	}
	if got := Branch(f.repo); got != "detached at 0123456" {
		t.Errorf("Branch = %q", got)
	}
}

func TestImports(t *testing.T) {
	f := newFix(t)
	f.write(filepath.Join(f.repo, "AGENTS.md"), "top\n@docs/style.md\n```\n@docs/not-imported.md\n```\nmail @someone\n@~/personal.md\n@nope/missing.md\nend\n")
	f.write(filepath.Join(f.repo, "docs", "style.md"), "style\n  @sub/nested.md\n")
	f.write(filepath.Join(f.repo, "docs", "sub", "nested.md"), "nested\n@../style.md\n")
	f.write(filepath.Join(f.repo, "docs", "not-imported.md"), "FENCED")
	f.write(filepath.Join(f.user, "personal.md"), "personal")
	// CLAUDE.md importing AGENTS.md, the usual pairing, adds nothing twice.
	f.write(filepath.Join(f.repo, "CLAUDE.md"), "@AGENTS.md\n")
	p := Load(f.opts(f.repo))
	text := p.Text()
	for _, w := range []string{
		"top\n<rules source=\"" + filepath.Join(f.repo, "docs", "style.md") + "\" imported-by=\"" + filepath.Join(f.repo, "AGENTS.md") + "\">\nstyle\n<rules source=\"" + filepath.Join(f.repo, "docs", "sub", "nested.md") + "\"",
		"nested\n@../style.md (not imported: import cycle)\n</rules>",
		"```\n@docs/not-imported.md\n```\nmail @someone\n",
		"personal\n</rules>",
		"@nope/missing.md (not found)\nend\n</rules>",
		"@AGENTS.md (included above)",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "FENCED") {
		t.Error("imported inside a code fence")
	}
	if n := strings.Count(text, "\ntop\n"); n != 1 {
		t.Errorf("AGENTS.md included %d times", n)
	}
	agents := p.Parts[1]
	if len(agents.Imports) != 3 {
		t.Errorf("imports = %q", agents.Imports)
	}
	joined := strings.Join(p.Notices, "\n")
	for _, w := range []string{"import ../style.md in " + filepath.Join(f.repo, "docs", "sub", "nested.md") + " refused", "nope/missing.md", "no such file"} {
		if !strings.Contains(joined, w) {
			t.Errorf("notices lack %q: %s", w, joined)
		}
	}
}

func TestImportDepthLimit(t *testing.T) {
	f := newFix(t)
	f.write(filepath.Join(f.repo, "AGENTS.md"), "level 0\n@d1.md\n")
	for i := 1; i <= MaxImportDepth+1; i++ {
		f.write(filepath.Join(f.repo, "d"+itoa(i)+".md"), "level "+itoa(i)+"\n@d"+itoa(i+1)+".md\n")
	}
	p := Load(f.opts(f.repo))
	text := p.Text()
	if !strings.Contains(text, "level 5") || strings.Contains(text, "level 6") {
		t.Errorf("depth not limited to %d:\n%s", MaxImportDepth, text)
	}
	if !strings.Contains(text, "@d6.md (not imported: too deeply nested)") {
		t.Errorf("no marker:\n%s", text)
	}
	if len(p.Notices) != 1 || !strings.Contains(p.Notices[0], "at most 5 deep") {
		t.Errorf("notices = %q", p.Notices)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestCaps(t *testing.T) {
	f := newFix(t)
	big := strings.Repeat("x", 2<<20)
	f.write(filepath.Join(f.repo, "AGENTS.md"), "héllo "+big)
	f.write(filepath.Join(f.repo, "CLAUDE.md"), strings.Repeat("y", 50<<10))
	f.write(filepath.Join(f.repo, "REASONIX.md"), strings.Repeat("z", 50<<10))
	f.write(filepath.Join(f.repo, ".claude", "CLAUDE.md"), "left out")
	p := Load(f.opts(f.repo))
	if got := len(p.Parts[1].Text); got > FileCap+1000 || got < FileCap {
		t.Errorf("AGENTS.md part is %d bytes", got)
	}
	if !strings.Contains(p.Parts[1].Text, "[cut: "+filepath.Join(f.repo, "AGENTS.md")+" is 2.0 MB; only the first 64 KB is included because rules files are capped at 64 KB each]") {
		t.Errorf("no cut marker: %s", p.Parts[1].Text[len(p.Parts[1].Text)-300:])
	}
	// 64 KB + 50 KB leaves 14 KB of the 128 KB for REASONIX.md
	// (.claude/CLAUDE.md comes before it and is small).
	var total int
	for _, pt := range p.Parts[1:] {
		if pt.Kind != KindEnvironment {
			total += strings.Count(pt.Text, "x") + strings.Count(pt.Text, "y") + strings.Count(pt.Text, "z")
		}
	}
	if total > TotalCap {
		t.Errorf("rules total %d > %d", total, TotalCap)
	}
	joined := strings.Join(p.Notices, "\n")
	for _, w := range []string{"AGENTS.md is 2.0 MB", "REASONIX.md is 50 KB", "the rules total is capped at 128 KB"} {
		if !strings.Contains(joined, w) {
			t.Errorf("notices lack %q:\n%s", w, joined)
		}
	}
	// Once the budget is spent, later files are left out by name.
	f.write(filepath.Join(f.repo, "sub", "AGENTS.md"), "late")
	opts := f.opts(filepath.Join(f.repo, "sub"))
	opts.Workspace = f.repo
	p = Load(opts)
	if !strings.Contains(strings.Join(p.Notices, "\n"), filepath.Join(f.repo, "sub", "AGENTS.md")+" left out") {
		t.Errorf("notices = %q", p.Notices)
	}
	if strings.Contains(p.Text(), "late") {
		t.Error("file past the budget included")
	}
}

func TestSummarize(t *testing.T) {
	if got := summarize(nil); got != "clean" {
		t.Errorf("empty = %q", got)
	}
	var b strings.Builder
	b.WriteString(" M a.go\n?? new.txt\nR  old -> new\nUU both.go\n")
	for i := range 10 {
		b.WriteString("?? u" + itoa(i) + "\n")
	}
	got := summarize([]byte(b.String()))
	if !strings.HasPrefix(got, "1 modified, 11 untracked, 1 renamed, 1 conflicted\n   M a.go\n") || !strings.HasSuffix(got, "\n  ... 4 more") {
		t.Errorf("summary = %q", got)
	}
}

func TestGitStatusWhenGitIsThere(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	f := newFix(t)
	cmd := exec.Command("git", "init", "-q", "-b", "trunk", f.repo)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	f.write(filepath.Join(f.repo, "new.txt"), "x")
	opts := f.opts(f.repo)
	opts.NoGit = false
	env := Load(opts).Text()
	for _, w := range []string{"Git branch: trunk", "Git status: 1 untracked\n  ?? new.txt"} {
		if !strings.Contains(env, w) {
			t.Errorf("environment lacks %q:\n%s", w, env)
		}
	}
	// A .git that git does not understand leaves the status line out.
	g := newFix(t)
	if err := os.MkdirAll(filepath.Join(g.repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	opts = g.opts(g.repo)
	opts.NoGit = false
	if env := Load(opts).Text(); strings.Contains(env, "Git status") || !strings.Contains(env, "Git root: "+g.repo) {
		t.Errorf("environment:\n%s", env)
	}
}

// A git status started ahead (StartStatus) is the one the environment
// reports, taken when it was started; one started for another directory
// is not used; Close stops and waits for one no Load took.
func TestStartedGitStatus(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	f := newFix(t)
	cmd := exec.Command("git", "init", "-q", "-b", "trunk", f.repo)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	f.write(filepath.Join(f.repo, "new.txt"), "x")
	st := StartStatus(f.repo, 0)
	if _, ok := st.result(); !ok {
		t.Fatal("git status failed")
	}
	// Written after the status was taken: not in the block.
	f.write(filepath.Join(f.repo, "later.txt"), "x")
	opts := f.opts(f.repo)
	opts.NoGit = false
	opts.Status = st
	env := Load(opts).Text()
	if !strings.Contains(env, "Git status: 1 untracked\n  ?? new.txt") || strings.Contains(env, "later.txt") {
		t.Errorf("environment does not report the started status:\n%s", env)
	}
	opts.Status = StartStatus(t.TempDir(), 0)
	if env := Load(opts).Text(); !strings.Contains(env, "Git status: 2 untracked") {
		t.Errorf("a status started elsewhere was used, or none was run:\n%s", env)
	}
	opts.Status.Close()
	idle := StartStatus(f.repo, 0)
	idle.Close()
	if idle.cmd.ProcessState == nil {
		t.Error("Close did not wait for git")
	}
}

// TestInlineImports: as in Claude Code, an @path mention inside prose or
// a list item imports the file it names (after its line); a mention that
// names no file, an address, a code span and a fenced block stay text.
func TestInlineImports(t *testing.T) {
	f := newFix(t)
	f.write(filepath.Join(f.repo, "CLAUDE.md"), "See @README for the overview and @package.json.\n"+
		"- @docs/style.md\nWrite to ops@docs/style.md or @alice, install @types/node.\n"+
		"Not `@docs/code.md` either.\n```\nsee @docs/fenced.md\n```\nAgain @docs/style.md\n")
	f.write(filepath.Join(f.repo, "README"), "README-TEXT\n")
	f.write(filepath.Join(f.repo, "package.json"), `{"scripts":{"test":"PKG-TEXT"}}`)
	f.write(filepath.Join(f.repo, "docs", "style.md"), "STYLE-TEXT\n")
	f.write(filepath.Join(f.repo, "docs", "code.md"), "CODE-SPAN-TEXT\n")
	f.write(filepath.Join(f.repo, "docs", "fenced.md"), "FENCED-TEXT\n")
	p := Load(f.opts(f.repo))
	text := p.Text()
	claude := filepath.Join(f.repo, "CLAUDE.md")
	for _, w := range []string{
		"See @README for the overview and @package.json.\n<rules source=\"" + filepath.Join(f.repo, "README") + "\" imported-by=\"" + claude + "\">\nREADME-TEXT\n</rules>\n<rules source=\"" + filepath.Join(f.repo, "package.json") + "\"",
		"- @docs/style.md\n<rules source=\"" + filepath.Join(f.repo, "docs", "style.md") + "\"",
		"Write to ops@docs/style.md or @alice, install @types/node.\nNot `@docs/code.md` either.\n",
		"Again @docs/style.md\n</rules>",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
	for _, w := range []string{"CODE-SPAN-TEXT", "FENCED-TEXT"} {
		if strings.Contains(text, w) {
			t.Errorf("%s imported:\n%s", w, text)
		}
	}
	if n := strings.Count(text, "STYLE-TEXT"); n != 1 {
		t.Errorf("style.md included %d times", n)
	}
	if len(p.Notices) != 0 {
		t.Errorf("notices %q: a mention that names no file is not an import", p.Notices)
	}
}

// TestClaudeLocalAndRulesFolder: Claude Code's CLAUDE.local.md and the
// Markdown files of .claude/rules (subfolders too, and the user's
// ~/.claude/rules) are rules files; one whose frontmatter scopes it to
// paths says so in its block and the preamble says what that means.
func TestClaudeLocalAndRulesFolder(t *testing.T) {
	f := newFix(t)
	f.write(filepath.Join(f.repo, "CLAUDE.md"), "SHARED\n")
	f.write(filepath.Join(f.repo, "CLAUDE.local.md"), "LOCAL\n")
	f.write(filepath.Join(f.repo, ".claude", "rules", "testing.md"), "TESTING-RULE\n")
	f.write(filepath.Join(f.repo, ".claude", "rules", "frontend", "react.md"), "---\npaths:\n  - \"src/**/*.tsx\"\n  - 'web/**'\n---\nREACT-RULE\n")
	f.write(filepath.Join(f.repo, ".claude", "rules", "api.md"), "---\npaths: src/api/**/*.ts\n---\nAPI-RULE\n")
	f.write(filepath.Join(f.repo, ".claude", "rules", "notes.txt"), "NOT-MARKDOWN\n")
	f.write(filepath.Join(f.user, ".claude", "rules", "mine.md"), "USER-RULE\n")
	p := Load(f.opts(f.repo))
	rules := filepath.Join(f.repo, ".claude", "rules")
	want := []string{
		"preamble reasonix",
		"global " + filepath.Join(f.user, ".claude", "rules", "mine.md"),
		"project " + filepath.Join(f.repo, "CLAUDE.md"),
		"project " + filepath.Join(f.repo, "CLAUDE.local.md"),
		"project " + filepath.Join(rules, "api.md"),
		"project " + filepath.Join(rules, "frontend", "react.md"),
		"project " + filepath.Join(rules, "testing.md"),
		"environment taken at session start",
	}
	if got := sources(p); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("parts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	text := p.Text()
	for _, w := range []string{
		`applies-to="src/api/**/*.ts">`, `applies-to="src/**/*.tsx, web/**">`, "A block with applies-to holds rules",
		`<rules source="` + filepath.Join(rules, "testing.md") + `" kind="project">`,
	} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "NOT-MARKDOWN") {
		t.Error("a file that is not Markdown was read")
	}
}

// TestNested: the rules files between the working directory and a path,
// each once; nothing for paths at or above the working directory or
// outside it; a worktree root reads its own copy.
func TestNested(t *testing.T) {
	f := newFix(t)
	f.write(filepath.Join(f.repo, "CLAUDE.md"), "ROOT\n")
	f.write(filepath.Join(f.repo, "a", "CLAUDE.md"), "A-RULES\n")
	f.write(filepath.Join(f.repo, "a", "b", "AGENTS.md"), "B-RULES\n")
	f.write(filepath.Join(f.repo, "a", "b", "x.go"), "package b\n")
	n := NewNested(f.opts(f.repo), f.repo, nil)
	got, files := n.Attach([]string{"a/b/x.go"})
	if want := []string{filepath.Join(f.repo, "a", "CLAUDE.md"), filepath.Join(f.repo, "a", "b", "AGENTS.md")}; !slices.Equal(files, want) {
		t.Errorf("attached files %v, want %v", files, want)
	}
	if !strings.Contains(got, "A-RULES") || !strings.Contains(got, "B-RULES") || strings.Contains(got, "ROOT") ||
		strings.Index(got, "A-RULES") > strings.Index(got, "B-RULES") {
		t.Errorf("first reach: %q", got)
	}
	for _, p := range []string{"a/b/x.go", "a", "README.md", "../elsewhere/x", filepath.Join(f.root, "x")} {
		if got, files := n.Attach([]string{p}); got != "" || files != nil {
			t.Errorf("%s: %q, want nothing", p, got)
		}
	}
	tree := filepath.Join(f.root, "worktree")
	f.write(filepath.Join(tree, "a", "CLAUDE.md"), "WORKTREE-A\n")
	if got, _ := NewNested(f.opts(f.repo), tree, nil).Attach([]string{"a/y.go"}); !strings.Contains(got, "WORKTREE-A") {
		t.Errorf("worktree: %q", got)
	}
}

// TestNestedHoldsWhatTheSessionHas: a file the prefix holds (imported by
// the top CLAUDE.md) is not attached, in the workspace or as a worktree's
// copy; a file two folders' rules import is attached with the first and
// "included above" in the second; after Hold with the results a history
// records, what they hold is not attached again and what they lost is.
func TestNestedHoldsWhatTheSessionHas(t *testing.T) {
	f := newFix(t)
	f.write(filepath.Join(f.repo, "CLAUDE.md"), "ROOT\n@lib/CLAUDE.md\n")
	f.write(filepath.Join(f.repo, "lib", "CLAUDE.md"), "LIB-RULES\n")
	f.write(filepath.Join(f.repo, "api", "CLAUDE.md"), "API-RULES\n@../shared.md\n")
	f.write(filepath.Join(f.repo, "web", "CLAUDE.md"), "WEB-RULES\n@../shared.md\n")
	f.write(filepath.Join(f.repo, "shared.md"), "SHARED\n")
	p := Load(f.opts(f.repo))
	if files := p.Files(); len(files) != 2 || files[1] != filepath.Join(f.repo, "lib", "CLAUDE.md") {
		t.Fatalf("prefix files %v", files)
	}
	n := NewNested(f.opts(f.repo), f.repo, p.Files)
	if got, _ := n.Attach([]string{"lib/x.go"}); got != "" {
		t.Errorf("a file the prefix imports was attached: %q", got)
	}
	api, apiFiles := n.Attach([]string{"api/x.go"})
	web, _ := n.Attach([]string{"web/x.go"})
	if !strings.Contains(api, "API-RULES") || !strings.Contains(api, "SHARED") ||
		!strings.Contains(web, "WEB-RULES") || strings.Contains(web, "SHARED") || !strings.Contains(web, "included above") {
		t.Errorf("api: %q\nweb: %q", api, web)
	}

	if want := []string{filepath.Join(f.repo, "api", "CLAUDE.md"), filepath.Join(f.repo, "shared.md")}; !slices.Equal(apiFiles, want) {
		t.Errorf("api attached %v, want %v", apiFiles, want)
	}

	// A resumed session: its history carries the api result only.
	r := NewNested(f.opts(f.repo), f.repo, p.Files)
	r.Hold(apiFiles)
	if got, _ := r.Attach([]string{"api/y.go"}); got != "" {
		t.Errorf("after Hold, api's rules were attached again: %q", got)
	}
	if got, _ := r.Attach([]string{"web/y.go"}); !strings.Contains(got, "WEB-RULES") || strings.Contains(got, "SHARED\n") {
		t.Errorf("after Hold, web: %q", got)
	}
	// A compaction pruned every result: both folders' rules come back.
	r.Hold(nil)
	if got, _ := r.Attach([]string{"api/y.go"}); !strings.Contains(got, "API-RULES") || !strings.Contains(got, "SHARED") {
		t.Errorf("after a compaction, api: %q", got)
	}

	// A worktree: the prefix's files, read in the workspace, stand for
	// the worktree's copies.
	tree := filepath.Join(f.root, "worktree")
	f.write(filepath.Join(tree, "lib", "CLAUDE.md"), "LIB-RULES\n")
	f.write(filepath.Join(tree, "api", "CLAUDE.md"), "TREE-API\n")
	w := NewNested(f.opts(f.repo), tree, p.Files)
	if got, _ := w.Attach([]string{"lib/x.go", "api/x.go"}); strings.Contains(got, "LIB-RULES") || !strings.Contains(got, "TREE-API") {
		t.Errorf("worktree: %q", got)
	}
}

// A repository's own configuration cannot make the start-up git status
// run a program (core.fsmonitor), and git does not get Reasonix's keys.
func TestGitStatusRunsNoRepositoryProgram(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	f := newFix(t)
	if out, err := exec.Command("git", "init", "-q", f.repo).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	hook := filepath.Join(t.TempDir(), "monitor.sh")
	f.write(hook, "#!/bin/sh\nenv > "+marker+"\nexit 1\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", f.repo, "config", "core.fsmonitor", hook).CombinedOutput(); err != nil {
		t.Fatalf("git config: %v %s", err, out)
	}
	// Without the guard, git runs the monitor (checked, so this test
	// shows something): the configuration is the attack.
	if out, err := exec.Command("git", "-C", f.repo, "status", "--porcelain").CombinedOutput(); err != nil {
		t.Logf("plain git status: %v %s", err, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Skip("this git does not run core.fsmonitor programs; nothing to guard")
	}
	_ = os.Remove(marker)
	t.Setenv("REASONIX_API_KEY", "sk-should-not-reach-git")
	st := StartStatus(f.repo, 0)
	if _, ok := st.result(); !ok {
		t.Fatal("git status failed")
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the repository's core.fsmonitor ran (keys in its environment: %v)", strings.Contains(string(b), "sk-should"))
	}
	if env := gitEnv([]string{"PATH=/bin", "REASONIX_API_KEY=x", "DEEPSEEK_API_KEY=y", "GIT_DIR=/r/.git", "HOME=/h"}); strings.Join(env, " ") != "PATH=/bin GIT_DIR=/r/.git HOME=/h" {
		t.Errorf("gitEnv = %v", env)
	}
}

// A repository whose own configuration defines a filter program (or
// includes another configuration file) gets no start-up status: git would
// run the program for a file whose stat changed.
func TestGitStatusNotRunWhereTheRepositoryNamesFilters(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	f := newFix(t)
	if out, err := exec.Command("git", "init", "-q", f.repo).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	f.write(filepath.Join(f.repo, ".gitattributes"), "*.txt filter=evil\n")
	f.write(filepath.Join(f.repo, "a.txt"), "x\n")
	if out, err := exec.Command("git", "-C", f.repo, "add", "a.txt", ".gitattributes").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v %s", err, out)
	}
	if out, err := exec.Command("git", "-C", f.repo, "config", "filter.evil.clean", "touch "+marker+"; cat").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v %s", err, out)
	}
	// Same size, a later time: the status must look at the content, and
	// so runs the clean filter on it.
	f.write(filepath.Join(f.repo, "a.txt"), "y\n")
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(filepath.Join(f.repo, "a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	st := StartStatus(f.repo, 0)
	if _, ok := st.result(); ok {
		t.Error("the status ran")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the repository's filter program ran")
	}
	// A repository without such configuration still gets its status.
	g := newFix(t)
	if out, err := exec.Command("git", "init", "-q", g.repo).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	if _, ok := StartStatus(g.repo, 0).result(); !ok {
		t.Error("a plain repository got no status")
	}
}
