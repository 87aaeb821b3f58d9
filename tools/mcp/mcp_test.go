package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

// The test binary doubles as the MCP servers the tests start: with
// serverEnv set it serves the named mode on stdio instead of testing.
const serverModeEnv = "REASONIX_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverModeEnv); mode != "" {
		serve(mode)
		return
	}
	os.Exit(m.Run())
}

type textArgs struct {
	Text string `json:"text"`
}

func testServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, in textArgs) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "count", Description: "count", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in textArgs) (*sdk.CallToolResult, struct {
			Words int `json:"words"`
		}, error) {
			return nil, struct {
				Words int `json:"words"`
			}{len(strings.Fields(in.Text))}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "environment"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(os.Environ(), "\n")}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "die", Description: "exit"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "add_tool", Description: "add a tool"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		sdk.AddTool(s, &sdk.Tool{Name: "late", Description: "added later"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil, nil
		})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "added"}}}, nil, nil
	})
	s.AddPrompt(&sdk.Prompt{Name: "review", Arguments: []*sdk.PromptArgument{{Name: "file", Required: true}, {Name: "focus"}}},
		func(_ context.Context, r *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user",
				Content: &sdk.TextContent{Text: "review " + r.Params.Arguments["file"] + " focus " + r.Params.Arguments["focus"]}}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: "test://hello", Name: "hello"}, func(_ context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, Text: "hello resource"}}}, nil
	})
	return s
}

