package orchestrator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/tools"
)

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

// planSchema is the submit_plan argument schema, generated from Plan, the
// struct ParsePlan decodes, once and then the same bytes on every request.
var planSchema = tools.SchemaFor[Plan](tools.WithMinItems("steps", 1))

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

// ParsePlan decodes and validates a plan.
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
	fmt.Fprintf(&b, "# Plan: %s\n\n## Steps\n\n", oneLine(p.Goal))
	for i, s := range p.Steps {
		fmt.Fprintf(&b, "%d. **%s** `%s`\n", i+1, oneLine(s.Title), s.ID)
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
			fmt.Fprintf(&b, "   - Acceptance: %s\n", oneLine(a))
		}
	}
	if len(p.Risks) > 0 {
		b.WriteString("\n## Risks\n\n")
		for _, r := range p.Risks {
			fmt.Fprintf(&b, "- %s\n", oneLine(r))
		}
	}
	if v := strings.TrimSpace(p.Validation); v != "" {
		fmt.Fprintf(&b, "\n## Validation\n\n```sh\n%s\n```\n", v)
	}
	return b.String()
}

// Todos turns the steps into a pending todo list for the executor.
func (p Plan) Todos() []events.Todo {
	out := make([]events.Todo, 0, len(p.Steps))
	for _, s := range p.Steps {
		title := oneLine(s.Title)
		out = append(out, events.Todo{Content: s.ID + ": " + title, Status: "pending"})
	}
	return out
}

// executorBrief is the executor's first user turn for a plan. The plan
// travels as JSON so nothing is lost between the two models.
func executorBrief(p Plan) string {
	var b strings.Builder
	b.WriteString("Carry out the approved plan below. Work through the steps in order, respecting depends_on. ")
	b.WriteString("Your todo list already holds one item per step: mark an item in_progress when you start it and completed when its acceptance criterion holds. ")
	b.WriteString("If a step turns out to be wrong, adapt it and say why. ")
	if strings.TrimSpace(p.Validation) != "" {
		b.WriteString("When every step is done, run the validation command and fix what it reports. ")
	}
	b.WriteString("Finish with a short summary of what changed.\n\nPlan (JSON):\n")
	b.Write(p.JSON())
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func codeList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "`" + x + "`"
	}
	return strings.Join(q, ", ")
}

// PlansDir is where saved plans of a state directory live.
func PlansDir(stateDir string) string { return filepath.Join(stateDir, "plans") }

// SavePlan writes p to <stateDir>/plans/<id>.json, choosing a new id when
// id is empty, and returns the id.
func SavePlan(stateDir, id string, p Plan) (string, error) {
	if stateDir == "" {
		return "", errors.New("save plan: no state directory")
	}
	if err := p.Validate(); err != nil {
		return "", fmt.Errorf("save plan: %w", err)
	}
	if id == "" {
		id = store.NewID("plan-")
	}
	if err := store.WriteFileAtomic(filepath.Join(PlansDir(stateDir), id+".json"), p.JSON(), 0o644); err != nil {
		return "", fmt.Errorf("save plan: %w", err)
	}
	return id, nil
}

// LoadPlan reads a plan given a file path, a saved plan's id, or a unique
// prefix of one. It returns the plan and its id (the file's base name
// without .json when a path was given).
func LoadPlan(stateDir, idOrFile string) (Plan, string, error) {
	ref := strings.TrimSpace(idOrFile)
	if ref == "" {
		return Plan{}, "", errors.New("load plan: no plan id or file given")
	}
	path := ""
	if st, err := os.Stat(ref); err == nil && st.Mode().IsRegular() {
		path = ref
	} else if stateDir != "" {
		dir := PlansDir(stateDir)
		exact := filepath.Join(dir, ref+".json")
		if !strings.ContainsRune(ref, os.PathSeparator) && fileExists(exact) {
			path = exact
		} else {
			p, err := planByPrefix(dir, ref)
			if err != nil {
				return Plan{}, "", err
			}
			path = p
		}
	} else {
		return Plan{}, "", fmt.Errorf("load plan: %s is not a file", ref)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Plan{}, "", fmt.Errorf("load plan: %w", err)
	}
	p, err := ParsePlan(data)
	if err != nil {
		return Plan{}, "", fmt.Errorf("load plan %s: %w", path, err)
	}
	return p, strings.TrimSuffix(filepath.Base(path), ".json"), nil
}

func planByPrefix(dir, prefix string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("load plan: no file or saved plan named %q", prefix)
		}
		return "", fmt.Errorf("load plan: %w", err)
	}
	var hits []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") && strings.HasPrefix(n, prefix) {
			hits = append(hits, strings.TrimSuffix(n, ".json"))
		}
	}
	sort.Strings(hits)
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("load plan: no file or saved plan named %q", prefix)
	case 1:
		return filepath.Join(dir, hits[0]+".json"), nil
	default:
		return "", fmt.Errorf("load plan: %q matches %d saved plans (%s); give more of the id", prefix, len(hits), strings.Join(hits, ", "))
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
