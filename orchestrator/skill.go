package orchestrator

import (
	"context"
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/skills"
)

// skillRunner runs runAs=subagent skills loaded by the session id at depth.
func (c *Coordinator) skillRunner(parent string, depth int, model *modelPin, fam *family) subagentRunner {
	return func(ctx context.Context, s skills.Skill, args string) (string, error) {
		res, err := c.runSkill(ctx, fam, s, args, parent, depth+1, model.get())
		if err != nil {
			return "", err
		}
		return res.Text, nil
	}
}

// RunSkill runs the named skill as a subagent with args as its request,
// as when the user types /skill-name args. It works for any skill; front
// ends call it for skills whose RunAs is subagent and put an inline
// skill's instructions into the conversation instead (see SkillPrompt).
func (c *Coordinator) RunSkill(ctx context.Context, name, args string) (Result, error) {
	s, err := c.lookupSkill(name)
	if err != nil {
		return Result{}, err
	}
	return c.runSkill(ctx, nil, s, args, "", 1, c.executorRole().Model)
}

// SkillPrompt returns the user turn that runs an inline skill: its
// instructions with args substituted for $ARGUMENTS or appended.
func (c *Coordinator) SkillPrompt(name, args string) (string, error) {
	s, err := c.lookupSkill(name)
	if err != nil {
		return "", err
	}
	text, err := s.Instructions(c.rt.Env, args)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Use the skill %q:\n\n%s", s.Name, text), nil
}

func (c *Coordinator) lookupSkill(name string) (skills.Skill, error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	s, ok := c.rt.Skills.Get(name)
	if !ok {
		return skills.Skill{}, fmt.Errorf("no skill named %q", name)
	}
	if c.rt.SkillAllow != nil && !c.rt.SkillAllow(s.Name) {
		return skills.Skill{}, fmt.Errorf("skill %q is denied by permission rule Skill(%s)", s.Name, s.Name)
	}
	return s, nil
}

func (c *Coordinator) runSkill(ctx context.Context, fam *family, s skills.Skill, args, parent string, depth int, parentModel string) (Result, error) {
	body, files, err := s.Load()
	if err != nil {
		return Result{}, err
	}
	if c.rt.Env != nil {
		// The subagent reads the files the skill bundles.
		if err := c.rt.Env.AllowRead(s.Dir); err != nil {
			return Result{}, err
		}
	}
	tl := skillTools(s.AllowedTools)
	r := roles.Role{Name: "skill:" + s.Name, Description: s.Description, Tools: tl, Source: s.Path}
	var sys strings.Builder
	fmt.Fprintf(&sys, "You are running the skill %q as a subagent of Reasonix. Follow the skill's instructions below to carry out the request in the user message. "+
		"Your final message is your report to the caller, who sees nothing else: say what you did, what you found and which files you changed.\n", s.Name)
	fmt.Fprintf(&sys, "Skill directory: %s (paths in the instructions are relative to it)\n", s.Dir)
	if len(files) > 0 {
		sys.WriteString("Files beside SKILL.md: " + strings.Join(files, ", ") + "\n")
	}
	sys.WriteString("\n# Instructions\n\n")
	// The request travels in the user turn; $ARGUMENTS is filled in too
	// because skill authors write instructions around it, but nothing is
	// appended: that would only repeat the user turn.
	request := strings.TrimSpace(args)
	if strings.Contains(body, "$ARGUMENTS") {
		a := request
		if a == "" {
			a = "(see the user message)"
		}
		body = skills.ExpandArgs(body, a)
	}
	sys.WriteString(body)
	if request == "" {
		request = "Run the skill."
	}
	return c.runChild(ctx, fam, childSpec{
		role: r, parent: parent, depth: depth, parentModel: parentModel,
		modelRef: s.Model, system: sys.String(), prompt: request,
	})
}

// skillTools turns allowed-tools into tool names the way an agent file's
// tools are mapped; nil inherits every tool. Specifiers such as
// Bash(git status:*) reduce to their tool here: which commands may run is
// the permission gate's decision.
func skillTools(allowed []string) []string { return roles.ToolNames(allowed) }

// subagentRunner is the runSubagent callback skills.NewTool takes.
type subagentRunner = func(ctx context.Context, s skills.Skill, args string) (string, error)