func serve(mode string) {
	fmt.Fprintln(os.Stderr, "test server starting in mode", mode)
	switch mode {
	case "ok":
		_ = testServer().Run(context.Background(), &sdk.StdioTransport{})
	case "elicit":
		_ = elicitServer().Run(context.Background(), &sdk.StdioTransport{})
	case "hang":
		time.Sleep(time.Minute)
	case "garbage":
		for range 6000 {
			fmt.Println("not JSON-RPC, but logs on stdout")
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func selfServer(name, mode string) Config {
	exe, _ := os.Executable()
	return Config{Name: name, Command: exe, Env: map[string]string{serverModeEnv: mode, "FROM_CONFIG": "yes"}, Timeout: 10 * time.Second}
}

type notices struct {
	mu   sync.Mutex
	list []string
}

func (n *notices) add(s string) { n.mu.Lock(); n.list = append(n.list, s); n.mu.Unlock() }
func (n *notices) all() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.list, "\n")
}

func newManager(t *testing.T, cfgs ...Config) (*Manager, *notices) {
	t.Helper()
	n := &notices{}
	environ := append(os.Environ(), "DEEPSEEK_API_KEY=sk-secret-value-123", "SOME_TOKEN=abc")
	m := New(cfgs, Options{Root: t.TempDir(), LogDir: filepath.Join(t.TempDir(), "logs"), Environ: environ, Notify: n.add, Backoff: 50 * time.Millisecond})
	t.Cleanup(m.Close)
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return m, n
}

func toolByName(t *testing.T, m *Manager, name string) tools.Tool {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %s in %v", name, names(m.Tools()))
	return nil
}

func names(ts []tools.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

func call(t *testing.T, tl tools.Tool, args string) tools.Result {
	t.Helper()
	res, err := tl.Execute(context.Background(), tools.NewEnv(t.TempDir()), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", tl.Name(), err)
	}
	return res
}

func TestStdioServerToolsAccessAndResults(t *testing.T) {
	t.Parallel()
	m, _ := newManager(t, selfServer("t", "ok"))
	got := names(m.Tools())
	want := []string{"mcp__t__add_tool", "mcp__t__count", "mcp__t__die", "mcp__t__echo", "mcp__t__env"}
	if !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	echo, count := toolByName(t, m, "mcp__t__echo"), toolByName(t, m, "mcp__t__count")
	if r := call(t, echo, `{"text":"hi there"}`); r.Content != "hi there" || r.IsError {
		t.Fatalf("echo = %+v", r)
	}
	if r := call(t, count, `{"text":"a b c"}`); !strings.Contains(r.Content, `"words":3`) {
		t.Fatalf("count = %q: structured content should be kept", r.Content)
	}
	if echo.ReadOnly() || !count.ReadOnly() {
		t.Fatal("only the readOnlyHint tool is read-only")
	}
	a, err := tools.Describe(count, json.RawMessage(`{"text":"x"}`))
	if err != nil || a.Kind != tools.KindRead {
		t.Fatalf("count access = %+v, %v", a, err)
	}
	a, err = tools.Describe(echo, json.RawMessage(`{"text":"x"}`))
	if err != nil || a.Kind != tools.KindOther || a.Unknown {
		t.Fatalf("echo access = %+v, %v", a, err)
	}
	if _, err := tools.Describe(echo, json.RawMessage(`[1]`)); err == nil {
		t.Fatal("a non-object argument must be refused before anyone is asked")
	}
	// Schemas are byte-stable between listings.
	before := string(echo.Schema())
	if !strings.Contains(before, `"text"`) || !json.Valid(echo.Schema()) {
		t.Fatalf("schema = %s", before)
	}
	log, err := os.ReadFile(m.LogPath("t"))
	if err != nil || !strings.Contains(string(log), "test server starting") {
		t.Fatalf("stderr log = %q, %v", log, err)
	}
	st, _ := m.Status("t")
	if st.State != StateRunning || len(st.Tools) != 5 || len(st.Prompts) != 1 || len(st.Resources) != 1 {
		t.Fatalf("status = %+v", st)
	}
}

func TestServerEnvironmentHoldsOnlyBasicsAndItsOwn(t *testing.T) {
	t.Parallel()
	m, _ := newManager(t, selfServer("t", "ok"))
	r := call(t, toolByName(t, m, "mcp__t__env"), `{}`)
	if !strings.Contains(r.Content, "FROM_CONFIG=yes") || !strings.Contains(r.Content, "PATH=") {
		t.Fatalf("env lacks config or basics:\n%s", r.Content)
	}
	for _, leak := range []string{"DEEPSEEK_API_KEY", "SOME_TOKEN", "sk-secret"} {
		if strings.Contains(r.Content, leak) {
			t.Fatalf("server environment holds %s:\n%s", leak, r.Content)
		}
	}
}

func TestCrashedServerRestarts(t *testing.T) {
	t.Parallel()
	m, n := newManager(t, selfServer("t", "ok"))
	// A session holds its tools across a restart.
	die, echo := toolByName(t, m, "mcp__t__die"), toolByName(t, m, "mcp__t__echo")
	if _, err := die.Execute(context.Background(), nil, json.RawMessage(`{}`)); err == nil {
		t.Fatal("a call whose server died must fail")
	}
	// The next call waits for the restarted process instead of failing.
	res, err := echo.Execute(context.Background(), nil, json.RawMessage(`{"text":"back"}`))
	if err != nil || res.Content != "back" {
		t.Fatalf("the call after the crash: %+v, %v; notices:\n%s", res, err, n.all())
	}
	if !strings.Contains(n.all(), "restarting") {
		t.Fatalf("no restart notice:\n%s", n.all())
	}
}

func TestHangingServerTimesOut(t *testing.T) {
	t.Parallel()
	c := selfServer("slow", "hang")
	c.Timeout = 300 * time.Millisecond
	start := time.Now()
	m, n := newManager(t, c, selfServer("fine", "ok"))
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("waiting took %s", d)
	}
	if st, _ := m.Status("slow"); st.State != StateFailed || !strings.Contains(st.Err, "no handshake within") {
		t.Fatalf("status = %+v", st)
	}
	if !strings.Contains(n.all(), "MCP server slow failed") {
		t.Fatalf("notices:\n%s", n.all())
	}
	if len(m.Tools()) != 5 {
		t.Fatalf("the good server's tools are missing: %v", names(m.Tools()))
	}
}

func TestGarbageServerIsDropped(t *testing.T) {
	t.Parallel()
	c := selfServer("junk", "garbage")
	c.Timeout = 2 * time.Second
	m, n := newManager(t, c)
	// The SDK may fail on the first bad line or keep waiting for a
	// reply; either way the server is dropped within its timeout.
	if st, _ := m.Status("junk"); st.State != StateFailed || !(strings.Contains(st.Err, "not JSON-RPC") || strings.Contains(st.Err, "no handshake")) {
		t.Fatalf("status = %+v", st)
	}
	if !strings.Contains(n.all(), "MCP server junk failed") || len(m.Tools()) != 0 {
		t.Fatalf("notices:\n%s\ntools %v", n.all(), names(m.Tools()))
	}
	if want := "(stderr log: " + m.LogPath("junk") + ")"; !strings.Contains(n.all(), want) {
		t.Fatalf("a stdio server's failure does not point at its log %s:\n%s", want, n.all())
	}
}

// A remote server has no stderr: its failure notice names no log (it
// said "(stderr log: )" or a file that never fills).
func TestFailedHTTPServerNamesNoLog(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	m, n := newManager(t, Config{Name: "remote", Type: TypeHTTP, URL: srv.URL, Timeout: 5 * time.Second})
	if st, _ := m.Status("remote"); st.State != StateFailed {
		t.Fatalf("status = %+v", st)
	}
	if got := n.all(); !strings.Contains(got, "MCP server remote failed") || strings.Contains(got, "stderr log") {
		t.Fatalf("notices:\n%s", got)
	}
}

func TestToolListChangeIsAnnouncedNotSwapped(t *testing.T) {
	t.Parallel()
	m, _ := newManager(t, selfServer("t", "ok"))
	snapshot := names(m.Tools())
	call(t, toolByName(t, m, "mcp__t__add_tool"), `{}`)
	// Another session (a subagent) opening takes the new list without
	// swallowing the announcement the conversation is owed.
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(names(m.Tools()), "mcp__t__late") {
		if time.Now().After(deadline) {
			t.Fatal("the new tool was never listed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ch := m.Changes(); !strings.Contains(ch, "mcp__t__late") {
		t.Fatalf("changes = %q", ch)
	}
	if m.Changes() != "" {
		t.Fatal("a change is announced once")
	}
	if slices.Contains(snapshot, "mcp__t__late") {
		t.Fatal("the earlier snapshot must not change")
	}
}

func TestUntrustedServerDoesNotStart(t *testing.T) {
	t.Parallel()
	c := selfServer("repo", "ok")
	c.NeedsTrust = true
	m, _ := newManager(t, c)
	if st, _ := m.Status("repo"); st.State != StateUntrusted {
		t.Fatalf("state = %s", st.State)
	}
	if _, err := os.Stat(m.LogPath("repo")); err == nil {
		t.Fatal("an untrusted server was started (its log exists)")
	}
	if len(m.Untrusted()) != 1 || !m.Trust("repo") {
		t.Fatal("Trust should start the waiting server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := m.Status("repo"); st.State != StateRunning {
		t.Fatalf("state after trust = %+v", st)
	}
}

func TestToolsAllowDeny(t *testing.T) {
	t.Parallel()
	c := selfServer("t", "ok")
	c.Allow = []string{"e*", "count"}
	c.Deny = []string{"env"}
	m, _ := newManager(t, c)
	if got := names(m.Tools()); !slices.Equal(got, []string{"mcp__t__count", "mcp__t__echo"}) {
		t.Fatalf("tools = %v", got)
	}
}

func TestPromptsAndResources(t *testing.T) {
	t.Parallel()
	m, _ := newManager(t, selfServer("t", "ok"))
	p, ok := m.Prompt("/mcp__t__review")
	if !ok {
		t.Fatalf("prompts = %+v", m.Prompts())
	}
	args, err := PromptArgs(p, []string{"focus=errors", "main.go"})
	if err != nil || args["file"] != "main.go" || args["focus"] != "errors" {
		t.Fatalf("args = %v, %v", args, err)
	}
	if _, err := PromptArgs(p, nil); err == nil || !strings.Contains(err.Error(), `"file"`) {
		t.Fatalf("missing required argument: %v", err)
	}
	txt, err := m.GetPrompt(context.Background(), "t", "review", args)
	if err != nil || txt != "review main.go focus errors" {
		t.Fatalf("prompt = %q, %v", txt, err)
	}
	out, notes := m.ResourceBlocks(context.Background(), "summarise @t:test://hello and @nobody:x please")
	if len(notes) != 0 || !strings.Contains(out, "hello resource") || !strings.Contains(out, `uri="test://hello"`) {
		t.Fatalf("expanded = %q, %v", out, notes)
	}
}

func TestStreamableHTTPWithHeaders(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var auth []string
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	m, _ := newManager(t, Config{Name: "remote", Type: TypeHTTP, URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer tok"}, Timeout: 10 * time.Second})
	if r := call(t, toolByName(t, m, "mcp__remote__echo"), `{"text":"over http"}`); r.Content != "over http" {
		t.Fatalf("echo = %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 || auth[0] != "Bearer tok" {
		t.Fatalf("headers = %v", auth)
	}
}

func TestToolName(t *testing.T) {
	cases := map[[2]string]string{
		{"sentry", "search_issues"}: "mcp__sentry__search_issues",
		{"my server", "get.thing"}:  "mcp__my_server__get_thing",
		{"ü", "a/b"}:                "mcp_____a_b",
	}
	for in, want := range cases {
		if got := ToolName(in[0], in[1]); got != want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
	long := ToolName("a-very-long-server-name", strings.Repeat("x", 80))
	if len(long) != MaxNameLen || long != ToolName("a-very-long-server-name", strings.Repeat("x", 80)) {
		t.Fatalf("long name %q (%d)", long, len(long))
	}
	if other := ToolName("a-very-long-server-name", strings.Repeat("x", 81)); other == long {
		t.Fatal("two long names that share a prefix must differ")
	}
}

func TestResultText(t *testing.T) {
	res := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "hello"},
		&sdk.ImageContent{MIMEType: "image/png", Data: []byte("12345")},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "body"}},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///b.bin", Blob: []byte{1, 2}}},
		&sdk.ResourceLink{URI: "file:///c", Name: "c"},
	}, StructuredContent: map[string]any{"n": 1}}
	got := ResultText(res)
	for _, want := range []string{"hello", "[image: image/png, 5 bytes]", "[resource file:///a.txt (text/plain)]\nbody",
		"[resource file:///b.bin: unknown type, 2 bytes of binary data]", "[resource link: file:///c (c)]", `[structured content]` + "\n" + `{"n":1}`} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}
	// Structured content already in a text part is not repeated.
	dup := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"n": 1}`}}, StructuredContent: map[string]any{"n": 1}}
	if got := ResultText(dup); strings.Contains(got, "structured") {
		t.Fatalf("duplicated structured content: %q", got)
	}
}

func TestTrustIsPerDefinition(t *testing.T) {
	home := t.TempDir()
	tr := OpenTrust(home)
	c := Config{Name: "s", Command: "npx", Args: []string{"srv"}}
	trusted := func(p string, c Config) bool {
		t.Helper()
		ok, err := tr.Trusted(p, c)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if trusted("/p", c) {
		t.Fatal("nothing approved yet")
	}
	if err := tr.Approve("/p", c); err != nil {
		t.Fatal(err)
	}
	if !trusted("/p", c) {
		t.Fatal("approved definition not trusted")
	}
	if trusted("/other", c) {
		t.Fatal("trust is per project")
	}
	c.Args = []string{"evil"}
	if trusted("/p", c) {
		t.Fatal("a changed command must ask again")
	}
	// A record that does not parse trusts nothing, says where it breaks,
	// and is not written over.
	bad := []byte("{\"projects\": {\"/p\": []}}\n")
	if err := os.WriteFile(filepath.Join(home, TrustFile), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := tr.Trusted("/p", c); ok || err == nil || !strings.Contains(err.Error(), TrustFile+":1:") {
		t.Errorf("corrupt: %v, %v", ok, err)
	}
	if err := tr.Approve("/q", c); err == nil {
		t.Error("trust recorded over a corrupt file")
	}
	if got, _ := os.ReadFile(filepath.Join(home, TrustFile)); string(got) != string(bad) {
		t.Errorf("the trust file changed: %s", got)
	}
}

// A server trusted after a session took its tools is announced to that
// session's next turn (its tools are not in the session), and the person
// is told it came up; one running before the snapshot is not news.
func TestServerTrustedMidSessionIsAnnounced(t *testing.T) {
	t.Parallel()
	c := selfServer("repo", "ok")
	c.NeedsTrust = true
	m, n := newManager(t, c, selfServer("early", "ok"))
	snapshot := names(m.Tools())
	if slices.Contains(snapshot, "mcp__repo__echo") || !slices.Contains(snapshot, "mcp__early__echo") {
		t.Fatalf("snapshot = %v", snapshot)
	}
	if ch := m.Changes(); ch != "" {
		t.Fatalf("a server up before the snapshot was announced: %q", ch)
	}
	m.Trust("repo")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	ch := m.Changes()
	if !strings.Contains(ch, "MCP server repo now offers") || !strings.Contains(ch, "mcp__repo__echo") || strings.Contains(ch, "early") {
		t.Fatalf("changes = %q", ch)
	}
	if !strings.Contains(n.all(), "MCP server repo is running (5 tools)") {
		t.Fatalf("notices:\n%s", n.all())
	}
}

// elicitServer asks for input during its tool calls: "ask" a form with
// a default for its required field, "ask_required" a form whose
// required field has none, "ask_odd" a form with a nested object (which
// no form shows), "open" an address to open, "open_file" a file address,
// and "needs_url" fails with the URL-required error.
func elicitServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "elicit", Version: "1"}, nil)
	ask := func(in *sdk.ElicitParams) func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			// The protocol this SDK pair speaks asks for input in the
			// result (multi round-trip requests) and gets the answer in the
			// retried call.
			res, ok := req.Params.InputResponses["in"].(*sdk.ElicitResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"in": in}}, nil, nil
			}
			if in.Mode == "url" && res.Action == "accept" {
				// The step is done at once: one notice for this request,
				// one for a request the client never saw.
				for _, id := range []string{"el-bogus", in.ElicitationID} {
					_ = req.Session.NotifyElicitationComplete(ctx, &sdk.ElicitationCompleteParams{ElicitationID: id})
				}
			}
			b, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + string(b)}}}, nil, nil
		}
	}
	form := func(schema map[string]any) *sdk.ElicitParams {
		return &sdk.ElicitParams{Message: "Confirm the deployment", RequestedSchema: schema}
	}
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "ask"}, ask(form(map[string]any{"type": "object",
		"properties": map[string]any{
			"env":     map[string]any{"type": "string", "description": "target", "default": "staging"},
			"replica": map[string]any{"type": "integer", "default": 2, "minimum": 1, "maximum": 5},
			"note":    map[string]any{"type": "string"},
			"region":  map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "eu", "title": "Europe"}, map[string]any{"const": "us", "title": "America"}}},
			"checks":  map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"lint", "test"}}},
		}, "required": []string{"env"}})))
	sdk.AddTool(s, &sdk.Tool{Name: "ask_required", Description: "ask"}, ask(form(map[string]any{"type": "object",
		"properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}})))
	sdk.AddTool(s, &sdk.Tool{Name: "open", Description: "open"}, ask(&sdk.ElicitParams{Mode: "url", Message: "Link your account",
		URL: "https://auth.example.com/link?id=7", ElicitationID: "el-7"}))
	sdk.AddTool(s, &sdk.Tool{Name: "open_file", Description: "open"}, ask(&sdk.ElicitParams{Mode: "url", Message: "Read this",
		URL: "file:///etc/passwd", ElicitationID: "el-8"}))
	sdk.AddTool(s, &sdk.Tool{Name: "needs_url", Description: "needs"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return nil, nil, sdk.URLElicitationRequiredError([]*sdk.ElicitParams{{Mode: "url", Message: "Authorize the calendar",
			URL: "https://auth.example.com/cal", ElicitationID: "el-9"}})
	})
	return s
}

// elicitAnswers plays the person: each request is recorded and answered
// with the next answer of the list.
type elicitAnswers struct {
	mu      sync.Mutex
	asked   []ElicitRequest
	answers []events.ElicitAnswer
}

func (a *elicitAnswers) elicit(_ context.Context, r ElicitRequest) (events.ElicitAnswer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r)
	if len(a.answers) == 0 {
		return events.ElicitAnswer{Action: events.ElicitCancel}, nil
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return ans, nil
}

func (a *elicitAnswers) set(answers ...events.ElicitAnswer) []ElicitRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	asked := a.asked
	a.asked, a.answers = nil, answers
	return asked
}

// A server's form reaches Options.Elicit with its fields (required
// first, choices with their titles); what the person accepts is sent,
// an answer the form refuses is asked again with the reason, decline and
// cancel are passed on. Without Options.Elicit the client declares no
// elicitation capability.
func TestElicitationForm(t *testing.T) {
	t.Parallel()
	n := &notices{}
	a := &elicitAnswers{}
	m := New([]Config{selfServer("e", "elicit")}, Options{Notify: n.add, Environ: os.Environ(), Elicit: a.elicit})
	t.Cleanup(m.Close)
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ask := toolByName(t, m, "mcp__e__ask")
	a.set(events.ElicitAnswer{Action: events.ElicitAccept, Content: map[string]any{"env": "prod", "replica": 9}},
		events.ElicitAnswer{Action: events.ElicitAccept, Content: map[string]any{"env": "prod", "replica": 3, "region": "eu", "checks": []any{"test"}}})
	if got := call(t, ask, `{}`).Content; got != `accept {"checks":["test"],"env":"prod","region":"eu","replica":3}` {
		t.Fatalf("accepted: %q", got)
	}
	asked := a.set(events.ElicitAnswer{Action: events.ElicitDecline})
	if len(asked) != 2 || asked[0].Server != "e" || asked[0].Message != "Confirm the deployment" || asked[0].Mode != events.ElicitForm {
		t.Fatalf("asked %+v", asked)
	}
	var names []string
	for _, f := range asked[0].Fields {
		names = append(names, f.Name)
	}
	region := asked[0].Fields[3]
	if strings.Join(names, ",") != "env,checks,note,region,replica" || !asked[0].Fields[0].Required || asked[0].Fields[0].Default != "staging" ||
		fmt.Sprint(region.Options) != "[{eu Europe} {us America}]" || fmt.Sprint(asked[0].Fields[1].Options) != "[{lint } {test }]" ||
		!asked[0].Fields[1].Multiple() {
		t.Fatalf("fields %+v", asked[0].Fields)
	}
	if asked[0].Error != "" || asked[1].Error != "replica: must be at most 5" {
		t.Fatalf("re-asked with %q then %q", asked[0].Error, asked[1].Error)
	}
	if got := call(t, ask, `{}`).Content; got != "decline null" {
		t.Fatalf("declined: %q", got)
	}
	a.set(events.ElicitAnswer{Action: events.ElicitCancel})
	if got := call(t, ask, `{}`).Content; got != "cancel null" {
		t.Fatalf("cancelled: %q", got)
	}
	// A required field without a default is simply asked for now.
	a.set(events.ElicitAnswer{Action: events.ElicitAccept, Content: map[string]any{"name": "Ann"}})
	if got := call(t, toolByName(t, m, "mcp__e__ask_required"), `{}`).Content; got != `accept {"name":"Ann"}` {
		t.Fatalf("required: %q", got)
	}
	// Without ElicitURL an address is declined unasked, with a notice.
	a.set()
	if got := call(t, toolByName(t, m, "mcp__e__open"), `{}`).Content; got != "decline null" {
		t.Fatalf("url without ElicitURL: %q", got)
	}
	if asked := a.set(); len(asked) != 0 || !strings.Contains(n.all(), "MCP server e asked you to open https://auth.example.com/link?id=7 (Link your account); no one here can open it") {
		t.Fatalf("asked %v; notices:\n%s", asked, n.all())
	}

	plain, _ := newManager(t, selfServer("e", "elicit"))
	res, err := toolByName(t, plain, "mcp__e__ask").Execute(context.Background(), nil, json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), "does not support elicitation") {
		t.Fatalf("without Elicit: %+v, %v", res, err)
	}
}

// With ElicitURL an address is put to the person, named and whole; only
// web addresses are. A call that fails with the URL-required error asks
// about its address and tells the model to call again once the step is
// done.
func TestElicitationURL(t *testing.T) {
	t.Parallel()
	n := &notices{}
	a := &elicitAnswers{}
	m := New([]Config{selfServer("e", "elicit")}, Options{Notify: n.add, Environ: os.Environ(), Elicit: a.elicit, ElicitURL: true})
	t.Cleanup(m.Close)
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.set(events.ElicitAnswer{Action: events.ElicitAccept, Content: map[string]any{"ignored": true}})
	if got := call(t, toolByName(t, m, "mcp__e__open"), `{}`).Content; got != "accept null" {
		t.Fatalf("url: %q", got)
	}
	asked := a.set()
	if len(asked) != 1 || asked[0].Mode != events.ElicitURL || asked[0].URL != "https://auth.example.com/link?id=7" || asked[0].Message != "Link your account" {
		t.Fatalf("asked %+v", asked)
	}
	done := "MCP server e says the step at https://auth.example.com/link?id=7 is done"
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(n.all(), done); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no notice of the completed step:\n%s", n.all())
		}
	}
	if strings.Count(n.all(), "says the step") != 1 {
		t.Fatalf("a completion for an unknown request was reported:\n%s", n.all())
	}
	if got := call(t, toolByName(t, m, "mcp__e__open_file"), `{}`).Content; got != "decline null" {
		t.Fatalf("file url: %q", got)
	}
	if asked := a.set(events.ElicitAnswer{Action: events.ElicitAccept}); len(asked) != 0 || !strings.Contains(n.all(), `the address "file:///etc/passwd" is not a web address`) {
		t.Fatalf("asked %v; notices:\n%s", asked, n.all())
	}
	env := &tools.Env{Session: "s-1"}
	res, err := toolByName(t, m, "mcp__e__needs_url").Execute(context.Background(), env, json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "The person agreed to open https://auth.example.com/cal (Authorize the calendar)") ||
		!strings.Contains(res.Content, "Call needs_url again once the person says the step is done") {
		t.Fatalf("url required: %+v, %v", res, err)
	}
	if asked := a.set(events.ElicitAnswer{Action: events.ElicitCancel}); len(asked) != 1 || asked[0].Session != "s-1" || asked[0].URL != "https://auth.example.com/cal" {
		t.Fatalf("asked %+v", asked)
	}
	res, err = toolByName(t, m, "mcp__e__needs_url").Execute(context.Background(), env, json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "https://auth.example.com/cal was not opened (cancelled: Authorize the calendar)") {
		t.Fatalf("url required, cancelled: %+v, %v", res, err)
	}
}
