package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/internal/repair"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/openai"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools"
)

// mcpTool stands in for a remote MCP tool: a fixed schema and a recorder
// of the arguments it is called with.
type mcpTool struct {
	schema json.RawMessage
	got    []json.RawMessage
}

func (m *mcpTool) Name() string            { return "notion_post_page" }
func (m *mcpTool) Description() string     { return "Create a page" }
func (m *mcpTool) Schema() json.RawMessage { return m.schema }
func (m *mcpTool) ReadOnly() bool          { return false }
func (m *mcpTool) Execute(_ context.Context, _ *tools.Env, args json.RawMessage) (tools.Result, error) {
	m.got = append(m.got, append(json.RawMessage(nil), args...))
	return tools.Result{Content: "created page 42"}, nil
}

// TestFlattenedSchemaOverTheWire: a provider with flatten_schemas sees a
// deep MCP-style schema as dot-path parameters, the model answers in that
// form, and the tool receives the nested arguments its own schema wants.
// The tools array is the same on every request.
func TestFlattenedSchemaOverTheWire(t *testing.T) {
	schema, err := os.ReadFile("../internal/flatten/testdata/notion_post_page.json")
	if err != nil {
		t.Fatal(err)
	}
	flatArgs := `{"parent.page_id":"9b1d","properties.title.title":[{"text":{"content":"Notes"}}]}`
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{ToolCalls: []scripted.Call{{Name: "notion_post_page", Arguments: flatArgs}}, ChunkSize: 9},
		{Text: "Created."},
	}})
	on := true
	prov, err := openai.NewProvider(providers.Config{Name: "ds", BaseURL: srv.URL(), Models: []string{"m"}, DefaultModel: "m", FlattenSchemas: &on})
	if err != nil {
		t.Fatal(err)
	}
	tool := &mcpTool{schema: schema}
	s, err := New(Config{Provider: prov, Model: "m", System: "sys", Tools: tools.NewRegistry(tool),
		FlattenSchemas: providers.FlattensSchemas(prov)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Send(context.Background(), "make a page")
	if err != nil || out.Text != "Created." {
		t.Fatalf("Send: %q, %v", out.Text, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	var body struct {
		Tools []struct {
			Function struct {
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(reqs[0], &body); err != nil || len(body.Tools) != 1 {
		t.Fatalf("tools: %v", err)
	}
	sent := body.Tools[0].Function.Parameters
	if !bytes.Contains(sent, []byte(`"parent.page_id"`)) || !bytes.Contains(sent, []byte(`"properties.title.title"`)) {
		t.Errorf("the schema was not advertised flat: %s", sent)
	}
	if len(tool.got) != 1 {
		t.Fatalf("tool calls = %d", len(tool.got))
	}
	want := `{"parent":{"page_id":"9b1d"},"properties":{"title":{"title":[{"text":{"content":"Notes"}}]}}}`
	if string(tool.got[0]) != want {
		t.Errorf("tool got %s\nwant        %s", tool.got[0], want)
	}
	if err := repair.Validate(schema, string(tool.got[0])); err != nil {
		t.Errorf("re-nested arguments do not fit the tool's own schema: %v", err)
	}
	var a, b map[string]json.RawMessage
	json.Unmarshal(reqs[0], &a)
	json.Unmarshal(reqs[1], &b)
	if !bytes.Equal(a["tools"], b["tools"]) {
		t.Error("the tools array changed between requests")
	}

	// Without flatten_schemas the same schema goes out as written.
	off := false
	plain, _ := openai.NewProvider(providers.Config{Name: "x", BaseURL: srv.URL(), Models: []string{"m"}, DefaultModel: "m", FlattenSchemas: &off})
	s2, err := New(Config{Provider: plain, Model: "m", Tools: tools.NewRegistry(tool), FlattenSchemas: providers.FlattensSchemas(plain)})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(s2.toolsJSON, []byte("parent.page_id")) {
		t.Error("flattened without flatten_schemas")
	}
}

func TestFlattenDefaultsOnForDeepSeek(t *testing.T) {
	for url, want := range map[string]bool{"https://api.deepseek.com/v1": true, "https://api.deepseek.com": true, "http://localhost:8000/v1": false} {
		if got := (providers.Config{BaseURL: url}).Flattens(); got != want {
			t.Errorf("Flattens(%s) = %v", url, got)
		}
	}
}
