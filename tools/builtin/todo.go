package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// RenderTodos renders a todo list as a checklist: "[ ]" pending, "[~]" in
// progress (with its activeForm when set), "[x]" completed.
func RenderTodos(items []events.Todo) string {
	if len(items) == 0 {
		return "(no todos)\n"
	}
	var b strings.Builder
	for _, it := range items {
		switch it.Status {
		case TodoCompleted:
			b.WriteString("[x] " + it.Content)
		case TodoInProgress:
			b.WriteString("[~] " + it.Content)
			if it.ActiveForm != "" && it.ActiveForm != it.Content {
				b.WriteString(" (" + it.ActiveForm + ")")
			}
		default:
			b.WriteString("[ ] " + it.Content)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// validateTodos checks a whole replacement list.
func validateTodos(items []events.Todo) error {
	inProgress := 0
	for i, it := range items {
		if strings.TrimSpace(it.Content) == "" {
			return fmt.Errorf("todos[%d]: content is empty", i)
		}
		switch it.Status {
		case TodoPending, TodoCompleted:
		case TodoInProgress:
			inProgress++
		default:
			return fmt.Errorf("todos[%d]: status %q must be pending, in_progress or completed", i, it.Status)
		}
	}
	if inProgress > 1 {
		return fmt.Errorf("%d todos are in_progress; keep exactly one in progress at a time", inProgress)
	}
	return nil
}

type todoWriteTool struct{}

func (todoWriteTool) Name() string { return "todo_write" }

// ReadOnly is false: the call changes session state, so it must not run
// concurrently with another todo_write in the same turn.
func (todoWriteTool) ReadOnly() bool { return false }

func (todoWriteTool) Description() string {
	return "Replace your todo list with the whole new list. For multi-step work: mark an item in_progress " +
		"before starting it (one at a time) and completed as soon as it is done."
}

// todoWriteArgs holds the whole list. events.Todo belongs to the events
// package, so its properties are described here.
type todoWriteArgs struct {
	Todos *[]events.Todo `json:"todos"`
}

// Schema is todoWriteSchema (schemas_gen.go), generated from todoWriteArgs;
// see schema_test.go.
func (todoWriteTool) Schema() json.RawMessage { return json.RawMessage(todoWriteSchema) }

func (todoWriteTool) Execute(_ context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a todoWriteArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Result{}, err
	}
	if a.Todos == nil {
		return tools.Result{}, fmt.Errorf("todos is required: send the whole list")
	}
	items := *a.Todos
	for i := range items {
		items[i].Content = strings.TrimSpace(items[i].Content)
		items[i].ActiveForm = strings.TrimSpace(items[i].ActiveForm)
	}
	if err := validateTodos(items); err != nil {
		return tools.Result{}, err
	}
	env.SetTodos(items)
	done := 0
	for _, it := range items {
		if it.Status == TodoCompleted {
			done++
		}
	}
	return tools.Result{
		Content: RenderTodos(items),
		Summary: fmt.Sprintf("todos %d/%d done", done, len(items)),
		Todos:   append([]events.Todo(nil), items...),
	}, nil
}

type todoReadTool struct{}

func (todoReadTool) Name() string   { return "todo_read" }
func (todoReadTool) ReadOnly() bool { return true }

func (todoReadTool) Description() string { return "Show your current todo list." }

// Schema is todoReadSchema (schemas_gen.go), generated from an empty
// struct; see schema_test.go.
func (todoReadTool) Schema() json.RawMessage { return json.RawMessage(todoReadSchema) }

func (todoReadTool) Execute(_ context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a struct{}
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Result{}, err
	}
	items := env.Todos()
	return tools.Result{Content: RenderTodos(items), Summary: fmt.Sprintf("%d todos", len(items)), Todos: items}, nil
}
