package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/tools"
)

// ToolName is the name of the skill tool and of its permission rules
// ("Skill(name)").
const ToolName = "skill"

type skillTool struct {
	catalog     *Catalog
	allow       func(string) bool
	runSubagent func(ctx context.Context, s Skill, args string) (string, error)
}

// NewTool returns the skill tool over c. allow (nil allows all) hides and
// refuses skills a permission rule denies; runSubagent (may be nil, then
// every skill loads inline) runs skills marked runAs: subagent with the
// caller's args and returns the subagent's final report.
func NewTool(c *Catalog, allow func(string) bool, runSubagent func(ctx context.Context, s Skill, args string) (string, error)) tools.Tool {
	return &skillTool{catalog: c, allow: allow, runSubagent: runSubagent}
}

func (t *skillTool) Name() string { return ToolName }

func (t *skillTool) Description() string {
	return "Use a skill, a folder of task instructions and resources. list: the skills and their descriptions " +
		"(filter: only those with these words). load: a skill's instructions and the files beside it, to follow; " +
		"a skill that runs as a subagent runs and returns its report. args: free text for the skill."
}

// Schema is skillSchema (schemas_gen.go), generated from skillArgs; see
// schema_test.go.
func (t *skillTool) Schema() json.RawMessage { return json.RawMessage(skillSchema) }

// ReadOnly is true: loading instructions changes nothing. A subagent run
// passes the gate on its own calls.
func (t *skillTool) ReadOnly() bool { return true }

type skillArgs struct {
	Action string `json:"action"`
	Name   string `json:"name,omitempty"`
	Args   string `json:"args,omitempty"`
	Filter string `json:"filter,omitempty"`
}

// Access names the skill a call loads or runs; a list call names none.
func (t *skillTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a skillArgs
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return tools.Access{}, err
	}
	acc := tools.Access{Kind: tools.KindDelegate, Skill: strings.TrimSpace(a.Name)}
	if acc.Skill == "" {
		acc.Detail = a.Action
	}
	return acc, nil
}

func (t *skillTool) allowed(name string) bool { return t.allow == nil || t.allow(name) }

func (t *skillTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a skillArgs
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return tools.Result{}, err
	}
	a.Name = strings.TrimSpace(a.Name)
	if a.Action == "" && a.Name != "" {
		a.Action = "load"
	}
	switch a.Action {
	case "list":
		if f := strings.TrimSpace(a.Filter); f != "" {
			return t.filtered(f), nil
		}
		idx := t.catalog.Index(0, t.allow)
		if idx == "" {
			idx = "No skills are available."
		}
		return tools.Result{Content: idx, Summary: "listed skills"}, nil
	case "load":
		return t.load(ctx, env, a)
	default:
		return tools.Result{}, fmt.Errorf("unknown action %q; use \"list\" or \"load\"", a.Action)
	}
}

// filtered lists the skills whose name or description holds every word
// of f, with their whole descriptions.
func (t *skillTool) filtered(f string) tools.Result {
	words := strings.Fields(strings.ToLower(f))
	var b strings.Builder
	n := 0
	for _, s := range t.catalog.List() {
		if !t.allowed(s.Name) {
			continue
		}
		hay := strings.ToLower(s.Name + " " + s.Description)
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(hay, w)
		}
		if ok {
			n++
			fmt.Fprintf(&b, "- %s: %s\n", s.Name, text.Clip(text.OneLine(s.Description), 300))
		}
	}
	if n == 0 {
		return tools.Result{Content: fmt.Sprintf("No skill matches %q.", f), Summary: "no skills match"}
	}
	return tools.Result{Content: b.String(), Summary: fmt.Sprintf("%d skill(s) match", n)}
}

func (t *skillTool) load(ctx context.Context, env *tools.Env, a skillArgs) (tools.Result, error) {
	if a.Name == "" {
		return tools.Result{}, fmt.Errorf("load needs a skill name; call skill with action list to see them")
	}
	s, ok := t.catalog.Get(a.Name)
	if !ok {
		return tools.Result{}, fmt.Errorf("no skill named %q; call skill with action list to see them", a.Name)
	}
	if !t.allowed(s.Name) {
		return tools.Result{}, fmt.Errorf("skill %q is denied by permission rule Skill(%s)", s.Name, s.Name)
	}
	if s.RunAs == RunSubagent && t.runSubagent != nil {
		out, err := t.runSubagent(ctx, s, a.Args)
		if err != nil {
			return tools.Result{}, fmt.Errorf("skill %s (subagent): %w", s.Name, err)
		}
		return tools.Result{Content: out, Summary: "ran skill " + s.Name + " as a subagent"}, nil
	}
	text, err := s.Instructions(env, a.Args)
	if err != nil {
		return tools.Result{}, err
	}
	limit := 0
	if env != nil {
		limit = env.Limit()
	}
	return tools.Result{Content: tools.Truncate(text, limit), Summary: "loaded skill " + s.Name}, nil
}

// Instructions loads the skill for a session: its name, folder, the files
// it bundles and its instructions with args filled in. The skill tool and
// front ends running /skill-name share it, so a skill reads the same
// however it is invoked. The skill's folder becomes readable through env's
// guard (env may be nil), so a user-level skill's bundled files
// (~/.claude/skills/pdf/forms.md) can be read while it is in use.
func (s Skill) Instructions(env *tools.Env, args string) (string, error) {
	body, files, more, err := s.load()
	if err != nil {
		return "", err
	}
	if env != nil {
		if err := env.AllowRead(s.Dir); err != nil {
			return "", fmt.Errorf("load skill %s: %w", s.Name, err)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skill: %s\nDirectory: %s\n", s.Name, s.Dir)
	if len(files) > 0 {
		b.WriteString("Files beside SKILL.md (paths relative to the directory; read them when the instructions refer to them):\n")
		for _, f := range files {
			b.WriteString("- " + f + "\n")
		}
		if more {
			fmt.Fprintf(&b, "- (more than %d files; use ls or glob to see the rest)\n", maxFiles)
		}
	}
	if len(s.AllowedTools) > 0 {
		b.WriteString("Allowed tools: " + strings.Join(s.AllowedTools, ", ") + "\n")
	}
	b.WriteString("\n")
	b.WriteString(ExpandArgs(body, args))
	return b.String(), nil
}

// ExpandArgs fills a skill's instructions with its arguments: it
// substitutes $ARGUMENTS the way skill authors expect, and otherwise
// appends the arguments so they are never silently lost. The skill tool
// and front ends running an inline skill share it, so a skill reads the
// same however it is invoked.
func ExpandArgs(body, args string) string {
	args = strings.TrimSpace(args)
	if strings.Contains(body, "$ARGUMENTS") {
		return strings.ReplaceAll(body, "$ARGUMENTS", args)
	}
	if args == "" {
		return body
	}
	return body + "\n\nARGUMENTS: " + args
}
