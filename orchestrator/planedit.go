package orchestrator

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// PlanEditor says how to run a person's editor on a plan. Both front ends
// that ask about plans (the line prompt and the TUI) edit through it, so an
// edited plan is parsed and validated the same way everywhere.
type PlanEditor struct {
	// Command is the editor command line, run through sh with the file as
	// $1; "" uses EditorCommand(os.Getenv).
	Command string
	// Stdin is handed to the editor only when set: a reader that is not a
	// real file would be copied from by exec and swallow input meant for
	// someone else.
	Stdin *os.File
	// Stdout and Stderr receive the editor's drawing; nil discards.
	Stdout, Stderr io.Writer
}

// EditorCommand returns the editor a person chose: $VISUAL, else $EDITOR,
// else vi, as git does.
func EditorCommand(getenv func(string) string) string {
	for _, k := range []string{"VISUAL", "EDITOR"} {
		if v := getenv(k); strings.TrimSpace(v) != "" {
			return v
		}
	}
	return "vi"
}

// EditPlan writes draft to a temporary file, opens it in the editor, then
// parses and validates what was saved. It also returns the saved text, so
// an edit that does not validate can be fixed rather than redone.
func EditPlan(ctx context.Context, draft []byte, ed PlanEditor) (Plan, []byte, error) {
	f, err := os.CreateTemp("", "reasonix-plan-*.json")
	if err != nil {
		return Plan{}, draft, fmt.Errorf("edit plan: %w", err)
	}
	name := f.Name()
	defer os.Remove(name)
	_, werr := f.Write(draft)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return Plan{}, draft, fmt.Errorf("edit plan: %w", werr)
	}
	editor := ed.Command
	if strings.TrimSpace(editor) == "" {
		editor = EditorCommand(os.Getenv)
	}
	// Through sh, so EDITOR may carry arguments ("code --wait"); the file
	// is passed as $1 so its name needs no quoting.
	cmd := exec.CommandContext(ctx, "sh", "-c", editor+` "$1"`, "sh", name)
	if ed.Stdin != nil {
		cmd.Stdin = ed.Stdin
	}
	cmd.Stdout, cmd.Stderr = ed.Stdout, ed.Stderr
	if err := cmd.Run(); err != nil {
		return Plan{}, draft, fmt.Errorf("editor %q failed: %w", editor, err)
	}
	text, err := os.ReadFile(name)
	if err != nil {
		return Plan{}, draft, fmt.Errorf("edit plan: %w", err)
	}
	p, err := ParsePlan(text)
	if err != nil {
		return Plan{}, text, fmt.Errorf("edited plan: %w", err)
	}
	return p, text, nil
}
