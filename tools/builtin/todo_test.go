package builtin

import (
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

func TestTodoWriteValidates(t *testing.T) {
	env := tools.NewEnv(t.TempDir())
	bad := []string{
		`{}`,
		`{"todos":[{"content":"","status":"pending"}]}`,
		`{"todos":[{"content":"a","status":"done"}]}`,
		`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`,
		`{"todos":"nope"}`,
	}
	for _, args := range bad {
		if _, err := runTool(t, todoWriteTool{}, env, args); err == nil {
			t.Errorf("%s: want an error", args)
		}
	}
	if got := env.Todos(); len(got) != 0 {
		t.Fatalf("invalid writes must not change state, got %v", got)
	}
}

func TestTodoWriteAndRead(t *testing.T) {
	env := tools.NewEnv(t.TempDir())
	res, err := runTool(t, todoWriteTool{}, env, `{"todos":[
		{"content":"Write tests","activeForm":"Writing tests","status":"completed"},
		{"content":"Fix bug","activeForm":"Fixing bug","status":"in_progress"},
		{"content":" Ship ","status":"pending"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "[x] Write tests\n[~] Fix bug (Fixing bug)\n[ ] Ship\n"
	if res.Content != want {
		t.Fatalf("got %q want %q", res.Content, want)
	}
	if len(res.Todos) != 3 || res.Todos[2].Content != "Ship" || res.Summary != "todos 1/3 done" {
		t.Fatalf("result todos %+v summary %q", res.Todos, res.Summary)
	}
	read, err := runTool(t, todoReadTool{}, env, ``)
	if err != nil || read.Content != want {
		t.Fatalf("todo_read: %q %v", read.Content, err)
	}
	// Replacing with an empty list clears it.
	if _, err := runTool(t, todoWriteTool{}, env, `{"todos":[]}`); err != nil {
		t.Fatal(err)
	}
	if read, _ := runTool(t, todoReadTool{}, env, `{}`); read.Content != "(no todos)\n" {
		t.Fatalf("after clear: %q", read.Content)
	}
}

func TestSetTodos(t *testing.T) {
	env := tools.NewEnv(t.TempDir())
	items := []events.Todo{{Content: "Plan step one"}, {Content: "Step two", Status: TodoInProgress}}
	env.SetTodos(items)
	items[0].Content = "mutated"
	got := env.Todos()
	if len(got) != 2 || got[0].Status != TodoPending || got[0].Content != "Plan step one" {
		t.Fatalf("seeded %+v", got)
	}
	if out := RenderTodos(got); !strings.Contains(out, "[~] Step two\n") {
		t.Fatalf("render %q", out)
	}
	// A child session starts with its own empty list.
	if len(env.Fork().Todos()) != 0 {
		t.Fatal("fork shares todos")
	}
}
