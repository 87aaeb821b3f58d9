package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/nodetest"
	"github.com/reasonix/reasonix/providers/scripted"
)

// chromiumPath finds the system Chromium `.ci/run` installs, or skips.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("skipped: no Chromium (run .ci/run, which installs Debian's chromium)")
	return ""
}

// TestE2EServeInABrowser starts `reasonix serve` against the scripted
// server and drives its page in headless Chromium: streamed Markdown with
// highlighted code, a bash call approved in the dialog, /plan completed
// from the menu and approved, the ask tool's question answered by a
// choice, and a reload in the middle of a streamed
// answer that still shows the whole transcript once. Screenshots go to
// $REASONIX_ARTIFACTS (else a temporary folder) for people to look at.
func TestE2EServeInABrowser(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	mods := nodetest.Module(t, "playwright-core")
	slow := "one two three four five six seven eight nine ten END"
	e := newE2E(t,
		scripted.Turn{Text: "PINEAPPLE noted."},
		scripted.Turn{Text: "Hello **world**.\n\n```go\nfunc main() {}\n```\n", ChunkSize: 5},
		scripted.Turn{Text: "Making it.", ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "touch marker.txt", "description": "create the marker"})}},
		scripted.Turn{Text: "Made it."},
		scripted.Turn{ToolCalls: []scripted.Call{call("submit_plan", map[string]any{
			"goal":  "add a farewell constant",
			"steps": []map[string]any{{"id": "s1", "title": "Add farewell to greet.go", "files": []string{"greet.go"}}},
		})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.go", "old_string": "hello", "new_string": "hello, farewell"})}},
		scripted.Turn{Text: "Executed the plan."},
		scripted.Turn{ToolCalls: []scripted.Call{call("ask", map[string]any{"question": "Which colour should the button be?", "choices": []string{"blue", "green"}})}},
		scripted.Turn{Match: "The user answered: green", Text: "Made it GREEN."},
		scripted.Turn{Text: slow, ChunkSize: 4, ChunkDelayMS: 250},
	)
	e.write("greet.go", "package main\n\nconst greeting = \"hello\"\n")
	// A conversation from the terminal, to open in the page.
	if r := e.run("", "run", "remember the word PINEAPPLE"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}

	serve, url, stderr := startServe(t, e)
	shots := artifactDir(t, "serve")
	out := runBrowser(t, "browser.mjs", url, chromium, mods, shots)
	var rep struct {
		Steps        []string
		Error        string
		URLAfter     string `json:"urlAfterLogin"`
		AnswerHTML   string
		ApprovalText string
		ToolLine     string
		Menu         string
		PlanText     string
		QuestionText string
		AfterReload  string
		Resumed      string
		PageErrors   []string
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if rep.Error != "" {
		t.Fatalf("in the browser: %s (done: %v; screenshots in %s)\nserve stderr: %s", rep.Error, rep.Steps, shots, stderr.String())
	}
	if strings.Contains(rep.URLAfter, "token=") {
		t.Errorf("the token stayed in the address bar: %s", rep.URLAfter)
	}
	if !strings.Contains(rep.AnswerHTML, "<strong>world</strong>") || !strings.Contains(rep.AnswerHTML, `class="tok-kw">func<`) {
		t.Errorf("answer not rendered as Markdown with highlighting: %s", rep.AnswerHTML)
	}
	if !strings.Contains(rep.ApprovalText, "touch marker.txt") || !strings.Contains(rep.ApprovalText, "Making it.") || !strings.Contains(rep.ApprovalText, "Allow once") {
		t.Errorf("approval dialog: %q", rep.ApprovalText)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "marker.txt")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	if !strings.Contains(rep.Menu, "/plan") || !strings.Contains(rep.PlanText, "Add farewell to greet.go") {
		t.Errorf("menu %q, plan dialog %q", rep.Menu, rep.PlanText)
	}
	if got := e.read("greet.go"); !strings.Contains(got, "hello, farewell") {
		t.Errorf("the approved plan did not run: %q", got)
	}
	if !strings.Contains(rep.QuestionText, "Which colour should the button be?") || !strings.Contains(rep.QuestionText, "green") {
		t.Errorf("question dialog: %q", rep.QuestionText)
	}
	if n := strings.Count(rep.AfterReload, slow); n != 1 {
		t.Errorf("after the reload the streamed answer appears %d times, want once:\n%s", n, rep.AfterReload)
	}
	for _, want := range []string{"say hello", "make the marker file", "Made it."} {
		if !strings.Contains(rep.AfterReload, want) {
			t.Errorf("after the reload the transcript lacks %q", want)
		}
	}
	if !strings.Contains(rep.Resumed, "remember the word PINEAPPLE") {
		t.Errorf("the terminal's session did not open in the page with its history:\n%s", rep.Resumed)
	}
	if len(rep.PageErrors) > 0 {
		t.Errorf("page errors: %v", rep.PageErrors)
	}
	// Ctrl-C stops the server cleanly.
	serve.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- serve.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("serve did not stop after SIGINT")
	}
}

