package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

var (
	deepOnce sync.Once
	deepBin  string
	deepErr  error
)

// deepMCP builds testdata/deepmcp, an MCP server whose one tool has a
// schema nested three levels deep.
func deepMCP(t *testing.T) string {
	t.Helper()
	deepOnce.Do(func() {
		deepBin = filepath.Join(filepath.Dir(binPath), "deepmcp")
		if runtime.GOOS == "windows" {
			deepBin += ".exe"
		}
		build := exec.Command("go", "build", "-o", deepBin, "./testdata/deepmcp")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			deepErr = fmt.Errorf("build deepmcp: %v\n%s", err, out)
		}
	})
	if deepErr != nil {
		t.Fatal(deepErr)
	}
	return deepBin
}

// TestE2EDeepMCPSchemaFlattenedAndRenested: with flatten_schemas, the
// model is offered the MCP tool's deep schema as dot-path parameters,
// answers in that form, and the server receives the nested arguments its
// own schema asks for.
func TestE2EDeepMCPSchemaFlattenedAndRenested(t *testing.T) {
	t.Parallel()
	server := deepMCP(t)
	flat := `{"parent.page_id":"9b1d","properties.title.title":[{"text":{"content":"Notes"}}],"icon.emoji":"*"}`
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{{Name: "mcp__deep__post_page", Arguments: flat}}},
		scripted.Turn{Text: "Page created."},
	)
	e.writeUserConfig(fmt.Sprintf(`
[[providers]]
name = "flat"
base_url = %q
model = "test-model"
flatten_schemas = true

[[plugins]]
name = "deep"
command = %q

[permissions]
allow = ["mcp__deep__*"]
`, e.srv.URL(), server))
	r := e.run("", "run", "make a page called Notes")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d\n%s", len(reqs), r.stderr)
	}
	var body struct {
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(reqs[0], &body); err != nil {
		t.Fatal(err)
	}
	var params json.RawMessage
	for _, tl := range body.Tools {
		if tl.Function.Name == "mcp__deep__post_page" {
			params = tl.Function.Parameters
		}
	}
	for _, want := range []string{`"parent.page_id"`, `"properties.title.title"`, `"icon.emoji"`} {
		if !bytes.Contains(params, []byte(want)) {
			t.Errorf("the deep schema was not advertised flat (%s missing): %s", want, params)
		}
	}
	// The server answers with what it received: the nested form.
	var msgs []struct {
		Role, Content string
	}
	json.Unmarshal(messagesOf(t, reqs[1]), &msgs)
	result := msgs[len(msgs)-1].Content
	got := strings.TrimPrefix(result, "received ")
	var nested map[string]any
	if err := json.Unmarshal([]byte(got), &nested); err != nil {
		t.Fatalf("tool result %q: %v", result, err)
	}
	parent, _ := nested["parent"].(map[string]any)
	props, _ := nested["properties"].(map[string]any)
	title, _ := props["title"].(map[string]any)
	if parent["page_id"] != "9b1d" || title["title"] == nil || nested["parent.page_id"] != nil {
		t.Errorf("the server did not receive nested arguments: %s", got)
	}
	// History keeps the flat arguments the model sent; the prefix holds.
	if !bytes.Contains(messagesOf(t, reqs[1]), []byte(`parent.page_id`)) {
		t.Error("the history lost the model's own arguments")
	}
	assertPrefixStable(t, reqs)
}
