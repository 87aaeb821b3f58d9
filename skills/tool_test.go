package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

func toolFixture(t *testing.T) (*Catalog, string) {
	f := newFixture(t)
	root := filepath.Join(f.ws, ".reasonix/skills")
	writeFile(t, filepath.Join(root, "inline/SKILL.md"), "---\nname: inline\ndescription: Inline skill.\n---\nRun with $ARGUMENTS now.\n")
	writeFile(t, filepath.Join(root, "inline/helper.sh"), "echo hi")
	writeFile(t, filepath.Join(root, "plain/SKILL.md"), "---\nname: plain\ndescription: Plain skill.\nallowed-tools: Read Grep\n---\nPlain body.\n")
	writeFile(t, filepath.Join(root, "forked/SKILL.md"), "---\nname: forked\ndescription: Forked skill.\nrunAs: subagent\n---\nForked body.\n")
	writeFile(t, filepath.Join(root, "secret/SKILL.md"), "---\nname: secret\ndescription: Secret skill.\n---\nSecret body.\n")
	c, notices := Discover(Options{Workspace: f.ws})
	if len(notices) != 0 {
		t.Fatalf("notices %q", notices)
	}
	return c, root
}

func run(t *testing.T, tool tools.Tool, args string) (tools.Result, error) {
	t.Helper()
	return tool.Execute(context.Background(), tools.NewEnv(t.TempDir()), json.RawMessage(args))
}

func TestSkillToolListAndLoad(t *testing.T) {
	c, root := toolFixture(t)
	allow := func(n string) bool { return n != "secret" }
	tool := NewTool(c, allow, nil)
	if tool.Name() != "skill" || !tool.ReadOnly() || !json.Valid(tool.Schema()) {
		t.Fatal("bad tool metadata")
	}

	res, err := run(t, tool, `{"action":"list"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "- inline: Inline skill.") || strings.Contains(res.Content, "secret") {
		t.Errorf("list:\n%s", res.Content)
	}

	res, err = run(t, tool, `{"action":"load","name":"inline","args":"--fast"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Skill: inline", "Directory: " + filepath.Join(root, "inline"), "- helper.sh", "Run with --fast now."} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("load lacks %q:\n%s", want, res.Content)
		}
	}
	if strings.Contains(res.Content, "description:") {
		t.Errorf("frontmatter leaked into the body:\n%s", res.Content)
	}

	res, err = run(t, tool, `{"action":"load","name":"plain","args":"x y"}`)
	if err != nil || !strings.HasSuffix(res.Content, "Plain body.\n\nARGUMENTS: x y") || !strings.Contains(res.Content, "Allowed tools: Read, Grep") {
		t.Errorf("plain: %v\n%s", err, res.Content)
	}

	// Without a runner a subagent skill still loads inline.
	res, err = run(t, tool, `{"action":"load","name":"forked"}`)
	if err != nil || !strings.Contains(res.Content, "Forked body.") {
		t.Errorf("forked inline: %v %q", err, res.Content)
	}
}

func TestSkillToolErrors(t *testing.T) {
	c, _ := toolFixture(t)
	tool := NewTool(c, func(n string) bool { return n != "secret" }, nil)
	cases := map[string]string{
		`{"action":"load","name":"secret"}`: "denied by permission rule Skill(secret)",
		`{"action":"load","name":"nope"}`:   `no skill named "nope"`,
		`{"action":"load"}`:                 "needs a skill name",
		`{"action":"burn"}`:                 "unknown action",
		`{"action":`:                        "invalid arguments",
	}
	for args, want := range cases {
		if _, err := run(t, tool, args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", args, err, want)
		}
	}
}

func TestSkillToolSubagent(t *testing.T) {
	c, _ := toolFixture(t)
	var got Skill
	var gotArgs string
	runner := func(ctx context.Context, s Skill, args string) (string, error) {
		got, gotArgs = s, args
		if args == "fail" {
			return "", errors.New("boom")
		}
		return "subagent report", nil
	}
	tool := NewTool(c, nil, runner)
	res, err := run(t, tool, `{"name":"forked","args":"go"}`)
	if err != nil || res.Content != "subagent report" || got.Name != "forked" || gotArgs != "go" {
		t.Errorf("res %q err %v skill %q args %q", res.Content, err, got.Name, gotArgs)
	}
	if _, err := run(t, tool, `{"action":"load","name":"forked","args":"fail"}`); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("err = %v", err)
	}
	// Inline skills never go through the runner.
	got = Skill{}
	if _, err := run(t, tool, `{"action":"load","name":"plain"}`); err != nil || got.Name != "" {
		t.Errorf("inline skill ran as subagent: %v %q", err, got.Name)
	}
}

// TestListFilter: list with a filter finds skills past the index cap by
// words of their names or descriptions, and hides denied ones.
func TestListFilter(t *testing.T) {
	ws := t.TempDir()
	for i := range 300 {
		name := fmt.Sprintf("skill-%03d", i)
		desc := "Generic helper number " + fmt.Sprint(i) + "."
		if i == 288 {
			desc = "Converts Terraform plans to Markdown. Use for infra reviews."
		}
		dir := filepath.Join(ws, ".claude", "skills", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\nbody\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := Discover(Options{Workspace: ws})
	if idx := c.Index(8<<10, nil); strings.Contains(idx, "skill-288") || !strings.Contains(idx, "action list and a filter") {
		t.Fatalf("skill-288 is inside the cap or no note:\n%s", idx[len(idx)-200:])
	}
	tool := NewTool(c, func(n string) bool { return n != "skill-001" }, nil)
	res, err := tool.Execute(context.Background(), nil, json.RawMessage(`{"action":"list","filter":"terraform MARKDOWN"}`))
	if err != nil || res.Content != "- skill-288: Converts Terraform plans to Markdown. Use for infra reviews.\n" {
		t.Errorf("filtered list = %q, %v", res.Content, err)
	}
	res, _ = tool.Execute(context.Background(), nil, json.RawMessage(`{"action":"list","filter":"helper number 1"}`))
	if strings.Contains(res.Content, "skill-001") || !strings.Contains(res.Content, "skill-010") {
		t.Errorf("filter shows a denied skill or misses one:\n%s", res.Content)
	}
}