// startServe starts `reasonix serve --no-open` in e's repository and
// returns it with the URL it printed and its standard error.
func startServe(t *testing.T, e *e2e, args ...string) (*exec.Cmd, string, *lockedBuffer) {
	t.Helper()
	serve := exec.Command(binPath, append([]string{"serve", "--no-open"}, args...)...)
	serve.Dir = e.repo
	serve.Env = e.env
	stdout, _ := serve.StdoutPipe()
	stderr := &lockedBuffer{}
	serve.Stderr = stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v\nstderr: %s", err, stderr.String())
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{32}`).FindString(line)
	if url == "" {
		t.Fatalf("serve printed %q, want a loopback URL with a token", line)
	}
	return serve, url, stderr
}

// artifactDir is where a browser test's screenshots go: a folder name
// of $REASONIX_ARTIFACTS, else a temporary folder.
func artifactDir(t *testing.T, name string) string {
	t.Helper()
	shots := os.Getenv("REASONIX_ARTIFACTS")
	if shots == "" {
		return t.TempDir()
	}
	shots = filepath.Join(shots, name)
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return shots
}

// runBrowser runs testdata/web/SCRIPT (with the harness.mjs it imports)
// with Node against the page at url and returns what it printed (its JSON
// report).
func runBrowser(t *testing.T, script, url, chromium, mods, shots string, env ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{script, "harness.mjs"} {
		src, err := os.ReadFile(filepath.Join("testdata", "web", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(mods, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, script)
	cmd := exec.Command("node", path)
	cmd.Env = append(append(os.Environ(), "SERVE_URL="+url, "CHROMIUM="+chromium, "SHOTS="+shots), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("browser script %s: %v\n%s\n%s", script, err, out.String(), errb.String())
	}
	return out.Bytes()
}

// TestE2EServeAsksMCPTrustInThePage: a project's .mcp.json server nobody
// trusted yet is asked about at start-up, before any page connected or
// any session opened. The page shows the question from the log, "Allow
// once" starts the server (the page says it is running), and a session
// opened then can call its tool.
func TestE2EServeAsksMCPTrustInThePage(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	mods := nodetest.Module(t, "playwright-core")
	plugin := pluginExample(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__repo-tools__wordcount", map[string]any{"text": "one two three"})}},
		scripted.Turn{Text: "Counted them."},
	)
	e.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {"repo-tools": {"command": %q, "args": []}}}`, plugin))
	_, url, stderr := startServe(t, e)
	// The question is asked before the page connects: the page must find
	// it in the log.
	time.Sleep(500 * time.Millisecond)
	out := runBrowser(t, "trust.mjs", url, chromium, mods, artifactDir(t, "serve-trust"))
	var rep struct {
		Steps      []string
		Error      string
		TrustText  string
		Notices    string
		Transcript string
		PageErrors []string
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if rep.Error != "" {
		t.Fatalf("in the browser: %s (done: %v)\nserve stderr: %s", rep.Error, rep.Steps, stderr.String())
	}
	if !strings.Contains(rep.TrustText, "mcp server repo-tools") || !strings.Contains(rep.TrustText, ".mcp.json") {
		t.Errorf("trust dialog: %q", rep.TrustText)
	}
	if !strings.Contains(rep.Notices, "MCP server repo-tools is running") {
		t.Errorf("notices: %q", rep.Notices)
	}
	reqs := e.srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests reached the model server\ntranscript: %s", len(reqs), rep.Transcript)
	}
	if names := toolNames(t, reqs[0]); !hasName(names, "mcp__repo-tools__wordcount") {
		t.Errorf("the trusted server's tools were not offered: %v", names)
	}
	if msgs := string(messagesOf(t, reqs[1])); !strings.Contains(msgs, `\"words\":3`) {
		t.Errorf("the tool did not run: %s", msgs)
	}
	if len(rep.PageErrors) > 0 {
		t.Errorf("page errors: %v", rep.PageErrors)
	}
}

