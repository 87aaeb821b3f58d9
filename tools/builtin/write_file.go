package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reasonix/reasonix/tools"
)

// writeFileTool creates or replaces a whole file.
type writeFileTool struct{}

func (writeFileTool) Name() string   { return "write_file" }
func (writeFileTool) ReadOnly() bool { return false }
func (writeFileTool) Description() string {
	return "Create a file, with its parent directories, or replace its whole content: an existing file must be read with read_file first. " +
		"Prefer edit_file for changes to existing files."
}

// Schema is writeFileSchema (schemas_gen.go), generated from writeArgs; see
// schema_test.go.
func (writeFileTool) Schema() json.RawMessage { return json.RawMessage(writeFileSchema) }

type writeArgs struct {
	pathArg
	Content *string `json:"content"`
}

// plan works out the change without touching the disk.
func (writeFileTool) plan(env *tools.Env, raw json.RawMessage) (fileChange, error) {
	var a writeArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return fileChange{}, err
	}
	p, err := a.get()
	if err != nil {
		return fileChange{}, err
	}
	if a.Content == nil {
		return fileChange{}, errors.New("missing required argument \"content\" (use an empty string for an empty file)")
	}
	abs, err := env.Resolve(p, true)
	if err != nil {
		return fileChange{}, err
	}
	display := displayPath(env, abs)
	cur, err := loadTextForWrite(env, abs, display)
	if err != nil {
		return fileChange{}, err
	}
	if cur.exists && !env.Reads.Has(abs) {
		return fileChange{}, fmt.Errorf("%s already exists and has not been read in this session; read it with read_file first (or use edit_file), so its current content is not lost by accident", display)
	}
	return fileChange{abs: abs, display: display, before: cur.content, after: *a.Content,
		existed: cur.exists, exist: true, mode: cur.mode}, nil
}

// loadTextForWrite is loadText except that a binary file may be replaced
// (after it was read): the model saw its description and chose to overwrite.
func loadTextForWrite(env *tools.Env, abs, display string) (textFile, error) {
	cur, err := loadText(env, abs, display)
	if errors.Is(err, errBinary) {
		return cur, nil
	}
	return cur, err
}

func (t writeFileTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	c, err := t.plan(env, raw)
	if err != nil {
		return tools.Result{}, err
	}
	add, del := c.counts()
	var msg string
	switch c.operation() {
	case "unchanged":
		msg = fmt.Sprintf("unchanged %s (content is identical)", c.display)
	case "create":
		msg = fmt.Sprintf("created %s (+%d)", c.display, add)
	default:
		msg = fmt.Sprintf("updated %s (+%d -%d)", c.display, add, del)
	}
	if err := commitChanges(ctx, env, []fileChange{c}); err != nil {
		return tools.Result{}, err
	}
	// The model now knows the whole content, so later overwrites are fine.
	env.Reads.Add(c.abs)
	return tools.Result{Content: tools.Truncate(msg, env.Limit()), Summary: msg, Diff: resultDiff(c)}, nil
}

// Preview shows the diff the write would make.
func (t writeFileTool) Preview(_ context.Context, env *tools.Env, raw json.RawMessage) ([]tools.Preview, error) {
	c, err := t.plan(env, raw)
	if err != nil {
		return nil, err
	}
	return []tools.Preview{c.preview()}, nil
}
