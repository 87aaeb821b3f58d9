package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func skillMD(name, desc, extra string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n%s---\n\n# %s\n\nDo the thing.\n", name, desc, extra, name)
}

type fixture struct {
	ws, home, userHome string
}

func newFixture(t *testing.T) fixture {
	d := t.TempDir()
	f := fixture{ws: filepath.Join(d, "ws"), home: filepath.Join(d, "home", ".reasonix"), userHome: filepath.Join(d, "home")}
	for _, p := range []string{f.ws, f.home} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f fixture) opts() Options { return Options{Workspace: f.ws, Home: f.home, UserHome: f.userHome} }

func names(c *Catalog) []string {
	var out []string
	for _, s := range c.List() {
		out = append(out, s.Name)
	}
	return out
}

func hasNotice(notices []string, parts ...string) bool {
	for _, n := range notices {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(n, p)
		}
		if all {
			return true
		}
	}
	return false
}

func TestDiscoverRootsAndPrecedence(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.ws, ".reasonix/skills/deploy/SKILL.md"), skillMD("deploy", "Project deploy.", ""))
	writeFile(t, filepath.Join(f.ws, ".claude/skills/review/SKILL.md"), skillMD("review", "Review code.", ""))
	writeFile(t, filepath.Join(f.ws, ".agents/skills/lint/SKILL.md"), skillMD("lint", "Lint code.", ""))
	writeFile(t, filepath.Join(f.home, "skills/deploy/SKILL.md"), skillMD("deploy", "User deploy.", ""))
	writeFile(t, filepath.Join(f.home, "skills/notes/SKILL.md"), skillMD("notes", "Take notes.", ""))
	writeFile(t, filepath.Join(f.userHome, ".claude/skills/pdf/SKILL.md"), skillMD("pdf", "PDF work.", ""))
	writeFile(t, filepath.Join(f.ws, "extra/single/SKILL.md"), skillMD("single", "A configured skill.", ""))
	writeFile(t, filepath.Join(f.ws, ".reasonix/skills/not-a-skill/README.md"), "no SKILL.md here")

	opts := f.opts()
	opts.Paths = []string{"extra/single"}
	c, notices := Discover(opts)
	if got, want := names(c), []string{"deploy", "lint", "notes", "pdf", "review", "single"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("skills = %v, want %v (notices %q)", got, want, notices)
	}
	d, _ := c.Get("deploy")
	if d.Description != "Project deploy." || d.Source != SourceProject {
		t.Errorf("deploy = %+v; the project skill should win", d)
	}
	if !hasNotice(notices, "deploy", filepath.Join(f.home, "skills/deploy/SKILL.md"), "shadowed") {
		t.Errorf("no clash notice in %q", notices)
	}
	if s, _ := c.Get("pdf"); s.Source != SourceUser {
		t.Errorf("pdf source = %q", s.Source)
	}
	if s, _ := c.Get("single"); s.Source != SourceConfig || s.Dir != filepath.Join(f.ws, "extra/single") {
		t.Errorf("single = %+v", s)
	}
	if len(notices) != 1 {
		t.Errorf("expected only the clash notice, got %q", notices)
	}
}

func TestDiscoverSameDirOnce(t *testing.T) {
	// Running in the home directory makes the project and user roots the
	// same folder; that must not be reported as a clash.
	f := newFixture(t)
	writeFile(t, filepath.Join(f.userHome, ".reasonix/skills/a/SKILL.md"), skillMD("a", "A.", ""))
	c, notices := Discover(Options{Workspace: f.userHome, Home: filepath.Join(f.userHome, ".reasonix"), UserHome: f.userHome})
	if len(c.List()) != 1 || len(notices) != 0 {
		t.Errorf("skills %v notices %q", names(c), notices)
	}
}

