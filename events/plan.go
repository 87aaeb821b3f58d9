package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/internal/text"
)

// PlanDecision is a person's answer to a proposed plan.
type PlanDecision int

// Plan decisions.
const (
	// PlanApprove runs the plan as proposed.
	PlanApprove PlanDecision = iota
	// PlanEdit runs the plan the approver returns instead.
	PlanEdit
	// PlanReject drops the plan; nothing is executed.
	PlanReject
)

// String names the decision.
func (d PlanDecision) String() string {
	switch d {
	case PlanApprove:
		return "approve"
	case PlanEdit:
		return "edit"
	case PlanReject:
		return "reject"
	}
	return fmt.Sprintf("PlanDecision(%d)", int(d))
}

// ErrPlanRejected is returned when a person rejects a plan: their
// decision, not a failure.
var ErrPlanRejected = errors.New("plan rejected")

// Plan is the planner's structured answer, handed to the executor. Its
// JSON form is the submit_plan tool's schema and the saved plan file.
type Plan struct {
	Goal       string     `json:"goal" jsonschema:"What the change achieves, in one or two sentences"`
	Steps      []PlanStep `json:"steps" jsonschema:"Ordered steps; each can be done and checked on its own"`
	Risks      []string   `json:"risks,omitempty" jsonschema:"What could go wrong"`
	Validation string     `json:"validation,omitempty" jsonschema:"A shell command that checks the whole change, e.g. go test ./..."`
}

// PlanStep is one ordered step of a Plan.
type PlanStep struct {
	ID         string   `json:"id" jsonschema:"Short unique id, e.g. s1"`
	Title      string   `json:"title" jsonschema:"Imperative one-line summary"`
	Detail     string   `json:"detail,omitempty" jsonschema:"What to change and how"`
	Files      []string `json:"files,omitempty" jsonschema:"Files the step reads or changes"`
	DependsOn  []string `json:"depends_on,omitempty" jsonschema:"Ids of earlier steps this one needs"`
	Acceptance string   `json:"acceptance,omitempty" jsonschema:"How to tell the step is done"`
}

// Validate reports every problem with p at once, so a model fixing its
// submission can fix them all in one retry.
func (p Plan) Validate() error {
	var errs []string
	if strings.TrimSpace(p.Goal) == "" {
		errs = append(errs, "goal is empty")
	}
	if len(p.Steps) == 0 {
		errs = append(errs, "steps is empty; a plan needs at least one step")
	}
	seen := map[string]bool{}
	for i, s := range p.Steps {
		where := fmt.Sprintf("step %d", i+1)
		if s.ID != "" {
			where += fmt.Sprintf(" (id %q)", s.ID)
		}
		switch {
		case strings.TrimSpace(s.ID) == "":
			errs = append(errs, where+": id is empty")
		case seen[s.ID]:
			errs = append(errs, where+": id is used by an earlier step; ids must be unique")
		}
		if strings.TrimSpace(s.Title) == "" {
			errs = append(errs, where+": title is empty")
		}
		for _, d := range s.DependsOn {
			if !seen[d] {
				errs = append(errs, fmt.Sprintf("%s: depends_on %q does not name an earlier step", where, d))
			}
		}
		if s.ID != "" {
			seen[s.ID] = true
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid plan: %s", strings.Join(errs, "; "))
	}
	return nil
}

// ParsePlan decodes and validates a plan; unknown fields are errors.
func ParsePlan(data []byte) (Plan, error) {
	var p Plan
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Plan{}, fmt.Errorf("decode plan: %w", err)
	}
	if err := p.Validate(); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// JSON returns the plan indented, as saved and as published in PlanReady.
func (p Plan) JSON() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	// A Plan holds only strings and slices, so encoding cannot fail.
	_ = enc.Encode(p)
	return buf.Bytes()
}

// Markdown renders the plan for people.
func (p Plan) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan: %s\n\n## Steps\n\n", text.OneLine(p.Goal))
	for i, s := range p.Steps {
		fmt.Fprintf(&b, "%d. **%s** `%s`\n", i+1, text.OneLine(s.Title), s.ID)
		if d := strings.TrimSpace(s.Detail); d != "" {
			for _, line := range strings.Split(d, "\n") {
				fmt.Fprintf(&b, "   %s\n", strings.TrimRight(line, " \t"))
			}
		}
		if len(s.Files) > 0 {
			fmt.Fprintf(&b, "   - Files: %s\n", codeList(s.Files))
		}
		if len(s.DependsOn) > 0 {
			fmt.Fprintf(&b, "   - Depends on: %s\n", codeList(s.DependsOn))
		}
		if a := strings.TrimSpace(s.Acceptance); a != "" {
			fmt.Fprintf(&b, "   - Acceptance: %s\n", text.OneLine(a))
		}
	}
	if len(p.Risks) > 0 {
		b.WriteString("\n## Risks\n\n")
		for _, r := range p.Risks {
			fmt.Fprintf(&b, "- %s\n", text.OneLine(r))
		}
	}
	if v := strings.TrimSpace(p.Validation); v != "" {
		fmt.Fprintf(&b, "\n## Validation\n\n```sh\n%s\n```\n", v)
	}
	return b.String()
}

// Todos turns the steps into a pending todo list for the executor.
func (p Plan) Todos() []Todo {
	out := make([]Todo, 0, len(p.Steps))
	for _, s := range p.Steps {
		title := text.OneLine(s.Title)
		out = append(out, Todo{Content: s.ID + ": " + title, Status: "pending"})
	}
	return out
}

func codeList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "`" + x + "`"
	}
	return strings.Join(q, ", ")
}

// Command is a slash command a front end may offer beyond its own
// built-ins: a custom command, a skill or a prompt command.
type Command struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Source says where it comes from: "command (project)", "skill
	// (user)", "mcp:server".
	Source string `json:"source,omitempty"`
	// Path is the file that defines it, when there is one.
	Path string `json:"path,omitempty"`
}
