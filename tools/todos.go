package tools

import "github.com/reasonix/reasonix/events"

// todosKey is where a session's todo list lives in its State.
const todosKey = "todos"

// Todos returns a copy of the session's todo list, which the todo tools
// keep and the coordinator seeds from an approved plan.
func (e *Env) Todos() []events.Todo {
	list, _ := e.State.Get(todosKey).([]events.Todo)
	return append([]events.Todo(nil), list...)
}

// SetTodos replaces the session's todo list with a copy of items; an item
// without a status is pending.
func (e *Env) SetTodos(items []events.Todo) {
	list := make([]events.Todo, len(items))
	for i, it := range items {
		if it.Status == "" {
			it.Status = "pending"
		}
		list[i] = it
	}
	e.State.Set(todosKey, list)
}