func TestDiscoverWarnings(t *testing.T) {
	f := newFixture(t)
	root := filepath.Join(f.ws, ".reasonix/skills")
	writeFile(t, filepath.Join(root, "good/SKILL.md"), skillMD("good", "Fine.", ""))
	writeFile(t, filepath.Join(root, "Bad_Name/SKILL.md"), skillMD("Bad_Name", "Breaks the name rule.", ""))
	writeFile(t, filepath.Join(root, "folder/SKILL.md"), skillMD("other-name", "Mismatched folder.", ""))
	writeFile(t, filepath.Join(root, "long/SKILL.md"), skillMD("long", strings.Repeat("x", MaxDescriptionLen+1), ""))
	writeFile(t, filepath.Join(root, "broken/SKILL.md"), "---\nname: broken\n")
	writeFile(t, filepath.Join(root, "plain/SKILL.md"), "# Plain\n\nHelps with plain things.\nReally.\n\nMore text.\n")
	writeFile(t, filepath.Join(root, "agent-development/SKILL.md"), skillMD("Agent Development", "Spaced name.", ""))

	c, notices := Discover(f.opts())
	if got, want := names(c), []string{"agent-development", "bad-name", "good", "long", "other-name", "plain"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("skills = %v, want %v", got, want)
	}
	for _, want := range [][]string{
		{"Bad_Name", "lowercase", `offered as "bad-name"`},
		{`"Agent Development"`, `offered as "agent-development"`},
		{"other-name", `folder "folder"`},
		{"long", "1025 characters"},
		{filepath.Join(root, "broken/SKILL.md"), "skipped"},
	} {
		if !hasNotice(notices, want...) {
			t.Errorf("no notice with %q in %q", want, notices)
		}
	}
	if hasNotice(notices, "good/SKILL.md") {
		t.Errorf("valid skill warned: %q", notices)
	}
	if hasNotice(notices, `folder "agent-development"`) {
		t.Errorf("a spaced name whose slug is the folder warned about the folder: %q", notices)
	}
	// The name as its author wrote it finds the skill too.
	if s, ok := c.Get("Agent Development"); !ok || s.Name != "agent-development" {
		t.Errorf("Get(written name) = %+v, %v", s, ok)
	}
	p, _ := c.Get("plain")
	if p.Description != "Helps with plain things. Really." || p.RunAs != RunInline {
		t.Errorf("plain = %+v", p)
	}
	if hasNotice(notices, "plain") {
		t.Errorf("a skill without frontmatter but with a paragraph should not warn: %q", notices)
	}
}

func TestDiscoverDescriptionFromBody(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.ws, ".reasonix/skills/nodesc/SKILL.md"), "---\nname: nodesc\n---\n\n# Title\n\nBody paragraph.\n")
	c, notices := Discover(f.opts())
	s, ok := c.Get("nodesc")
	if !ok || s.Description != "Body paragraph." {
		t.Errorf("nodesc = %+v", s)
	}
	if !hasNotice(notices, "nodesc", "no description") {
		t.Errorf("notices %q", notices)
	}
}

