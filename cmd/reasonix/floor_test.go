package main

import (
	"go/parser"
	"go/token"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFloorDepsListsEveryDependency keeps testdata/floor/deps.go, the
// bench's floor with every dependency linked, equal to the third-party
// packages Reasonix's own packages import: a dependency added or dropped
// without it would make the bench's split between the dependencies' cost
// and Reasonix's own quietly wrong.
func TestFloorDepsListsEveryDependency(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{.Module}}|{{join .Imports \" \"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const own = "github.com/reasonix/reasonix"
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[1], own) {
			continue // the standard library and the dependencies' own imports
		}
		for _, imp := range strings.Fields(parts[2]) {
			first, _, _ := strings.Cut(imp, "/")
			if strings.Contains(first, ".") && !strings.HasPrefix(imp, own+"/") && imp != own && !slices.Contains(want, imp) {
				want = append(want, imp)
			}
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), "testdata/floor/deps.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		got = append(got, p)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("testdata/floor/deps.go imports\n  %s\nReasonix's packages import these third-party packages\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
