package skills

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// claudeAgent is shaped like agent files published for Claude Code: the
// description runs over several lines with unquoted "user:" and
// "assistant:" lines and <example> blocks, which is not valid YAML.
const claudeAgent = `---
name: code-reviewer
description: Use this agent when the user has written a significant piece of code and wants a review. Examples:

<example>
Context: The user just finished a feature.
user: "I've added the login handler, can you check it?"
assistant: "I'll use the code-reviewer agent to review the handler."
<commentary>
Since new code was written, use the code-reviewer agent.
</commentary>
</example>
tools: Read, Grep, Glob, WebFetch
model: sonnet
color: blue
---

You are a meticulous code reviewer.

Review only what changed.
`

func TestParseFrontmatterLenientClaudeAgent(t *testing.T) {
	fm, body, err := ParseFrontmatter([]byte(claudeAgent))
	if err != nil {
		t.Fatal(err)
	}
	if got := fm.String("name"); got != "code-reviewer" {
		t.Errorf("name = %q", got)
	}
	desc := fm.String("description")
	for _, want := range []string{"wants a review. Examples:", `user: "I've added the login handler`, `assistant: "I'll use`, "</example>"} {
		if !strings.Contains(desc, want) {
			t.Errorf("description lacks %q:\n%s", want, desc)
		}
	}
	if _, ok := fm["user"]; ok {
		t.Error(`"user:" line became a key`)
	}
	if _, ok := fm["assistant"]; ok {
		t.Error(`"assistant:" line became a key`)
	}
	tools, ok := fm.List("tools")
	if !ok || !reflect.DeepEqual(tools, []string{"Read", "Grep", "Glob", "WebFetch"}) {
		t.Errorf("tools = %q, %v", tools, ok)
	}
	if fm.String("model") != "sonnet" || fm.String("color") != "blue" {
		t.Errorf("model/color = %q/%q", fm.String("model"), fm.String("color"))
	}
	if !strings.HasPrefix(strings.TrimSpace(string(body)), "You are a meticulous code reviewer.") {
		t.Errorf("body = %q", body)
	}
}