func TestAllowedToolsFormsAndRunAs(t *testing.T) {
	f := newFixture(t)
	root := filepath.Join(f.ws, ".reasonix/skills")
	writeFile(t, filepath.Join(root, "space/SKILL.md"), skillMD("space", "S.", "allowed-tools: Read Grep Bash(git status:*)\nrunAs: subagent\nmodel: fast\n"))
	writeFile(t, filepath.Join(root, "comma/SKILL.md"), skillMD("comma", "C.", "allowed-tools: Read, Grep\nmodel: inherit\n"))
	writeFile(t, filepath.Join(root, "list/SKILL.md"), skillMD("list", "L.", "allowed-tools:\n  - Read\n  - Write\ncontext: fork\n"))
	writeFile(t, filepath.Join(root, "none/SKILL.md"), skillMD("none", "N.", "runAs: sideways\n"))

	c, notices := Discover(f.opts())
	check := func(name string, tools []string, model, runAs string) {
		t.Helper()
		s, ok := c.Get(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		if !reflect.DeepEqual(s.AllowedTools, tools) || s.Model != model || s.RunAs != runAs {
			t.Errorf("%s = tools %q model %q runAs %q", name, s.AllowedTools, s.Model, s.RunAs)
		}
	}
	check("space", []string{"Read", "Grep", "Bash(git status:*)"}, "fast", RunSubagent)
	check("comma", []string{"Read", "Grep"}, "", RunInline)
	check("list", []string{"Read", "Write"}, "", RunSubagent)
	check("none", nil, "", RunInline)
	if !hasNotice(notices, "sideways") {
		t.Errorf("no runAs notice in %q", notices)
	}
}

func TestExcludedAndDisabled(t *testing.T) {
	f := newFixture(t)
	root := filepath.Join(f.ws, ".reasonix/skills")
	for _, n := range []string{"keep", "off", "exp-one", "exp-two"} {
		writeFile(t, filepath.Join(root, n, "SKILL.md"), skillMD(n, n+".", ""))
	}
	writeFile(t, filepath.Join(f.ws, ".claude/skills/claude-one/SKILL.md"), skillMD("claude-one", "c.", ""))
	writeFile(t, filepath.Join(f.home, "skills/off/SKILL.md"), skillMD("off", "user copy.", ""))

	opts := f.opts()
	opts.Excluded = []string{"**/exp-*", ".claude/skills"}
	opts.Disabled = []string{"off"}
	c, notices := Discover(opts)
	if got := names(c); !reflect.DeepEqual(got, []string{"keep"}) {
		t.Errorf("skills = %v (notices %q)", got, notices)
	}
	if len(notices) != 0 {
		t.Errorf("notices %q", notices)
	}
}

func TestIndexCapAndDeny(t *testing.T) {
	f := newFixture(t)
	root := filepath.Join(f.ws, ".reasonix/skills")
	for i := range 10 {
		n := fmt.Sprintf("s%02d", i)
		writeFile(t, filepath.Join(root, n, "SKILL.md"), skillMD(n, "Does\n  thing "+n+".", ""))
	}
	c, _ := Discover(f.opts())
	full := c.Index(0, nil)
	if strings.Count(full, "\n") != 10 || !strings.HasPrefix(full, "- s00: Does thing s00.\n") {
		t.Fatalf("full index:\n%s", full)
	}
	deny := func(n string) bool { return n != "s01" }
	capped := c.Index(100, deny)
	if len(capped) > 100 {
		t.Errorf("index is %d bytes, cap 100:\n%s", len(capped), capped)
	}
	if strings.Contains(capped, "s01") {
		t.Errorf("denied skill listed:\n%s", capped)
	}
	shown := strings.Count(capped, "\n- ") + 1
	if !strings.Contains(capped, fmt.Sprintf("(%d more skills; call skill with action list and a filter)", 9-shown)) {
		t.Errorf("missing or wrong note (%d shown):\n%s", shown, capped)
	}
	if c.Index(100, deny) != capped {
		t.Error("index not deterministic")
	}
	if got := c.Index(len(full), nil); got != full {
		t.Error("an index that fits exactly was truncated")
	}
}

func TestLoadBodyAndFiles(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.ws, ".reasonix/skills/pdf")
	writeFile(t, filepath.Join(dir, "SKILL.md"), skillMD("pdf", "PDF.", ""))
	writeFile(t, filepath.Join(dir, "scripts/extract.py"), "print(1)")
	writeFile(t, filepath.Join(dir, "reference.md"), "ref")
	writeFile(t, filepath.Join(dir, ".git/config"), "hidden")
	c, _ := Discover(f.opts())
	s, _ := c.Get("pdf")
	body, files, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if body != "# pdf\n\nDo the thing." {
		t.Errorf("body = %q", body)
	}
	if !reflect.DeepEqual(files, []string{"reference.md", "scripts/extract.py"}) {
		t.Errorf("files = %q", files)
	}
}

func TestLoadFilesBounded(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "SKILL.md"), "body")
	for i := range maxFiles + 5 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), "x")
	}
	_, files, more, err := Skill{Name: "big", Dir: dir, Path: filepath.Join(dir, "SKILL.md")}.load()
	if err != nil || len(files) != maxFiles || !more {
		t.Errorf("files %d more %v err %v", len(files), more, err)
	}
}

func TestDiscoverReadsOnlyFrontmatter(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.ws, ".reasonix/skills/big")
	// Discovery must stay cheap however long the instructions are.
	writeFile(t, filepath.Join(dir, "SKILL.md"), skillMD("big", "Big.", "")+strings.Repeat("x", 1<<20))
	head, err := readHead(filepath.Join(dir, "SKILL.md"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(head), "---\n") {
		t.Errorf("discovery read past the frontmatter: %d bytes", len(head))
	}
	huge := filepath.Join(f.ws, ".reasonix/skills/huge/SKILL.md")
	writeFile(t, huge, "---\nname: huge\ndescription: "+strings.Repeat("y", maxFrontmatter+10)+"\n---\nbody\n")
	c, notices := Discover(f.opts())
	if _, ok := c.Get("big"); !ok {
		t.Error("big skill missing")
	}
	if _, ok := c.Get("huge"); ok || !hasNotice(notices, huge, "larger than") {
		t.Errorf("huge frontmatter accepted; notices %q", notices)
	}
}
