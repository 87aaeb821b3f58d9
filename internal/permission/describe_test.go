package permission

import (
	"encoding/json"
	"strings"

	"github.com/reasonix/reasonix/tools"
	_ "github.com/reasonix/reasonix/tools/builtin" // the tools whose descriptions the tables use
)

// describeCall is how the test tables turn a tool name and arguments into
// the call's description: the built-in tool's own Access, or for the
// coordinator's tools (which live above this package) the description
// they give.
func describeCall(tool string, args json.RawMessage) tools.Access {
	if t, ok := tools.Builtin(tool); ok {
		a, err := tools.Describe(t, args)
		if err != nil {
			return tools.Access{Kind: invalidKind, Detail: err.Error()}
		}
		return a
	}
	var a struct{ Name, Agent string }
	_ = json.Unmarshal(args, &a)
	switch tool {
	case "skill":
		return tools.Access{Kind: tools.KindDelegate, Skill: a.Name}
	case "task":
		if strings.TrimSpace(a.Agent) == "" {
			a.Agent = "general"
		}
		return tools.Access{Kind: tools.KindDelegate, Agent: a.Agent}
	}
	return tools.Access{Kind: tools.KindOther}
}

// invalidKind marks arguments the tool rejected; the gate refuses such a
// call before any rule is consulted, and so do the helpers below.
const invalidKind tools.Kind = "invalid"

func explainArgs(p Policy, tool string, ro bool, args json.RawMessage) Outcome {
	a := describeCall(tool, args)
	if a.Kind == invalidKind {
		return Outcome{Decision: Deny, Reason: a.Detail}
	}
	return p.Explain(tool, ro, a)
}

func decideArgs(p Policy, tool string, ro bool, args json.RawMessage) Decision {
	return explainArgs(p, tool, ro, args).Decision
}
