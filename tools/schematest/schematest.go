// Package schematest checks tool argument schemas in tests: that they are
// closed objects a provider accepts, that their bytes match a golden file,
// and that another process builds the very same bytes, since the schemas
// are part of every request's cached prompt prefix.
//
// Golden files are rewritten with the -update flag, e.g.
//
//	go test ./tools/builtin -run Golden -update
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

	"github.com/reasonix/reasonix/tools"
)

var update = flag.Bool("update", false, "rewrite golden schema files")

// Entry is one tool's schema.
type Entry struct {
	Name   string
	Schema json.RawMessage
}

// Format lays entries out as golden text: a "-- name --" line, then the
// schema bytes exactly, then a newline.
func Format(entries []Entry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&b, "-- %s --\n%s\n", e.Name, e.Schema)
	}
	return b.Bytes()
}

// Golden compares got with the file at path, byte for byte, or rewrites
// the file under -update.
func Golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("schemas differ from %s; if the change is intended, run the test with -update and review the diff.\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// Check reports every entry that is not compact, valid JSON describing a
// closed object: type object, additionalProperties false on it and on
// every nested object, every required name a property. It also reports
// any schema tools.SchemaFor has failed to build.
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
	for _, err := range tools.SchemaErrors() {
		t.Errorf("schema not built: %v", err)
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
// builds the same bytes as this one. build returns the schemas' golden
// text; in the child, where other is true, it should first build the
// schemas in a different order. The child runs with JSONSCHEMAGODEBUG set,
// which changes the generator's defaults, and one CPU.
//
// Call it from a top-level test function: the child runs only that test.
func StableAcrossProcesses(t *testing.T, build func(other bool) []byte) {
	t.Helper()
	if out := os.Getenv(childEnv); out != "" {
		if err := os.WriteFile(out, build(true), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := build(false)
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
