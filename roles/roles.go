// Package roles defines role profiles: the system prompt, tool filter,
// model, step limit and permission mode a session runs with. The planner,
// executor and the general and explore subagents are built in; users add
// subagents as Markdown agent files in the project or their home.
package roles

import (
	_ "embed" // the prompts
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/reasonix/reasonix/tools"
)

// Built-in role names.
const (
	Planner  = "planner"
	Executor = "executor"
	General  = "general"
	Explore  = "explore"
)

// DefaultPlannerMaxSteps is the planner's step limit when the
// agent.planner_max_steps setting is absent.
const DefaultPlannerMaxSteps = 12

// SourceBuiltin is the Source of built-in roles.
const SourceBuiltin = "builtin"

// Role is a session profile.
type Role struct {
	Name        string
	Description string
	// System is the system prompt. It never contains per-run data, so it
	// can sit in a cache-stable prompt prefix.
	System string
	// Tools lists the tool names the role may use (path.Match patterns
	// such as "mcp__github__*" are allowed); nil inherits all tools.
	Tools []string
	// ReadOnlyOnly drops every tool that is not read-only.
	ReadOnlyOnly bool
	// Model is "" to inherit the caller's model.
	Model string
	// MaxSteps bounds the tool loop; 0 means the session default.
	MaxSteps int
	// PlanMode asks the permission gate to refuse writers outright.
	PlanMode bool
	// Permissions is the role's override of the run's permission policy,
	// merged on top of it by the gate (its mode wins, its rules add).
	Permissions Permissions
	// Source is SourceBuiltin or the path of the agent file.
	Source string
}

// Permissions is a role's permission override, from an agent file's
// `permissionMode` (or `permission_mode`) and `allow` / `ask` / `deny`
// rule lists.
type Permissions struct {
	Mode             string
	Allow, Ask, Deny []string
}

// IsZero reports whether the override changes nothing.
func (p Permissions) IsZero() bool {
	return p.Mode == "" && len(p.Allow) == 0 && len(p.Ask) == 0 && len(p.Deny) == 0
}

// The built-in roles' prompts, embedded as strings: a string variable
// points into the binary's read-only data, where reading an embed.FS
// file copies it (twice, to a string) each time a role is built, on the
// way to the first request.
var (
	//go:embed prompts/planner.md
	plannerPrompt string
	//go:embed prompts/executor.md
	executorPrompt string
	//go:embed prompts/general.md
	generalPrompt string
	//go:embed prompts/explore.md
	explorePrompt string
)

// prompt is the built-in role's prompt; name is one of the four.
func prompt(name string) string {
	switch name {
	case Planner:
		return plannerPrompt
	case Executor:
		return executorPrompt
	case General:
		return generalPrompt
	case Explore:
		return explorePrompt
	}
	// Builtin calls this for the four names only.
	panic(fmt.Sprintf("roles: no embedded prompt for %q", name))
}

// readTools are what research-only roles may use.
var readTools = []string{"read_file", "ls", "glob", "grep"}

// Builtin returns the built-in role with that name: planner, executor,
// general or explore. Each call returns a fresh copy.
func Builtin(name string) (Role, bool) {
	r := Role{Name: name, Source: SourceBuiltin}
	switch name {
	case Planner:
		r.Description = "Researches the repository with read-only tools and submits an ordered plan."
		// ask: a goal that can be read two ways is cleared up with the
		// person before the plan is written.
		r.Tools = append(append([]string{}, readTools...), "skill", "ask")
		r.ReadOnlyOnly = true
		r.MaxSteps = DefaultPlannerMaxSteps
		r.PlanMode = true
	case Executor:
		r.Description = "The main coding agent: reads, edits, runs and validates."
	case General:
		r.Description = "General-purpose subagent for broad, multi-step tasks: researching a question across many files, " +
			"or carrying out a self-contained change. Reports what it found and which files it touched."
	case Explore:
		r.Description = "Fast read-only subagent for exploring the codebase: finding files, searching code, " +
			"and answering questions about how something works. Cannot change files or run commands."
		r.Tools = append([]string{}, readTools...)
		r.ReadOnlyOnly = true
	default:
		return Role{}, false
	}
	r.System = prompt(name)
	return r, true
}

// FilterTools returns the part of reg this role may use. Sessions build
// requests from the filtered registry, so a read-only role never even sees
// the schemas of writing tools.
func (r Role) FilterTools(reg *tools.Registry) *tools.Registry {
	if reg == nil {
		return tools.NewRegistry()
	}
	return reg.Filter(func(t tools.Tool) bool {
		if r.ReadOnlyOnly && !t.ReadOnly() {
			return false
		}
		return r.Tools == nil || r.allows(t.Name())
	})
}

func (r Role) allows(name string) bool {
	for _, p := range r.Tools {
		if p == name {
			return true
		}
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func (r Role) clone() Role {
	if r.Tools != nil {
		r.Tools = append([]string{}, r.Tools...)
	}
	return r
}

// Set is the roles available in one run: the built-ins plus user agents.
type Set struct {
	roles map[string]Role
}

// Get returns the role named name; a nil Set holds the built-ins.
func (s *Set) Get(name string) (Role, bool) {
	if s == nil {
		return Builtin(name)
	}
	r, ok := s.roles[name]
	return r.clone(), ok
}

// Subagents returns the roles the task tool can start: general, explore and
// every user agent, sorted by name. A nil Set, like Get on one, stands for
// the built-ins.
func (s *Set) Subagents() []Role {
	if s == nil {
		s = builtinSet()
	}
	var out []Role
	for name, r := range s.roles {
		if name == Planner || name == Executor {
			continue
		}
		out = append(out, r.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func builtinSet() *Set {
	s := &Set{roles: map[string]Role{}}
	for _, n := range []string{Planner, Executor, General, Explore} {
		r, _ := Builtin(n)
		s.roles[n] = r
	}
	return s
}

// describe is how a notice names a role's origin.
func describe(r Role) string {
	if r.Source == SourceBuiltin {
		return "the built-in " + r.Name
	}
	return r.Source
}

func joinQuoted(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
