package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/tools"
)

// editFileTool replaces exact text in a file.
type editFileTool struct{}

func (editFileTool) Name() string   { return "edit_file" }
func (editFileTool) ReadOnly() bool { return false }
func (editFileTool) Description() string {
	return "Replace exact text in a file you have read. old_string must match exactly, indentation included, and be unique unless replace_all; " +
		"add surrounding lines to make it unique. An empty old_string creates a new file."
}

// Schema is editFileSchema (schemas_gen.go), generated from editArgs; see
// schema_test.go.
func (editFileTool) Schema() json.RawMessage { return json.RawMessage(editFileSchema) }

// editSpec is one replacement; pointers tell a missing argument from an
// empty string.
type editSpec struct {
	OldString  *string    `json:"old_string"`
	NewString  *string    `json:"new_string"`
	ReplaceAll tools.Bool `json:"replace_all,omitempty"`
}

type editArgs struct {
	pathArg
	editSpec
}

// editOutcome is the result of applying edits in memory.
type editOutcome struct {
	change fileChange
	edits  int
	// replacedAll counts occurrences changed by replace_all edits, which
	// the model cannot know in advance.
	replacedAll int
}

func (editFileTool) plan(ctx context.Context, env *tools.Env, raw json.RawMessage) (editOutcome, error) {
	var a editArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return editOutcome{}, err
	}
	return planEdits(ctx, env, a.pathArg, []editSpec{a.editSpec}, false)
}

// planEdits loads the file and applies edits in order in memory. When
// numbered is set, errors name the failing edit's index for multi_edit.
func planEdits(ctx context.Context, env *tools.Env, pa pathArg, edits []editSpec, numbered bool) (editOutcome, error) {
	p, err := pa.get()
	if err != nil {
		return editOutcome{}, err
	}
	abs, err := env.Resolve(p, true)
	if err != nil {
		return editOutcome{}, err
	}
	display := displayPath(env, abs)
	cur, err := loadText(env, abs, display)
	if err != nil {
		return editOutcome{}, err
	}
	content, exists, all := cur.content, cur.exists, 0
	for i, e := range edits {
		if err := ctx.Err(); err != nil {
			return editOutcome{}, err
		}
		next, n, err := applyEdit(ctx, content, exists, e, display)
		if err != nil {
			if numbered {
				return editOutcome{}, fmt.Errorf("edits[%d] (edit %d of %d) failed, so no edits were applied: %w", i, i+1, len(edits), err)
			}
			return editOutcome{}, err
		}
		content, exists = next, true
		if e.ReplaceAll {
			all += n
		}
	}
	return editOutcome{
		change: fileChange{abs: abs, display: display, before: cur.content, after: content,
			existed: cur.exists, exist: true, mode: cur.mode},
		edits:       len(edits),
		replacedAll: all,
	}, nil
}

// applyEdit performs one replacement on content and returns the new
// content and the number of occurrences replaced.
func applyEdit(ctx context.Context, content string, exists bool, e editSpec, display string) (string, int, error) {
	if e.OldString == nil {
		return "", 0, errors.New("missing required argument \"old_string\"")
	}
	if e.NewString == nil {
		return "", 0, errors.New("missing required argument \"new_string\"")
	}
	old, repl := *e.OldString, *e.NewString
	if old == repl {
		return "", 0, errors.New("old_string and new_string are identical; there is nothing to change")
	}
	if old == "" {
		if !exists || content == "" {
			return repl, 1, nil
		}
		return "", 0, fmt.Errorf("old_string is empty but %s already has content; give the exact text to replace, or use write_file to replace the whole file", display)
	}
	if !exists {
		return "", 0, fmt.Errorf("file not found: %s; to create it use write_file, or edit_file with an empty old_string", display)
	}
	count := strings.Count(content, old)
	if count == 0 && usesCRLF(content) && !strings.Contains(old, "\r\n") && strings.Contains(old, "\n") {
		// The model almost always writes "\n"; match the file's endings.
		crOld := strings.ReplaceAll(old, "\n", "\r\n")
		if c := strings.Count(content, crOld); c > 0 {
			old, repl, count = crOld, strings.ReplaceAll(strings.ReplaceAll(repl, "\r\n", "\n"), "\n", "\r\n"), c
		}
	}
	switch {
	case count == 0:
		return "", 0, fmt.Errorf("old_string was not found in %s. %s", display, describeClosest(ctx, content, old))
	case count > 1 && !bool(e.ReplaceAll):
		return "", 0, fmt.Errorf("old_string matches %d places in %s (%s); include more surrounding lines to make it unique, or set replace_all to change every occurrence",
			count, display, matchLines(content, old))
	}
	if e.ReplaceAll {
		return strings.ReplaceAll(content, old, repl), count, nil
	}
	return strings.Replace(content, old, repl, 1), 1, nil
}

// matchLines lists the starting lines of the first few occurrences of sub.
func matchLines(content, sub string) string {
	var lines []string
	from := 0
	for len(lines) < 10 {
		i := strings.Index(content[from:], sub)
		if i < 0 {
			break
		}
		lines = append(lines, fmt.Sprint(lineAt(content, from+i)))
		from += i + len(sub)
	}
	return "lines " + strings.Join(lines, ", ")
}

func (t editFileTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	out, err := t.plan(ctx, env, raw)
	if err != nil {
		return tools.Result{}, err
	}
	if err := commitChanges(ctx, env, []fileChange{out.change}); err != nil {
		return tools.Result{}, err
	}
	return editResult(env, out), nil
}

// editResult phrases the outcome of edit_file and multi_edit.
func editResult(env *tools.Env, out editOutcome) tools.Result {
	c := out.change
	add, del := c.counts()
	verb := "edited"
	if c.operation() == "create" {
		verb = "created"
	}
	extra := ""
	if out.edits > 1 {
		extra = fmt.Sprintf(" with %d edits", out.edits)
	}
	summary := fmt.Sprintf("%s %s%s (+%d -%d)", verb, c.display, extra, add, del)
	msg := summary
	if out.replacedAll > 0 {
		msg += fmt.Sprintf("; replace_all changed %d occurrence(s)", out.replacedAll)
	}
	return tools.Result{Content: tools.Truncate(msg, env.Limit()), Summary: summary, Diff: resultDiff(c)}
}

// Preview shows the diff the edit would make.
func (t editFileTool) Preview(ctx context.Context, env *tools.Env, raw json.RawMessage) ([]tools.Preview, error) {
	out, err := t.plan(ctx, env, raw)
	if err != nil {
		return nil, err
	}
	return []tools.Preview{out.change.preview()}, nil
}
