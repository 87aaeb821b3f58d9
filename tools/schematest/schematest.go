// Package schematest checks tool argument schemas in tests: that they are
// closed objects a provider accepts, that the generated schemas_gen.go of
// a package is fresh, and that another process generates the very same
// bytes, since the schemas are part of every request's cached prompt
// prefix. The generated file is the golden file: its diff is the review of
// a schema change.
//
// A package's schemas_gen.go is rewritten with go generate, which runs
// its TestSchemasGenerated with the -update flag, e.g.
//
//	go generate ./tools/builtin
//	go test ./tools/builtin -run TestSchemasGenerated -update
package schematest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/tools/schemagen"
)

var update = flag.Bool("update", false, "rewrite the generated schema file")

// Entry is one tool's schema.
type Entry struct {
	Name   string
	Schema json.RawMessage
}

// Generated checks that the package's schemas_gen.go holds exactly what
// schemagen.Source writes for specs in package pkg, and says how to
// regenerate it when not; under -update it rewrites the file. Call it from
// TestSchemasGenerated, the test the package's go:generate line runs.
func Generated(t *testing.T, pkg string, specs []schemagen.Spec) {
	t.Helper()
	cmd := "go generate " + packageDir(t)
	got, err := schemagen.Source(pkg, cmd, specs)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(GeneratedFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(GeneratedFile)
	if err != nil {
		t.Fatalf("%v; generate it with: %s", err, cmd)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s/%s is stale (an argument struct, a tag or an edit changed); regenerate it with\n\t%s\nand review the diff, since the schemas are part of the cached prompt prefix.\n%s",
			packageDir(t), GeneratedFile, cmd, lineDiff(want, got))
	}
}

// GeneratedFile is the name of the file Generated checks, in the package
// directory the test runs in.
const GeneratedFile = "schemas_gen.go"

// packageDir is the directory the test runs in, relative to the module
// root, as a go command argument such as ./tools/builtin.
func packageDir(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for root := wd; ; {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			rel, err := filepath.Rel(root, wd)
			if err != nil {
				t.Fatal(err)
			}
			return "./" + filepath.ToSlash(rel)
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "."
		}
		root = parent
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got []byte) string {
	w := strings.Split(string(want), "\n")
	g := strings.Split(string(got), "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

// Check reports every entry that is not compact, valid JSON describing a
// closed object: type object, additionalProperties false on it and on
// every nested object, every required name a property.
func Check(t *testing.T, entries []Entry) {
	t.Helper()
	for _, e := range entries {
		var compact bytes.Buffer
		if err := json.Compact(&compact, e.Schema); err != nil {
			t.Errorf("%s: schema is not valid JSON: %v", e.Name, err)
			continue
		}
		if compact.String() != string(e.Schema) {
			t.Errorf("%s: schema is not compact", e.Name)
		}
		var v map[string]any
		if err := json.Unmarshal(e.Schema, &v); err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if _, ok := v["required"]; !ok {
			t.Errorf("%s: schema lacks required", e.Name)
		}
		if _, ok := v["properties"]; !ok {
			t.Errorf("%s: schema lacks properties", e.Name)
		}
		for _, msg := range checkObject(v, "") {
			t.Errorf("%s: %s", e.Name, msg)
		}
	}
}

// checkObject checks the object schema s at path and the schemas below it.
func checkObject(s map[string]any, path string) []string {
	var out []string
	where := path
	if where == "" {
		where = "top level"
	}
	if s["type"] != "object" {
		return []string{fmt.Sprintf("%s: type is %v, not object", where, s["type"])}
	}
	if s["additionalProperties"] != false {
		out = append(out, fmt.Sprintf("%s: additionalProperties is %v, not false", where, s["additionalProperties"]))
	}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	for _, r := range req {
		if _, ok := props[r.(string)]; !ok {
			out = append(out, fmt.Sprintf("%s: required %q is not a property", where, r))
		}
	}
	for name, p := range props {
		ps, ok := p.(map[string]any)
		if !ok {
			out = append(out, fmt.Sprintf("%s.%s: schema is %v", path, name, p))
			continue
		}
		out = append(out, checkValue(ps, strings.TrimPrefix(path+"."+name, "."))...)
	}
	return out
}

func checkValue(s map[string]any, path string) []string {
	switch s["type"] {
	case "object":
		return checkObject(s, path)
	case "array":
		items, ok := s["items"].(map[string]any)
		if !ok {
			return []string{path + ": array without an items schema"}
		}
		return checkValue(items, path+"[]")
	case "string", "integer", "number", "boolean":
		return nil
	}
	return []string{fmt.Sprintf("%s: type %v", path, s["type"])}
}

// childEnv, set in a child test process, names the file the child writes
// its schemas to.
const childEnv = "REASONIX_SCHEMATEST_OUT"

// StableAcrossProcesses checks that a separate run of the test binary
// generates the same bytes as this one: build returns the generated file.
// The child runs with JSONSCHEMAGODEBUG set, which changes the library's
// defaults, and one CPU.
//
// Call it from a top-level test function: the child runs only that test.
func StableAcrossProcesses(t *testing.T, build func() []byte) {
	t.Helper()
	if out := os.Getenv(childEnv); out != "" {
		if err := os.WriteFile(out, build(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := build()
	out := filepath.Join(t.TempDir(), "schemas")
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1")
	cmd.Env = append(slices.Clone(os.Environ()), childEnv+"="+out,
		"JSONSCHEMAGODEBUG=typeschemasnull=1", "GOMAXPROCS=1")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child process: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("child process wrote no schemas: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("schemas differ between processes:\nthis process:\n%s\nother process:\n%s", want, got)
	}
}
