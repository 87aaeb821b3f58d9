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
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers/scripted"
)

// binPath is the reasonix binary built once for every end-to-end test.
var binPath string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == permission.SandboxHelperArg {
		// The test binary doubles as the sandbox's helper when a test
		// starts a hiding sandbox in this process (bench_test.go).
		err := permission.RunSandboxHelper(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(126)
	}
	if os.Getenv(e2eMCPServerEnv) != "" {
		// The test binary doubles as an MCP server (mcp_live_e2e_test.go).
		serveE2EMCP()
		return
	}
	if os.Getenv(e2eBrowserEnv) != "" {
		// ... and as the person's browser ($BROWSER), which agrees to
		// every sign-in (mcp_tui_e2e_test.go).
		os.Exit(agreeAsBrowser(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "reasonix-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "reasonix")
	if runtime.GOOS == "windows" {
		binPath += ".exe"
	}
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build reasonix: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// e2e is one temp repository with a home directory and a scripted server.
type e2e struct {
	t    *testing.T
	repo string
	home string
	srv  *llmtest.Server
	env  []string
}

func newE2E(t *testing.T, turns ...scripted.Turn) *e2e {
	t.Helper()
	root := t.TempDir()
	e := &e2e{t: t, repo: filepath.Join(root, "repo"), home: filepath.Join(root, "home")}
	for _, d := range []string{e.repo, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if len(turns) > 0 {
		e.srv = llmtest.Start(t, &scripted.Script{Turns: turns})
	}
	e.env = []string{
		"HOME=" + root, "REASONIX_HOME=" + e.home, "PATH=" + os.Getenv("PATH"),
		"REASONIX_MODEL=test-model", "REASONIX_API_KEY=test-key", "TMPDIR=" + os.TempDir(),
	}
	if e.srv != nil {
		e.env = append(e.env, "REASONIX_BASE_URL="+e.srv.URL())
	}
	return e
}

// withScript starts the scripted server for e (after its files exist,
// or in place of the one a finished run used up).
func withScript(t *testing.T, e *e2e, turns ...scripted.Turn) *e2e {
	e.srv = llmtest.Start(t, &scripted.Script{Turns: turns})
	e.env = append(e.env, "REASONIX_BASE_URL="+e.srv.URL())
	return e
}

func (e *e2e) write(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.repo, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// needSandbox skips t where commands cannot be confined (no Landlock).
func needSandbox(t *testing.T) {
	t.Helper()
	if enforced, _, detail := permission.SandboxStatus(permission.SandboxOptions{}); !enforced {
		t.Skipf("Landlock not enforced here: %s", detail)
	}
}

// needPython skips t where python3, in which its hostile commands are
// written, is missing (.ci/run installs it).
func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found: the test's hostile commands are written in it (.ci/run installs it)")
	}
}

// writeUserConfig writes the person's own config.toml, in the Reasonix
// home: where providers, the sandbox's loosening and the posture are set
// without trusting the project (a project's reasonix.toml holds them until
// `reasonix trust`).
func (e *e2e) writeUserConfig(content string) {
	e.t.Helper()
	if err := os.MkdirAll(e.home, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *e2e) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.repo, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

type runResult struct {
	stdout, stderr string
	code           int
}

func (e *e2e) run(stdin string, args ...string) runResult {
	e.t.Helper()
	return e.runIn("", stdin, args...)
}

// runIn is e.run from a directory of the repository.
func (e *e2e) runIn(rel, stdin string, args ...string) runResult {
	e.t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = filepath.Join(e.repo, rel)
	cmd.Env = e.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return runResult{out.String(), errb.String(), code}
}

func call(name string, args any) scripted.Call {
	b, _ := json.Marshal(args)
	return scripted.Call{Name: name, Arguments: string(b)}
}

// bashCall is a scripted call of the bash tool.
func bashCall(cmd string) scripted.Call { return call("bash", map[string]any{"command": cmd}) }

// messagesOf returns the raw bytes of the messages array of a request body.
func messagesOf(t *testing.T, body []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request is not JSON: %v", err)
	}
	return m["messages"]
}

// assertPrefixStable checks that every request's messages begin, byte for
// byte, with the previous request's messages, and that the tool schemas
// never change.
func assertPrefixStable(t *testing.T, reqs [][]byte) {
	t.Helper()
	for i := 1; i < len(reqs); i++ {
		prev, cur := messagesOf(t, reqs[i-1]), messagesOf(t, reqs[i])
		prev = bytes.TrimSuffix(prev, []byte("]"))
		if !bytes.HasPrefix(cur, prev) {
			t.Errorf("request %d does not extend request %d byte for byte:\nprev: %.300s\ncur:  %.300s", i, i-1, prev, cur)
		}
		var a, b map[string]json.RawMessage
		json.Unmarshal(reqs[i-1], &a)
		json.Unmarshal(reqs[i], &b)
		if !bytes.Equal(a["tools"], b["tools"]) {
			t.Errorf("tool schemas changed between request %d and %d", i-1, i)
		}
	}
}

func TestE2EReadEditShellAnswer(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{Text: "Let me look.", ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "greet.go"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.go", "old_string": `"hello"`, "new_string": `"hello, world"`})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "grep -c world greet.go && echo ran-ok"})}},
		scripted.Turn{Text: "Changed the greeting; the check printed ran-ok.", ChunkSize: 3},
	)
	e.write("greet.go", "package main\n\nconst greeting = \"hello\"\n")
	r := e.run("", "run", "make the greeting say hello, world")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if got := e.read("greet.go"); !strings.Contains(got, `"hello, world"`) {
		t.Errorf("file not edited: %q", got)
	}
	if !strings.Contains(r.stdout, "Changed the greeting; the check printed ran-ok.") {
		t.Errorf("answer not printed: %q", r.stdout)
	}
	for _, want := range []string{"read_file greet.go", "edit_file greet.go", "bash grep -c world"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("missing tool line %q in stderr:\n%s", want, r.stderr)
		}
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d, want 4", len(reqs))
	}
	if !bytes.Contains(reqs[3], []byte("ran-ok")) {
		t.Errorf("bash output not sent back to the model: %s", messagesOf(t, reqs[3]))
	}
	assertPrefixStable(t, reqs)
	// The transcript was saved.
	matches, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
	if len(matches) != 1 {
		t.Errorf("transcripts = %v", matches)
	}
}

func TestE2EInterleavedParallelCallsAndReasoningRoundTrip(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{
			Reasoning: "I should read both files at once.", ChunkSize: 1, Interleave: true,
			ToolCalls: []scripted.Call{
				call("read_file", map[string]any{"path": "a.txt"}),
				call("read_file", map[string]any{"path": "b.txt"}),
				call("grep", map[string]any{"pattern": "beta", "output_mode": "content"}),
			},
			Wire: &scripted.Wire{EmptyToolCalls: true, UsageWithFinish: true},
		},
		scripted.Turn{Text: "a has alpha, b has beta."},
	)
	e.write("a.txt", "alpha\n")
	e.write("b.txt", "beta\n")
	r := e.run("", "run", "--output-format", "json", "what is in a and b?")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var out struct {
		Answer    string `json:"answer"`
		ToolCalls []struct {
			Name    string `json:"name"`
			IsError bool   `json:"is_error"`
		} `json:"tool_calls"`
		Usage map[string]int `json:"usage"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("json output: %v\n%s", err, r.stdout)
	}
	if out.Answer != "a has alpha, b has beta." || len(out.ToolCalls) != 3 {
		t.Fatalf("output = %+v", out)
	}
	for _, c := range out.ToolCalls {
		if c.IsError {
			t.Errorf("call %s failed", c.Name)
		}
	}
	reqs := e.srv.Requests()
	second := string(messagesOf(t, reqs[1]))
	for _, want := range []string{"alpha", "beta", `"reasoning_content":"I should read both files at once."`} {
		if !strings.Contains(second, want) {
			t.Errorf("second request lacks %s:\n%s", want, second)
		}
	}
	assertPrefixStable(t, reqs)
}

func TestE2ERetryAfter429(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{Status: 429, RetryAfter: "1", ErrorBody: "slow down"},
		scripted.Turn{Text: "fine now"},
	)
	start := time.Now()
	r := e.run("", "run", "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "fine now") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("Retry-After: 1 not honoured, took %v", d)
	}
	if n := len(e.srv.Requests()); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
}

func TestE2EStreamCutKeepsPartial(t *testing.T) {
	e := newE2E(t, scripted.Turn{Text: "The first half of a long answer that never ends", ChunkSize: 8, CutAfter: 3})
	r := e.run("", "run", "explain")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "The first half of a long") {
		t.Errorf("partial text not shown: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "partial") || !strings.Contains(strings.ToLower(r.stderr), "stream") {
		t.Errorf("no clear message: %s", r.stderr)
	}
}

func TestE2EMalformedArgumentsFedBack(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{{Name: "read_file", Arguments: `{"path": x.txt}`}}},
		scripted.Turn{ToolCalls: []scripted.Call{{Name: "read_file", Arguments: `{"path": 42}`}}},
		scripted.Turn{Text: "gave up"},
	)
	r := e.run("", "run", "--output-format", "stream-json", "read x")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if !strings.Contains(string(messagesOf(t, reqs[1])), "not valid JSON") {
		t.Errorf("malformed JSON not fed back: %s", messagesOf(t, reqs[1]))
	}
	if !strings.Contains(string(messagesOf(t, reqs[2])), "invalid arguments") {
		t.Errorf("wrong-typed argument not fed back: %s", messagesOf(t, reqs[2]))
	}
	// stream-json: one JSON event per line, ending with done.
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var last map[string]any
	for _, l := range lines {
		if err := json.Unmarshal([]byte(l), &last); err != nil {
			t.Fatalf("not one event per line: %q", l)
		}
	}
	if last["type"] != "done" {
		t.Errorf("last event = %v", last)
	}
}

func TestE2ENoProviderAndBadConfig(t *testing.T) {
	e := newE2E(t)
	r := e.run("", "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "REASONIX_BASE_URL") || !strings.Contains(r.stderr, "reasonix setup --provider") {
		t.Errorf("no-provider: exit %d stderr %q", r.code, r.stderr)
	}
	e.write("reasonix.toml", "default_model = \"x\"\n[agent]\nmax_steps = \"many\"\n")
	r = e.run("", "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "reasonix.toml:3") || !strings.Contains(r.stderr, "max_steps") {
		t.Errorf("bad config: exit %d stderr %q", r.code, r.stderr)
	}
	r = e.run("", "run", "--output-format", "yaml", "hi")
	if r.code != 2 {
		t.Errorf("bad flag value: exit %d", r.code)
	}
}

func TestE2EVersionAndModels(t *testing.T) {
	e := newE2E(t, scripted.Turn{Text: "unused"})
	r := e.run("", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "reasonix ") {
		t.Errorf("version: %d %q", r.code, r.stdout)
	}
	r = e.run("", "models")
	if r.code != 0 || !strings.Contains(r.stdout, "test-model") {
		t.Errorf("models: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestE2ESubcommandHelp: `reasonix run --help` (and -h on any command)
// prints that command's flags and exits 0, as --help does everywhere
// else; it is not a usage error.
func TestE2ESubcommandHelp(t *testing.T) {
	e := newE2E(t)
	for _, args := range [][]string{{"run", "--help"}, {"plan", "-h"}, {"sessions", "--help"}, {"doctor", "-h"}, {"setup", "--help"}} {
		r := e.run("", args...)
		if r.code != 0 || !strings.Contains(r.stderr, "Usage of "+args[0]) || strings.Contains(r.stderr, "help requested") {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if r := e.run("", "run", "--no-such-flag", "x"); r.code != 2 {
		t.Errorf("an unknown flag: exit %d, want 2", r.code)
	}
}

// TestE2EClaudeStyleInvocations: `reasonix -p PROMPT` is Claude Code's
// print mode, a headless run, and so is `reasonix "a task" -p`;
// `reasonix "a task"` is the interactive mode, which without a terminal
// says how to run it headless. A single ASCII word is a command: a typo
// gets the command it is near, words typed unquoted are told to quote the
// prompt, and none of them reaches the model.
func TestE2EClaudeStyleInvocations(t *testing.T) {
	e := newE2E(t, scripted.Turn{Text: "printed answer"}, scripted.Turn{Text: "second answer"})
	if r := e.run("", "-p", "say something", "--output-format", "json"); r.code != 0 || !strings.Contains(r.stdout, `"answer": "printed answer"`) {
		t.Errorf("-p: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "say more", "-p"); r.code != 0 || !strings.Contains(r.stdout, "second answer") {
		t.Errorf("PROMPT -p: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if msgs := wireMessages(t, e.srv.Requests()[1]); msgs[len(msgs)-1].Content != "say more" {
		t.Errorf("PROMPT -p sent %+v", msgs)
	}
	r := e.run("", "explain this project")
	if r.code != 2 || !strings.Contains(r.stderr, "needs a terminal") || !strings.Contains(r.stderr, `reasonix -p 'explain this project'`) ||
		strings.Contains(r.stderr, "Usage:") {
		t.Errorf("a prompt without a terminal: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.run("", "--yolo", "explain it", "-c"); r.code != 2 || !strings.Contains(r.stderr, `reasonix -p --yolo 'explain it' --continue`) {
		t.Errorf("flags and a prompt without a terminal: exit %d\n%s", r.code, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"seesions"}, `unknown command "seesions"; did you mean "sessions"?`},
		{[]string{"sesions", "--json"}, `unknown command "sesions"; did you mean "sessions"?`},
		{[]string{"mpc", "list"}, `unknown command "mpc"; did you mean "mcp"?`},
		{[]string{"fix"}, "reasonix chat fix"},
		{[]string{"fix", "the", "bug", "--yolo"}, `a prompt goes in quotes, as one argument: reasonix 'fix the bug' --yolo`},
	} {
		r := e.run("", c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "needs a terminal") {
			t.Errorf("%q: exit %d, want 2 and %q:\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
	if n := len(e.srv.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
}

func TestE2EPromptFromStdinAndMaxSteps(t *testing.T) {
	loop := scripted.Turn{ToolCalls: []scripted.Call{call("ls", map[string]any{})}}
	e := newE2E(t, loop, loop, loop, loop)
	r := e.run("list the files please\n", "run", "--max-steps", "2", "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Errorf("max-steps 2 made %d requests", len(reqs))
	}
	if !strings.Contains(string(reqs[0]), "list the files please") {
		t.Errorf("stdin prompt not sent")
	}
	if !strings.Contains(r.stderr, "step limit") {
		t.Errorf("step limit not reported: %s", r.stderr)
	}
}

func TestE2EInterruptExits130(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGINT delivery is unix-only")
	}
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "sleep 30"})}},
		scripted.Turn{Text: "never"},
	)
	cmd := exec.Command(binPath, "run", "--yolo", "wait")
	cmd.Dir, cmd.Env = e.repo, e.env
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the bash call is running, then interrupt.
	deadline := time.Now().Add(10 * time.Second)
	for len(e.srv.Requests()) < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130; stderr %s", err, errb.String())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("interrupt took %v", d)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("requests after interrupt = %d", n)
	}
}

func TestE2EHeadlessRefusesDangerAndEscapes(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("bash", map[string]any{"command": "rm -rf src"}),
			call("read_file", map[string]any{"path": "../secret"}),
		}},
		scripted.Turn{Text: "I could not do either."},
	)
	e.write("src/main.go", "package main\n")
	if err := os.WriteFile(filepath.Join(filepath.Dir(e.repo), "secret"), []byte("TOP-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"", "--yolo"} {
		args := []string{"run", "clean up"}
		if mode != "" {
			args = append(args, mode)
		}
		r := e.run("", args...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if got := e.read("src/main.go"); got != "package main\n" {
			t.Fatalf("src was touched: %q", got)
		}
		reqs := e.srv.Requests()
		next := string(messagesOf(t, reqs[len(reqs)-1]))
		if !strings.Contains(next, "human approval") {
			t.Errorf("%s: rm refusal not visible to the model: %s", mode, next)
		}
		if !strings.Contains(next, "outside the workspace") || strings.Contains(next, "TOP-SECRET") {
			t.Errorf("%s: escape not refused: %s", mode, next)
		}
		e.srv = llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
			{ToolCalls: []scripted.Call{
				call("bash", map[string]any{"command": "rm -rf src"}),
				call("read_file", map[string]any{"path": "../secret"}),
			}},
			{Text: "I could not do either."},
		}})
		e.env = append(e.env, "REASONIX_BASE_URL="+e.srv.URL())
	}
	// Every decision was logged under the Reasonix home.
	log, err := os.ReadFile(filepath.Join(e.home, "permissions.log"))
	if err != nil || !strings.Contains(string(log), "rm -rf src") {
		t.Errorf("decision log: %v %q", err, log)
	}
}

func TestE2ESetupConfigDoctor(t *testing.T) {
	e := newE2E(t)
	var r runResult
	e.env = withoutEnv(e.env, "REASONIX_MODEL")
	e.write("reasonix.toml", `[[providers]]
name = "corp"
base_url = "http://127.0.0.1:9/v1"
api_key = "sk-very-secret"
model = "m1"
[permissions]
allow = ["Bash(go test:*)"]
`)
	if r := e.run("", "trust"); r.code != 0 {
		t.Fatalf("trust: exit %d %s", r.code, r.stderr)
	}
	r = e.run("", "config")
	if r.code != 0 {
		t.Fatalf("config: %d %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "sk-very-secret") || !strings.Contains(r.stdout, "****") {
		t.Errorf("secret not redacted:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "reasonix.toml") || !strings.Contains(r.stdout, "# from default") {
		t.Errorf("sources not shown:\n%s", r.stdout)
	}
	r = e.run("", "doctor")
	if r.code != 0 || !strings.Contains(r.stdout, "corp") || !strings.Contains(r.stdout, "bash:") {
		t.Errorf("doctor: %d\n%s", r.code, r.stdout)
	}
}

func TestE2EMissingAPIKeyNamesTheVariable(t *testing.T) {
	e := newE2E(t)
	e.env = withoutEnv(e.env, "REASONIX_MODEL", "REASONIX_API_KEY")
	e.write("reasonix.toml", "[[providers]]\nname = \"deepseek\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"RX_TEST_DEEPSEEK_KEY\"\nmodel = \"deepseek-chat\"\n")
	// A project's providers apply once the person trusts them.
	if r := e.run("", "trust"); r.code != 0 || !strings.Contains(r.stdout, "providers") {
		t.Fatalf("trust: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	r := e.run("", "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "RX_TEST_DEEPSEEK_KEY") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}

func TestE2ESymlinkedWorkspaceKeepsRelativePaths(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("grep", map[string]any{"pattern": "needle", "output_mode": "content"}),
			call("grep", map[string]any{"pattern": "needle", "output_mode": "content", "path": "src"}),
			call("read_file", map[string]any{"path": "src/a.go"}),
		}},
		scripted.Turn{Text: "found"},
	)
	e.write("src/a.go", "// needle here\n")
	e.write("build/gen.go", "// needle generated\n")
	e.write(".gitignore", "build/\n")
	link := filepath.Join(filepath.Dir(e.repo), "link")
	if err := os.Symlink(e.repo, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	e.repo = link
	e.env = append(e.env, "PWD="+link) // as a shell sets it after cd into the link
	r := e.run("", "run", "--output-format", "json", "find the needle")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	got := string(messagesOf(t, reqs[1]))
	if strings.Count(got, "src/a.go:1:") != 2 {
		t.Errorf("grep did not report workspace-relative paths: %s", got)
	}
	if strings.Contains(r.stdout, filepath.Dir(e.repo)) {
		t.Errorf("tool summaries show absolute paths: %s", r.stdout)
	}
	if strings.Contains(got, "gen.go") {
		t.Errorf(".gitignore ignored behind a symlinked workspace: %s", got)
	}
}

func TestE2EHeadlessCannotRewriteItsOwnConfig(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("read_file", map[string]any{"path": "reasonix.toml"}),
		}},
		scripted.Turn{ToolCalls: []scripted.Call{
			call("write_file", map[string]any{"path": "reasonix.toml", "content": "[permissions]\nmode = \"yolo\"\n"}),
			call("bash", map[string]any{"command": "echo 'deny = []' >> reasonix.toml"}),
			call("write_file", map[string]any{"path": ".reasonix/agents/free.md", "content": "---\npermissionMode: bypassPermissions\n---\nx\n"}),
		}},
		scripted.Turn{Text: "could not"},
	)
	orig := "[permissions]\ndeny = [\"Bash(curl:*)\"]\n"
	e.write("reasonix.toml", orig)
	r := e.run("", "run", "--yolo", "loosen your permissions")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := e.read("reasonix.toml"); got != orig {
		t.Errorf("reasonix.toml rewritten: %q", got)
	}
	if _, err := os.Stat(filepath.Join(e.repo, ".reasonix", "agents", "free.md")); err == nil {
		t.Errorf("agent file planted")
	}
	reqs := e.srv.Requests()
	if last := string(messagesOf(t, reqs[len(reqs)-1])); strings.Count(last, "human approval") < 3 {
		t.Errorf("refusals not all reported: %s", last)
	}
}

// TestE2EClaudeShortFlagsHeadless: `reasonix -c -p PROMPT` and `reasonix
// -r ID -p PROMPT` add a headless turn to a conversation, as Claude Code's
// do; the help lists both forms.
func TestE2EClaudeShortFlagsHeadless(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "one"}, scripted.Turn{Text: "two"}, scripted.Turn{Text: "three"},
		scripted.Turn{Text: "four"}, scripted.Turn{Text: "five"})
	if r := e.run("", "run", "FIRST PROMPT"); r.code != 0 {
		t.Fatalf("first: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "-c", "-p", "SECOND PROMPT"); r.code != 0 || !strings.Contains(r.stdout, "two") {
		t.Fatalf("-c -p: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if msgs := wireMessages(t, e.srv.Requests()[1]); len(msgs) != 4 || msgs[1].Content != "FIRST PROMPT" {
		t.Errorf("-c -p did not continue: %+v", msgs)
	}
	files, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	if r := e.run("", "-p", "THIRD PROMPT", "-r", id[:len(id)-4]); r.code != 0 || !strings.Contains(r.stdout, "three") {
		t.Fatalf("-p -r ID: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if msgs := wireMessages(t, e.srv.Requests()[2]); len(msgs) != 6 || msgs[3].Content != "SECOND PROMPT" {
		t.Errorf("-r ID -p did not resume: %+v", msgs)
	}
	// Claude Code's order, -r ID -p PROMPT, and the prompt before -p.
	if r := e.run("", "-r", id, "-p", "FOURTH PROMPT"); r.code != 0 || !strings.Contains(r.stdout, "four") {
		t.Fatalf("-r ID -p PROMPT: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "-r", id, "FIFTH PROMPT", "-p"); r.code != 0 || !strings.Contains(r.stdout, "five") {
		t.Fatalf("-r ID PROMPT -p: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if msgs := wireMessages(t, e.srv.Requests()[4]); len(msgs) != 10 || msgs[7].Content != "FOURTH PROMPT" || msgs[9].Content != "FIFTH PROMPT" {
		t.Errorf("-r ID -p did not resume: %+v", msgs)
	}
	// Without -p it is the interactive mode, which needs a terminal
	// (TestTUIResumeWithAPrompt runs it in one).
	if r := e.run("", "-r", id, "SIXTH PROMPT"); r.code != 2 || !strings.Contains(r.stderr, "needs a terminal") {
		t.Errorf("-r ID PROMPT without a terminal: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("", "-p", "x", "-r"); r.code != 2 || !strings.Contains(r.stderr, "--resume needs a session id") {
		t.Errorf("-p -r without an id: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("", "--help"); !strings.Contains(r.stdout, "-c, --continue") || !strings.Contains(r.stdout, "-r, --resume [ID]") {
		t.Errorf("help does not list -c and -r:\n%s", r.stdout)
	}
}
