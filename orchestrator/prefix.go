package orchestrator

import (
	"encoding/json"
	"fmt"

	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/tools"
)

// systemPrompt is a session's frozen system prompt: the role's prompt,
// then the rules block (rules files and the environment, the same for
// every role), then the skill index when the session has the skill tool.
// Nothing in it changes from turn to turn.
func (c *Coordinator) systemPrompt(system string, reg *tools.Registry) string {
	if c.rt.Rules != nil {
		if r := c.rt.Rules(); r != "" {
			if system != "" {
				system += "\n\n"
			}
			system += r
		}
	}
	return c.withSkillIndex(system, reg)
}

// Prefix describes the request prefix a session of one role starts with.
type Prefix struct {
	Role string
	// RolePrompt is the role's own prompt and RoleSource where it came
	// from ("builtin" or an agent file).
	RolePrompt, RoleSource string
	// Rules is the rules block ("" when Runtime.Rules is nil).
	Rules string
	// SkillIndex is the skill section ("" when the role has no skills).
	SkillIndex string
	// System is the whole system prompt, as a session sends it.
	System string
	// Tools are the tool schemas as sent, and their names.
	Tools     json.RawMessage
	ToolNames []string
}

// Prefix returns the prefix a new top-level session of the named role
// (executor, planner or a subagent) would send, without opening one.
func (c *Coordinator) Prefix(role string) (Prefix, error) {
	var r roles.Role
	var reg *tools.Registry
	switch role {
	case "", roles.Executor:
		r = c.executorRole()
		reg = c.toolsFor(r, 0, "", r.Model, &family{})
		// As openGoalSession opens it: run and chat sessions carry
		// goal_status from the start.
		reg.Add(goalStatusTool{})
	case roles.Planner:
		r = c.plannerRole()
		reg = c.plannerTools(r)
	default:
		sub, ok := c.subagent(role)
		if !ok {
			return Prefix{}, fmt.Errorf("no role %q (executor, planner or a subagent)", role)
		}
		r = sub
		reg = c.toolsFor(r, 1, "", r.Model, &family{})
	}
	p := Prefix{Role: r.Name, RolePrompt: r.System, RoleSource: r.Source, ToolNames: reg.Names()}
	if c.rt.System != "" && r.Name == roles.Executor {
		p.RoleSource = "Runtime.System"
	}
	if c.rt.Rules != nil {
		p.Rules = c.rt.Rules()
	}
	p.SkillIndex = c.withSkillIndex("", reg)
	p.System = c.systemPrompt(r.System, reg)
	specs, err := reg.EncodedSpecs()
	if err != nil {
		return Prefix{}, err
	}
	p.Tools = specs
	return p, nil
}
