package orchestrator

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/commands"
	"github.com/reasonix/reasonix/providers/scripted"
)

// fakePrompts stands in for MCP: the registration point for prompt
// commands.
type fakePrompts struct{ rendered []string }

func (f *fakePrompts) Prompts() []commands.Prompt {
	return []commands.Prompt{{Name: "mcp__gh__review", Description: "Review a PR", Source: "mcp:gh"}}
}

func (f *fakePrompts) Render(_ context.Context, name, args string) (string, error) {
	f.rendered = append(f.rendered, name+" "+args)
	return "PROMPT FROM SERVER: " + args, nil
}

func TestExpandPromptCommandsAndUnknownNames(t *testing.T) {
	fp := &fakePrompts{}
	h := newHarness(t, nil, func(rt *Runtime) { rt.Prompts = fp })
	ctx := context.Background()

	ent, err := h.coord.Expand(ctx, "s", "/mcp__gh__review 42")
	if err != nil || ent.Text != "PROMPT FROM SERVER: 42" || ent.Command != "/mcp__gh__review" {
		t.Fatalf("prompt command = %+v, %v", ent, err)
	}
	if !reflect.DeepEqual(fp.rendered, []string{"mcp__gh__review 42"}) {
		t.Errorf("rendered %q", fp.rendered)
	}
	cmds := h.coord.Commands()
	if len(cmds) != 1 || cmds[0].Name != "mcp__gh__review" || cmds[0].Source != "mcp:gh" {
		t.Errorf("Commands() = %+v", cmds)
	}

	_, err = h.coord.Expand(ctx, "s", "/mcp__gh__reveiw 42")
	var unknown *UnknownCommandError
	if !errors.As(err, &unknown) || unknown.Name != "mcp__gh__reveiw" || len(unknown.Near) == 0 || unknown.Near[0] != "mcp__gh__review" {
		t.Errorf("unknown command error = %v", err)
	}

	// A path is text, and so is a lone slash.
	for _, text := range []string{"/usr/bin/env is missing", "/ what", "plain"} {
		if ent, err := h.coord.Expand(ctx, "s", text); err != nil || ent.Text != text {
			t.Errorf("Expand(%q) = %+v, %v", text, ent, err)
		}
	}
}

// A ! line with no bash tool is refused, calls no model, and the refusal
// reaches the model with the next turn.
func TestEngineShellLineRidesInTheNextTurn(t *testing.T) {
	h := newHarness(t, []scripted.Turn{{Text: "ok"}})
	eng, err := NewEngine(h.coord, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	if err := eng.Send(ctx, "!ls"); err != nil {
		t.Fatal(err)
	}
	if n := len(h.used()); n != 0 {
		t.Fatalf("a ! line called the model (%d sessions)", n)
	}
	if err := eng.Send(ctx, "next"); err != nil {
		t.Fatal(err)
	}
	first := h.used()[0].firstUser()
	if !strings.Contains(first, "`ls` was not run: the bash tool is disabled") || !strings.HasSuffix(first, "next") {
		t.Errorf("the next turn: %q", first)
	}
	if err := eng.Send(ctx, "!"); err == nil {
		t.Error("an empty ! line was accepted")
	}
}
