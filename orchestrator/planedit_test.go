package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestEditPlan(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the editor runs through sh")
	}
	p, err := ParsePlan([]byte(`{"goal":"g","steps":[{"id":"s1","title":"old title"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	script := func(body string) string {
		f := filepath.Join(t.TempDir(), "ed.sh")
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return f
	}
	got, _, err := EditPlan(context.Background(), p.JSON(), PlanEditor{Command: script(`sed -i.bak 's/old title/new title/' "$1"`)})
	if err != nil || got.Steps[0].Title != "new title" {
		t.Fatalf("edit: %+v %v", got, err)
	}
	// An edit that does not validate comes back as text to fix.
	_, text, err := EditPlan(context.Background(), p.JSON(), PlanEditor{Command: script(`printf '{"goal":""}' > "$1"`)})
	if err == nil || !strings.Contains(err.Error(), "edited plan") || string(text) != `{"goal":""}` {
		t.Fatalf("invalid edit: %q %v", text, err)
	}
	if _, _, err := EditPlan(context.Background(), p.JSON(), PlanEditor{Command: "false"}); err == nil {
		t.Fatal("a failing editor was not reported")
	}
	if got := EditorCommand(func(k string) string { return map[string]string{"EDITOR": "nano"}[k] }); got != "nano" {
		t.Errorf("EditorCommand = %q", got)
	}
}
