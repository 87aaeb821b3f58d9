package tools

import (
	"context"
	"encoding/json"

	"github.com/reasonix/reasonix/events"
)

// Invocation is one tool call about to run, as the permission gate sees it.
type Invocation struct {
	Session string
	Role    string
	// Step is the plan step the session works on, "" outside plan runs.
	Step   string
	CallID string
	Tool   Tool
	Args   json.RawMessage
	// Access is the tool's description of this call ([Describe]). The
	// session fills it; when its Kind is empty the gate describes the
	// call itself.
	Access Access
	Env    *Env
	// Reason is the text the model gave before the call, if any.
	Reason string
}

// Verdict is the gate's answer. When Allow is false, Message is what the
// model is told (for example "denied by rule Bash(rm:*)" or "needs human
// approval").
type Verdict struct {
	Allow   bool
	Message string
	// Person is true when a person was asked about this very call and
	// allowed it (not a rule, a posture or an earlier session grant). Only
	// then may the call change control files (permission.ControlGuard).
	Person bool
	// Writes, for a call whose writes the gate knows (the file tools; nil
	// for a command), are the absolute paths, symlinks resolved when the
	// person was asked, of the files it may write: the control files a
	// person's yes lets it change are those, not whatever a path resolves
	// to by the time the call runs (a folder swapped for a symlink to
	// .git while the person read the question).
	Writes []string
}

// Authorizer decides whether an invocation may run. It may block while a
// person is asked; it must honour ctx.
type Authorizer interface {
	Authorize(ctx context.Context, inv Invocation) Verdict
}

// AllowAll authorizes everything; for tests and trusted internal sessions.
type AllowAll struct{}

// Authorize always allows.
func (AllowAll) Authorize(context.Context, Invocation) Verdict { return Verdict{Allow: true} }

// Preview is a structured view of what a writing call would change, shown
// to the person asked to approve it.
type Preview = events.Preview

// Previewer is implemented by writing tools that can describe their effect
// without applying it.
type Previewer interface {
	Preview(ctx context.Context, env *Env, args json.RawMessage) ([]Preview, error)
}