func TestParseFrontmatterYAML(t *testing.T) {
	src := "---\nname: x\ntools:\n  - Read\n  - Bash(git status:*)\nmax_steps: 7\nnested:\n  a: 1\n---\nbody\n"
	fm, body, err := ParseFrontmatter([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := fm.List("tools"); !reflect.DeepEqual(l, []string{"Read", "Bash(git status:*)"}) {
		t.Errorf("tools = %q", l)
	}
	if n, ok, err := fm.Int("max_steps"); n != 7 || !ok || err != nil {
		t.Errorf("max_steps = %d %v %v", n, ok, err)
	}
	// Scalars keep the text that was written, nested ones too.
	if m, ok := fm["nested"].(map[string]any); !ok || m["a"] != "1" {
		t.Errorf("nested = %#v", fm["nested"])
	}
	if string(body) != "body\n" {
		t.Errorf("body = %q", body)
	}
}

// TestParseFrontmatterScalarsAsWritten: numbers, YAML 1.1 booleans,
// block scalars, anchors and comments come out as the text a person
// wrote, at every depth; invalid YAML falls back to the line parser.
func TestParseFrontmatterScalarsAsWritten(t *testing.T) {
	src := "---\nname: off\nversion: 1.10\nmodel: 012\nhex: 0x1F\ninf: .inf\nempty:\nnull: ~\n" +
		"color: \"#ff0000\" # a comment\nlist: [x, y, no]\nmeta: &m\n  on: yes\n  n: 1.50\ncopy: *m\n" +
		"desc: |\n  line one\n  line two\n---\n"
	fm, _, err := ParseFrontmatter([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := Frontmatter{
		"name": "off", "version": "1.10", "model": "012", "hex": "0x1F", "inf": ".inf", "empty": nil, "null": nil,
		"color": "#ff0000", "list": []any{"x", "y", "no"},
		"meta": map[string]any{"on": "yes", "n": "1.50"}, "copy": map[string]any{"on": "yes", "n": "1.50"},
		"desc": "line one\nline two\n",
	}
	if !reflect.DeepEqual(fm, want) {
		t.Errorf("got  %#v\nwant %#v", fm, want)
	}
	// Not YAML (": " inside a plain value): the line parser.
	fm, _, err = ParseFrontmatter([]byte("---\nname: a\ndescription: Use it when user: asks\n---\n"))
	if err != nil || fm.String("name") != "a" || fm.String("description") != "Use it when user: asks" {
		t.Errorf("lenient fallback: %#v, %v", fm, err)
	}
}

func TestParseFrontmatterNone(t *testing.T) {
	src := "# Title\n\nFirst para\ncontinues here.\n\nSecond.\n"
	fm, body, err := ParseFrontmatter([]byte(src))
	if err != nil || len(fm) != 0 || string(body) != src {
		t.Fatalf("fm=%v body=%q err=%v", fm, body, err)
	}
	if got := FirstParagraph(body); got != "First para continues here." {
		t.Errorf("first paragraph = %q", got)
	}
}

func TestParseFrontmatterErrors(t *testing.T) {
	if _, _, err := ParseFrontmatter([]byte("---\nname: x\nno end\n")); !errors.Is(err, ErrUnterminated) {
		t.Errorf("unterminated: err = %v", err)
	}
	if _, _, err := ParseFrontmatter([]byte("---\n\tjust some prose: [\n---\nbody")); err == nil {
		t.Error("garbage frontmatter parsed without error")
	}
}

func TestParseFrontmatterLenientForms(t *testing.T) {
	// The tab-indented line makes this invalid YAML, forcing the lenient
	// parser, which folds it into the previous value.
	src := "---\nname: x\n\tcontinued\nlist:\n  - a\n  - \"b c\"\nflow: [d, 'e']\nblock: |\n  line one\n    indented\nfolded: >\n  one\n  two\nquoted: \"q: v\"\n---\n"
	fm, _, err := ParseFrontmatter([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := fm.String("name"); got != "x\ncontinued" {
		t.Errorf("name = %q", got)
	}
	if l, _ := fm.List("list"); !reflect.DeepEqual(l, []string{"a", "b c"}) {
		t.Errorf("list = %q", l)
	}
	if l, _ := fm.List("flow"); !reflect.DeepEqual(l, []string{"d", "e"}) {
		t.Errorf("flow = %q", l)
	}
	if got := fm.String("block"); got != "line one\n  indented" {
		t.Errorf("block = %q", got)
	}
	if got := fm.String("folded"); got != "one two" {
		t.Errorf("folded = %q", got)
	}
	if got := fm.String("quoted"); got != "q: v" {
		t.Errorf("quoted = %q", got)
	}
}

func TestSplitList(t *testing.T) {
	cases := map[string][]string{
		"Read Grep  Bash(git status:*)":  {"Read", "Grep", "Bash(git status:*)"},
		"Read, Grep,Bash(git diff, log)": {"Read", "Grep", "Bash(git diff, log)"},
		"  ":                             nil,
	}
	for in, want := range cases {
		if got := SplitList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitList(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFrontmatterIntErrors(t *testing.T) {
	fm := Frontmatter{"a": "12", "b": "lots"}
	if n, ok, err := fm.Int("a"); n != 12 || !ok || err != nil {
		t.Errorf("a = %d %v %v", n, ok, err)
	}
	if _, ok, err := fm.Int("b"); !ok || err == nil {
		t.Errorf("b: ok=%v err=%v", ok, err)
	}
	if _, ok, _ := fm.Int("c"); ok {
		t.Error("absent key reported present")
	}
}

func TestParseFrontmatterKeepsScalarText(t *testing.T) {
	fm, _, err := ParseFrontmatter([]byte("---\nname: off\nmodel: no\nversion: 1.10\nempty:\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"name": "off", "model": "no", "version": "1.10", "empty": ""} {
		if got := fm.String(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestParseFrontmatterUnclosedExample(t *testing.T) {
	src := "---\nname: a\ndescription: Use it.\n<example>\nuser: \"hi\"\ntools: Read, Grep\nmodel: fast\n---\nbody\n"
	fm, _, err := ParseFrontmatter([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := fm.List("tools"); len(l) != 2 || fm.String("model") != "fast" {
		t.Errorf("keys after an unclosed <example> were swallowed: %#v", fm)
	}
	if !strings.Contains(fm.String("description"), `user: "hi"`) {
		t.Errorf("description = %q", fm.String("description"))
	}
}

// TestFrontmatterAfterBlankLinesAndChecked: blank lines before the opening
// delimiter still open a block (its lines are counted from the file's
// first line), and the checked parse leaves out what the plain one
// refuses.
func TestFrontmatterAfterBlankLinesAndChecked(t *testing.T) {
	data := []byte("\n\n---\nstray line\nname: x\n---\nBody.\n")
	if _, _, err := ParseFrontmatter(data); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("plain parse of a stray line: %v, want an error at line 4", err)
	}
	fm, body, problems, err := ParseFrontmatterChecked(data)
	if err != nil || fm.String("name") != "x" || string(body) != "Body.\n" {
		t.Fatalf("checked: %v %q %v", fm, body, err)
	}
	if len(problems) != 1 || problems[0].Line != 4 || problems[0].Key != "" {
		t.Errorf("problems = %+v, want the stray line 4", problems)
	}
	if _, _, err := ParseFrontmatter([]byte("\n---\nname: x\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("unclosed after a blank line: %v", err)
	}
	if fm, body, _ := ParseFrontmatter([]byte("text\n---\nname: x\n---\n")); len(fm) != 0 || !strings.HasPrefix(string(body), "text") {
		t.Errorf("a file starting with text has no frontmatter: %v %q", fm, body)
	}
}
