package builtin

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/reasonix/reasonix/tools"
)

// multiEditTool applies several replacements to one file as a unit.
type multiEditTool struct{}

func (multiEditTool) Name() string   { return "multi_edit" }
func (multiEditTool) ReadOnly() bool { return false }
func (multiEditTool) Description() string {
	return "Apply several edits to one file in order, each like edit_file on the result of the ones before. " +
		"All or nothing: if one fails, the file is left unchanged."
}

// Schema is multiEditSchema (schemas_gen.go), generated from multiEditArgs;
// see schema_test.go.
func (multiEditTool) Schema() json.RawMessage { return json.RawMessage(multiEditSchema) }

type multiEditArgs struct {
	pathArg
	Edits []editSpec `json:"edits"`
}

func (multiEditTool) plan(ctx context.Context, env *tools.Env, raw json.RawMessage) (editOutcome, error) {
	var a multiEditArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return editOutcome{}, err
	}
	if len(a.Edits) == 0 {
		return editOutcome{}, errors.New("edits is empty; give at least one {old_string, new_string}")
	}
	return planEdits(ctx, env, a.pathArg, a.Edits, true)
}

func (t multiEditTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	out, err := t.plan(ctx, env, raw)
	if err != nil {
		return tools.Result{}, err
	}
	if err := commitChanges(ctx, env, []fileChange{out.change}); err != nil {
		return tools.Result{}, err
	}
	return editResult(env, out), nil
}

// Preview shows the combined diff of all edits.
func (t multiEditTool) Preview(ctx context.Context, env *tools.Env, raw json.RawMessage) ([]tools.Preview, error) {
	out, err := t.plan(ctx, env, raw)
	if err != nil {
		return nil, err
	}
	return []tools.Preview{out.change.preview()}, nil
}
