package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Kind is the kind of access one tool call has. The permission gate maps
// it to a rule family: read to Read, write to Edit, execute to Bash,
// delegate to Task or Skill; network and other calls are matched by the
// tool's own id.
type Kind string

// Kinds of access.
const (
	KindRead     Kind = "read"
	KindWrite    Kind = "write"
	KindExecute  Kind = "execute"
	KindNetwork  Kind = "network"
	KindDelegate Kind = "delegate"
	KindOther    Kind = "other"
)

// Access is what one call of a tool touches, as the tool itself reads its
// arguments. It is the only description of a call that other packages
// see: the gate matches rules and confines paths with it, the coordinator
// tracks touched files with it, and front ends name calls with it. No
// package outside a tool decodes that tool's arguments.
type Access struct {
	Kind Kind
	// Reads and Writes are the paths the call reads and writes, as the
	// model gave them (relative to the workspace or absolute). A path
	// that is written is not listed again under Reads.
	Reads  []string
	Writes []string
	// Command is the shell command line of an execute call.
	Command string
	// Shell is the language Command is written in: empty for POSIX shell
	// (bash, sh), [ShellPowerShell] for PowerShell, whose lines the gate
	// cannot analyse and treats as opaque.
	Shell string
	// Agent is the subagent a delegate call starts; Skill the skill it
	// loads or runs.
	Agent string
	Skill string
	// URL is what a network call fetches.
	URL string
	// Detail names the call for people when no subject above does (a
	// search pattern, a todo count). It is never matched by rules.
	Detail string
	// SessionOnly marks a call that changes nothing outside its own
	// session (the todo list): the gate never asks about it.
	SessionOnly bool
	// Unknown is set by [Describe] for a tool that gives no description:
	// the gate treats such a call as a writer whose effect it cannot see.
	Unknown bool
}

// ShellPowerShell is [Access.Shell] for a PowerShell command line.
const ShellPowerShell = "powershell"

// Describer is implemented by tools that describe a call's access from its
// arguments. An error means the arguments are malformed; the call is
// refused with that error before anyone is asked.
type Describer interface {
	Access(args json.RawMessage) (Access, error)
}

// Describe returns t's description of a call with args. A tool that is not
// a [Describer] is an unknown writer.
func Describe(t Tool, args json.RawMessage) (Access, error) {
	d, ok := t.(Describer)
	if !ok {
		return Access{Kind: KindOther, Unknown: true}, nil
	}
	a, err := d.Access(args)
	if err != nil {
		return Access{Kind: KindOther}, fmt.Errorf("invalid arguments for %s: %w", t.Name(), err)
	}
	if a.Kind == "" {
		a.Kind = KindOther
	}
	return a, nil
}

// Subject is the one line that best names what the call acts on: the
// command, the written or read paths, the agent or skill, the URL, or the
// detail. It is empty when the call has none of these.
func (a Access) Subject() string {
	switch {
	case a.Command != "":
		return a.Command
	case len(a.Writes) > 0:
		return strings.Join(a.Writes, ", ")
	case a.Agent != "":
		return a.Agent
	case a.Skill != "":
		return a.Skill
	case a.URL != "":
		return a.URL
	case a.Detail != "":
		return a.Detail
	case len(a.Reads) > 0:
		return strings.Join(a.Reads, ", ")
	}
	return ""
}

// Paths returns every path the call names, written ones first.
func (a Access) Paths() []string {
	out := make([]string, 0, len(a.Writes)+len(a.Reads))
	out = append(out, a.Writes...)
	return append(out, a.Reads...)
}