// TestE2EServeMCPTrustFlag: `reasonix serve --mcp-trust` starts the
// project's .mcp.json servers without asking (no page needs to answer),
// records no trust, and a session's first request offers their tools.
func TestE2EServeMCPTrustFlag(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	e := newE2E(t, scripted.Turn{Text: "Trusted by flag."})
	seenByServer := writeTeedPlugin(t, e)
	_, url, stderr := startServe(t, e, "--mcp-trust")
	base, token, _ := strings.Cut(url, "/?token=")
	waitUntil(t, 15*time.Second, func() bool {
		b, _ := os.ReadFile(seenByServer)
		return strings.Contains(string(b), "example://greeting")
	}, func() string { return "the server did not start without a question\nserve stderr: " + stderr.String() })
	api := func(path, body string) []byte {
		t.Helper()
		code, b := servePost(t, base, token, path, body)
		if code/100 != 2 {
			t.Fatalf("POST %s: %d %s %s", path, code, http.StatusText(code), b)
		}
		return []byte(b)
	}
	var opened struct{ ID string }
	if err := json.Unmarshal(api("/api/sessions", "{}"), &opened); err != nil || opened.ID == "" {
		t.Fatalf("open a session: %v %+v", err, opened)
	}
	api("/api/sessions/"+opened.ID+"/prompt", `{"text":"say hi"}`)
	waitUntil(t, 15*time.Second, func() bool { return len(e.srv.Requests()) == 1 },
		func() string { return "no request reached the model\nserve stderr: " + stderr.String() })
	if names := toolNames(t, e.srv.Requests()[0]); !hasName(names, "mcp__repo-tools__echo") {
		t.Errorf("the request does not offer the server's tools: %v", names)
	}
	if _, err := os.Stat(filepath.Join(e.home, "mcp-trust.json")); err == nil {
		t.Error("--mcp-trust recorded trust")
	}
}

// serveLogin is what opening a server's link gave: the secret its cookie
// carries and the path the page and the API live under.
type serveLogin struct{ secret, path string }

// serveLogins are the logins of the servers under test, by base URL: a
// link's token works once.
var serveLogins sync.Map

// serveSecret opens the link of the `reasonix serve` at base once, as a
// browser would, and returns what it gave.
func serveSecret(t *testing.T, base, token string) serveLogin {
	t.Helper()
	if v, ok := serveLogins.Load(base); ok {
		return v.(serveLogin)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(base + "/?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == "reasonix_token" {
			l := serveLogin{secret: ck.Value, path: strings.TrimSuffix(resp.Header.Get("Location"), "/")}
			serveLogins.Store(base, l)
			return l
		}
	}
	t.Fatalf("opening %s/?token=…: %s, no cookie", base, resp.Status)
	return serveLogin{}
}

// servePost posts a JSON body to path (/api/…) of the `reasonix serve` at
// base, with the secret its link's token was exchanged for, and returns
// the answer's status and body.
func servePost(t *testing.T, base, token, path, body string) (int, string) {
	t.Helper()
	l := serveSecret(t, base, token)
	req, _ := http.NewRequest(http.MethodPost, base+l.path+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+l.secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitUntil polls ok until it holds, or fails with why() after d.
func waitUntil(t *testing.T, d time.Duration, ok func() bool, why func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal(why())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
