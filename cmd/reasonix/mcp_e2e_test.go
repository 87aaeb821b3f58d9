package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/credentials"
	"github.com/reasonix/reasonix/internal/oauthtest"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools/mcp"
)

var (
	pluginOnce sync.Once
	pluginBin  string
	pluginErr  error
)

// pluginExample builds cmd/reasonix-plugin-example once for the tests that
// drive it through the real binary.
func pluginExample(t *testing.T) string {
	t.Helper()
	pluginOnce.Do(func() {
		dir := filepath.Dir(binPath)
		pluginBin = filepath.Join(dir, "reasonix-plugin-example")
		if runtime.GOOS == "windows" {
			pluginBin += ".exe"
		}
		build := exec.Command("go", "build", "-o", pluginBin, "../reasonix-plugin-example")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			pluginErr = fmt.Errorf("build plugin example: %v\n%s", err, out)
		}
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	return pluginBin
}

// writeTeedPlugin makes the example plugin the project's .mcp.json
// server "repo-tools", its answers copied to a file (whose name it
// returns) through a shell pipe: the server has started, and listed its
// resources (the last of its start-up answers), once the file shows
// "example://greeting".
func writeTeedPlugin(t *testing.T, e *e2e) string {
	t.Helper()
	plugin := pluginExample(t)
	seenByServer := filepath.Join(t.TempDir(), "server-out")
	e.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {"repo-tools": {"command": "sh", "args": ["-c", "\"$0\" | tee \"$1\"", %q, %q]}}}`, plugin, seenByServer))
	return seenByServer
}

func hasName(list []string, name string) bool {
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}

func TestE2EMCPPluginToolThroughRun(t *testing.T) {
	t.Parallel()
	plugin := pluginExample(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("mcp__example__echo", map[string]any{"text": "ping from the model"}),
			call("mcp__example__wordcount", map[string]any{"text": "one two three"}),
		}},
		scripted.Turn{Text: "The server echoed it."},
	)
	e.writeUserConfig(fmt.Sprintf(`
[[plugins]]
name = "example"
command = %q

[permissions]
allow = ["mcp__example__*"]
`, plugin))
	r := e.run("", "run", "echo something through the plugin")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d\nstderr: %s", len(reqs), r.stderr)
	}
	names := toolNames(t, reqs[0])
	for _, want := range []string{"mcp__example__echo", "mcp__example__wordcount", "read_file"} {
		if !hasName(names, want) {
			t.Fatalf("first request lacks %s: %v", want, names)
		}
	}
	msgs := string(messagesOf(t, reqs[1]))
	if !strings.Contains(msgs, "ping from the model") || !strings.Contains(msgs, `\"words\":3`) {
		t.Fatalf("tool results not sent back: %s", msgs)
	}
	assertPrefixStable(t, reqs)
	if !strings.Contains(r.stdout, "The server echoed it.") {
		t.Fatalf("stdout = %q", r.stdout)
	}
	log, err := os.ReadFile(filepath.Join(e.home, "logs", "mcp", "example.log"))
	if err != nil || !strings.Contains(string(log), "start") {
		t.Fatalf("server log: %q, %v", log, err)
	}
}

func TestE2EMCPWriterToolAsksAndReaderRuns(t *testing.T) {
	t.Parallel()
	plugin := pluginExample(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("mcp__example__echo", map[string]any{"text": "should-not-come-back"}),
			call("mcp__example__wordcount", map[string]any{"text": "a b"}),
		}},
		scripted.Turn{Text: "done"},
	)
	// An exact-name ask rule: with nobody to ask, the echo is refused;
	// the read-only wordcount runs.
	e.writeUserConfig(fmt.Sprintf("[[plugins]]\nname = \"example\"\ncommand = %q\n\n[permissions]\nask = [\"mcp__example__echo\"]\n", plugin))
	r := e.run("", "run", "try both")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	msgs := string(messagesOf(t, reqs[len(reqs)-1]))
	if strings.Count(msgs, "should-not-come-back") != 1 {
		t.Fatalf("the writer ran without approval: %s", msgs)
	}
	if !strings.Contains(msgs, `\"words\":2`) {
		t.Fatalf("the read-only tool did not run: %s", msgs)
	}
}

func TestE2EMCPProjectServerNeedsTrust(t *testing.T) {
	t.Parallel()
	plugin := pluginExample(t)
	e := newE2E(t, scripted.Turn{Text: "first"}, scripted.Turn{Text: "second"})
	e.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {"repo-tools": {"command": %q, "args": [], "env": {"X": "${UNSET_VAR:-fallback}"}}}}`, plugin))
	r := e.run("", "run", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	if names := toolNames(t, e.srv.Requests()[0]); hasName(names, "mcp__repo-tools__echo") {
		t.Fatalf("an untrusted project server's tools were offered: %v", names)
	}
	if !strings.Contains(r.stderr, "MCP server repo-tools") || !strings.Contains(r.stderr, "--mcp-trust") {
		t.Fatalf("no notice about the untrusted server:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "logs", "mcp", "repo-tools.log")); err == nil {
		t.Fatal("the untrusted server was started (its log exists)")
	}
	list := e.run("", "mcp", "list")
	if list.code != 0 || !strings.Contains(list.stdout, "repo-tools") || !strings.Contains(list.stdout, "untrusted") {
		t.Fatalf("mcp list:\n%s\n%s", list.stdout, list.stderr)
	}
	r = e.run("", "run", "--mcp-trust", "hello again")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	if names := toolNames(t, e.srv.Requests()[1]); !hasName(names, "mcp__repo-tools__echo") {
		t.Fatalf("--mcp-trust did not start the server: %v\n%s", names, r.stderr)
	}
}

func TestE2EMCPListGetPromptAndResource(t *testing.T) {
	t.Parallel()
	plugin := pluginExample(t)
	e := newE2E(t, scripted.Turn{Text: "reviewed"}, scripted.Turn{Text: "read it"})
	e.writeUserConfig(fmt.Sprintf(`
[[plugins]]
name = "example"
command = %q

[[plugins]]
name = "off"
command = "does-not-matter"
enabled = false

[[plugins]]
name = "broken"
command = "/nonexistent/mcp-server"
`, plugin))
	list := e.run("", "mcp", "list")
	if list.code != 0 {
		t.Fatalf("mcp list: %d\n%s", list.code, list.stderr)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(list.stdout, "\n") {
		if f := strings.Fields(line); len(f) >= 6 {
			rows[f[0]] = strings.Join(f[1:6], " ")
		}
	}
	for name, want := range map[string]string{"example": "running stdio 2 1 1", "off": "disabled stdio 0 0 0", "broken": "failed stdio 0 0 0"} {
		if rows[name] != want {
			t.Errorf("mcp list row %s = %q, want %q:\n%s", name, rows[name], want, list.stdout)
		}
	}
	get := e.run("", "mcp", "get", "example")
	for _, want := range []string{"mcp__example__wordcount [read-only]", "mcp__example__echo", "/mcp__example__review file", "@example:example://greeting"} {
		if !strings.Contains(get.stdout, want) {
			t.Errorf("mcp get lacks %q:\n%s", want, get.stdout)
		}
	}
	if r := e.run("", "commands"); !strings.Contains(r.stdout, "/mcp__example__review") || !strings.Contains(r.stdout, "mcp:example") {
		t.Errorf("reasonix commands lacks the MCP prompt:\n%s\n%s", r.stdout, r.stderr)
	}
	if r := e.run("", "mcp", "get", "nope"); r.code != 2 {
		t.Errorf("mcp get of an unknown server: exit %d", r.code)
	}
	r := e.run("", "run", "/mcp__example__review main.go")
	if r.code != 0 {
		t.Fatalf("prompt command: exit %d\n%s", r.code, r.stderr)
	}
	if msgs := messagesOf(t, e.srv.Requests()[0]); !bytes.Contains(msgs, []byte("Review main.go for bugs")) {
		t.Fatalf("the prompt's text was not the turn: %s", msgs)
	}
	r = e.run("", "run", "summarise @example:example://greeting please")
	if r.code != 0 {
		t.Fatalf("resource: exit %d\n%s", r.code, r.stderr)
	}
	if msgs := messagesOf(t, e.srv.Requests()[1]); !bytes.Contains(msgs, []byte("hello from the example plugin")) {
		t.Fatalf("the resource was not attached: %s", msgs)
	}
	if !strings.Contains(r.stderr, "MCP server broken failed") {
		t.Errorf("the failing server was not reported:\n%s", r.stderr)
	}
}

// Servers that hang, print garbage or exit at once cost the run their
// timeout at most; each is reported once and the session goes on.
func TestE2EMCPFaultyServersDoNotStopTheRun(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "still here"})
	e.writeUserConfig(`
[[plugins]]
name = "hangs"
command = "sleep"
args = ["600"]
timeout_ms = 700

[[plugins]]
name = "garbage"
command = "yes"
args = ["not json-rpc"]
timeout_ms = 3000

[[plugins]]
name = "exits"
command = "true"
`)
	start := time.Now()
	r := e.run("", "run", "hello")
	if r.code != 0 || !strings.Contains(r.stdout, "still here") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the run took %s", d)
	}
	for _, name := range []string{"hangs", "garbage", "exits"} {
		if n := strings.Count(r.stderr, "MCP server "+name+" failed"); n != 1 {
			t.Errorf("server %s reported %d times:\n%s", name, n, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "no handshake within 700ms") || !strings.Contains(r.stderr, "not JSON-RPC") {
		t.Errorf("the hang or the garbage is not named:\n%s", r.stderr)
	}
}

// A newcomer's project with a .mcp.json: doctor names every server, where
// it comes from and whether it would start, and the file's problems (a
// variable that is not set, a server with no command) without starting
// anything; mcp list says the same problems; mcp get --mcp-trust starts
// an untrusted server for that one command and records nothing; a
// broken file is named with its line, never read as "no servers".
func TestE2EMCPNewcomerDoctorListGet(t *testing.T) {
	t.Parallel()
	plugin := pluginExample(t)
	e := newE2E(t)
	e.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {
  "example": {"command": %q},
  "posthog": {"command": "npx", "args": ["-y", "mcp-remote@latest", "https://mcp.posthog.com/sse", "--header", "Authorization:${POSTHOG_AUTH_HEADER}"],
              "env": {"POSTHOG_AUTH_HEADER": "Bearer ${POSTHOG_KEY}"}},
  "nocmd": {"args": ["x"]},
  "typo": {"command": "no-such-mcp-server-qa"}
}}`, plugin))
	d := e.run("", "doctor")
	for _, want := range []string{
		"mcp:        3 server(s)",
		"typo (stdio) no-such-mcp-server-qa\n    from " + filepath.Join(e.repo, ".mcp.json") + "; NOT trusted yet: starts after a person allows it in `reasonix`, or with --mcp-trust; WILL FAIL to start: command \"no-such-mcp-server-qa\" is not on PATH",
		"example (stdio) " + plugin,
		"NOT trusted yet",
		// The server's own env variable stays for mcp-remote to expand.
		"--header Authorization:${POSTHOG_AUTH_HEADER}",
		"PROBLEM: " + filepath.Join(e.repo, ".mcp.json") + ": mcpServers.posthog: env.POSTHOG_AUTH_HEADER uses ${POSTHOG_KEY}, which is not set",
		"mcpServers.nocmd: server has no command",
	} {
		if !strings.Contains(d.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, d.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, "logs", "mcp", "example.log")); err == nil {
		t.Error("doctor started a server")
	}

	l := e.run("", "mcp", "list")
	if l.code != 0 || !strings.Contains(l.stderr, "${POSTHOG_KEY}, which is not set") || !strings.Contains(l.stderr, "--mcp-trust") {
		t.Errorf("mcp list: exit %d\n%s\n%s", l.code, l.stdout, l.stderr)
	}

	g := e.run("", "mcp", "get", "example", "--mcp-trust")
	if g.code != 0 || !strings.Contains(g.stdout, "example: running") || !strings.Contains(g.stdout, "mcp__example__wordcount [read-only]") {
		t.Errorf("mcp get --mcp-trust: exit %d\n%s\n%s", g.code, g.stdout, g.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "mcp-trust.json")); err == nil {
		t.Error("--mcp-trust recorded trust")
	}

	e.write(".mcp.json", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}\n")
	l = e.run("", "mcp", "list")
	if !strings.Contains(l.stderr, filepath.Join(e.repo, ".mcp.json")+":2:") || !strings.Contains(l.stdout, "no usable MCP servers") {
		t.Errorf("a broken .mcp.json was not named:\n%s\n%s", l.stdout, l.stderr)
	}
	d = e.run("", "doctor")
	if !strings.Contains(d.stdout, "PROBLEM: "+filepath.Join(e.repo, ".mcp.json")+":2:") {
		t.Errorf("doctor does not name the broken .mcp.json:\n%s", d.stdout)
	}
}

// A remote server that wants an OAuth sign-in but offers no way to get
// one (a 401 challenge and nothing else, like a server that takes only a
// token in its headers): a run goes on without it and says how to sign
// in; `reasonix mcp login` then fails with the reason, and stores
// nothing.
func TestE2EMCPServerWantingOAuthIsExplained(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	e := newE2E(t, scripted.Turn{Text: "went on"})
	e.env = append(e.env, "BROWSER=none")
	e.writeUserConfig(fmt.Sprintf("[[plugins]]\nname = \"sentry\"\ntype = \"http\"\nurl = %q\n\n[[plugins]]\nname = \"local\"\ncommand = \"true\"\nenabled = false\n", srv.URL+"/mcp"))
	if l := e.run("", "mcp", "login", "local"); l.code != 2 || !strings.Contains(l.stderr, "MCP server local runs as a local command (stdio): it has no OAuth sign-in") {
		t.Errorf("login to a stdio server: exit %d\n%s", l.code, l.stderr)
	}
	const want = "needs an OAuth sign-in: run `reasonix mcp login sentry`"
	g := e.run("", "mcp", "get", "sentry")
	if !strings.Contains(g.stdout, "sentry: needs sign-in") || !strings.Contains(g.stdout, want) {
		t.Errorf("mcp get:\n%s\n%s", g.stdout, g.stderr)
	}
	r := e.run("", "run", "hi")
	if r.code != 0 || !strings.Contains(r.stderr, "MCP server sentry "+want) {
		t.Errorf("run: exit %d\n%s", r.code, r.stderr)
	}
	l := e.run("", "mcp", "login", "sentry")
	if l.code != 1 || !strings.Contains(l.stderr, "MCP server sentry: sign-in:") {
		t.Errorf("login: exit %d\n%s\n%s", l.code, l.stdout, l.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(e.home, credentials.File)); err == nil && strings.Contains(string(b), "mcp-oauth") {
		t.Errorf("a failed sign-in stored something:\n%s", b)
	}
}

// The life of a sign-in through the real binary, against a remote MCP
// server behind its own OAuth authorization server: a run before it says
// how to sign in and goes on; `reasonix mcp login` registers, sends the
// person to the browser (here a client that follows the address it
// printed) and keeps the grant in the credential store without printing
// a token; the next run calls the server's tool with it; a token the
// server dropped is refreshed by the next run, once, and the refreshed
// one kept; `reasonix mcp logout` forgets it, and the run after says to
// sign in again.
func TestE2EMCPOAuthLoginRunRefreshLogout(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t, oauthtest.Options{ExpiresIn: 3600})
	e := newE2E(t,
		scripted.Turn{Text: "no tool yet"},
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__remote__whoami", map[string]any{})}},
		scripted.Turn{Text: "called it"},
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__remote__whoami", map[string]any{})}},
		scripted.Turn{Text: "called it again"},
		scripted.Turn{Text: "signed out"},
	)
	// No browser is started; the test is the person's browser.
	e.env = append(e.env, "BROWSER=none")
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte("credentials_store = \"file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.writeUserConfig(fmt.Sprintf("[[plugins]]\nname = \"remote\"\ntype = \"http\"\nurl = %q\n\n[permissions]\nallow = [\"mcp__remote__*\"]\n", srv.URL))
	const needs = "MCP server remote needs an OAuth sign-in: run `reasonix mcp login remote`"

	r := e.run("", "run", "before")
	if r.code != 0 || !strings.Contains(r.stderr, needs) {
		t.Fatalf("run before login: exit %d\n%s", r.code, r.stderr)
	}
	if hasName(toolNames(t, e.srv.Requests()[0]), "mcp__remote__whoami") {
		t.Fatal("the tool was offered without a sign-in")
	}
	if c := srv.Counts(); c.Registrations != 0 || c.Authorizations != 0 {
		t.Fatalf("a headless run went to the authorization server: %+v", c)
	}

	out, errs, err := loginThroughBrowser(t, e, "remote", srv.Base)
	if err != nil {
		t.Fatalf("login: %v\n%s\n%s", err, out, errs)
	}
	if !strings.Contains(out, "Signed in to remote (1 tools); the sign-in is kept in "+filepath.Join(e.home, credentials.File)) {
		t.Errorf("login said:\n%s", out)
	}
	creds, err := os.ReadFile(filepath.Join(e.home, credentials.File))
	if err != nil || !strings.Contains(string(creds), `"mcp-oauth:remote:`) {
		t.Fatalf("credentials file: %v\n%s", err, creds)
	}
	if fi, _ := os.Stat(filepath.Join(e.home, credentials.File)); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %v", fi.Mode())
	}
	if strings.Contains(out+errs, "access-") || strings.Contains(out+errs, "refresh-") {
		t.Errorf("login printed a token:\n%s\n%s", out, errs)
	}
	if d := e.run("", "doctor"); !strings.Contains(d.stdout, "starts with each session; signed in (OAuth)") {
		t.Errorf("doctor does not say the server is signed in:\n%s", d.stdout)
	}

	r = e.run("", "run", "call it")
	if r.code != 0 {
		t.Fatalf("run after login: exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	firstAnswer := string(messagesOf(t, reqs[2]))
	if !strings.Contains(firstAnswer, "signed-in answer for token access-") {
		t.Fatalf("the tool did not answer with the sign-in:\n%s\n%s", firstAnswer, r.stderr)
	}
	if c := srv.Counts(); c.Registrations != 1 || c.CodeGrants != 1 || c.Refreshes != 0 || c.Calls != 1 {
		t.Errorf("after the first run: %+v", c)
	}

	srv.Expire()
	r = e.run("", "run", "call it again")
	if r.code != 0 {
		t.Fatalf("run after expiry: exit %d\n%s", r.code, r.stderr)
	}
	reqs = e.srv.Requests()
	again := string(messagesOf(t, reqs[4]))
	if !strings.Contains(again, "signed-in answer for token access-") {
		t.Fatalf("no answer after the token was dropped:\n%s\n%s", again, r.stderr)
	}
	if c := srv.Counts(); c.Refreshes != 1 || c.CodeGrants != 1 || c.Calls != 2 || c.RefreshResource != srv.URL {
		t.Errorf("after expiry (the refresh names the resource, RFC 8707): %+v", c)
	}
	// The refreshed token was kept: a new run needs no refresh.
	if g := e.run("", "mcp", "get", "remote"); !strings.Contains(g.stdout, "remote: running") || !strings.Contains(g.stdout, "signed in (OAuth") {
		t.Errorf("mcp get after refresh:\n%s\n%s", g.stdout, g.stderr)
	}
	if c := srv.Counts(); c.Refreshes != 1 {
		t.Errorf("the refreshed token was not kept: %+v", c)
	}

	kept := keptGrant(t, e, "remote", srv.URL)
	lo := e.run("", "mcp", "logout", "remote")
	if lo.code != 0 || !strings.Contains(lo.stdout, "Signed out of remote: its sign-in was revoked at its authorization server and is forgotten.") {
		t.Errorf("logout: exit %d\n%s\n%s", lo.code, lo.stdout, lo.stderr)
	}
	if c := srv.Counts(); c.Revocations != 2 || srv.Valid(kept.access) || srv.Live(kept.refresh) {
		t.Errorf("logout did not revoke the grant at the server (RFC 7009): %+v", c)
	}
	if b, _ := os.ReadFile(filepath.Join(e.home, credentials.File)); strings.Contains(string(b), "mcp-oauth") {
		t.Errorf("logout left the sign-in:\n%s", b)
	}
	r = e.run("", "run", "after logout")
	if r.code != 0 || !strings.Contains(r.stderr, needs) {
		t.Errorf("run after logout: exit %d\n%s", r.code, r.stderr)
	}
	if lo := e.run("", "mcp", "logout", "remote"); !strings.Contains(lo.stdout, "No sign-in to remote was kept") {
		t.Errorf("second logout:\n%s", lo.stdout)
	}
}

// loginThroughBrowser runs `reasonix mcp login NAME` and plays the
// person's browser: it opens the authorization address the command
// prints (one on the authorization server at base) and follows the
// redirects back to the command's loopback listener.
func loginThroughBrowser(t *testing.T, e *e2e, name, base string) (stdout, stderr string, err error) {
	t.Helper()
	login := exec.Command(binPath, "mcp", "login", name)
	login.Dir, login.Env = e.repo, e.env
	pipe, err := login.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	login.Stderr = &errb
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(pipe)
	browsed := false
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if addr, ok := strings.CutPrefix(line, "  "); ok && strings.HasPrefix(addr, base+"/authorize?") && !browsed {
			browsed = true
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			page, err := oauthtest.Browse(ctx, addr)
			cancel()
			if err != nil || !strings.Contains(page, "Signed in to "+name) {
				t.Errorf("browser: %v\n%s", err, page)
			}
		}
	}
	err = login.Wait()
	if err == nil && !browsed {
		err = fmt.Errorf("no authorization address was printed")
	}
	return out.String(), errb.String(), err
}

// A server whose authorization server takes only a client registered by
// hand: the [[plugins]] entry's oauth names it (the secret through
// ${VAR}, the fixed callback port it was registered with), and login
// uses it without registering.
func TestE2EMCPOAuthConfiguredClient(t *testing.T) {
	t.Parallel()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	srv := oauthtest.New(t, oauthtest.Options{Client: &oauthtest.Client{ID: "by-hand", Secret: "hand-secret",
		Redirect: fmt.Sprintf("http://localhost:%d/callback", port)}})
	e := newE2E(t)
	e.env = append(e.env, "BROWSER=none", "HAND_SECRET=hand-secret")
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte("credentials_store = \"file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.writeUserConfig(fmt.Sprintf("[[plugins]]\nname = \"hand\"\ntype = \"http\"\nurl = %q\noauth = { client_id = \"by-hand\", client_secret = \"${HAND_SECRET}\", callback_port = %d }\n", srv.URL, port))
	out, errs, err := loginThroughBrowser(t, e, "hand", srv.Base)
	if err != nil || !strings.Contains(out, "Signed in to hand (1 tools)") {
		t.Fatalf("login: %v\n%s\n%s", err, out, errs)
	}
	if c := srv.Counts(); c.Registrations != 0 || c.CodeGrants != 1 {
		t.Errorf("counts: %+v", c)
	}
	if c := e.run("", "config"); strings.Contains(c.stdout, "hand-secret") || !strings.Contains(c.stdout, `client_id = "by-hand"`) {
		t.Errorf("config shows the secret or not the client:\n%s", c.stdout)
	}
	// The revocation authenticates with the client's secret, as the
	// token requests do; a wrong one would be refused.
	kept := keptGrant(t, e, "hand", srv.URL)
	if lo := e.run("", "mcp", "logout", "hand"); lo.code != 0 || !strings.Contains(lo.stdout, "revoked at its authorization server") {
		t.Errorf("logout: exit %d\n%s\n%s", lo.code, lo.stdout, lo.stderr)
	}
	if c := srv.Counts(); c.Revocations != 2 || srv.Live(kept.refresh) {
		t.Errorf("logout did not revoke: %+v", c)
	}
}

// keptTokens are a kept grant's tokens.
type keptTokens struct{ access, refresh string }

// keptGrant reads the tokens of the sign-in to the server name at url
// that the file store under e's home keeps.
func keptGrant(t *testing.T, e *e2e, name, url string) keptTokens {
	t.Helper()
	v, ok := credentials.Open(e.home, credentials.FileKey, "").Get(mcp.GrantKey(mcp.Config{Name: name, URL: url}))
	if !ok {
		t.Fatalf("no sign-in to %s kept", name)
	}
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Token struct {
			Access  string `json:"access_token"`
			Refresh string `json:"refresh_token"`
		} `json:"token"`
	}
	if err := json.Unmarshal(raw, &g); err != nil || g.Token.Access == "" || g.Token.Refresh == "" {
		t.Fatalf("kept grant: %v %s", err, raw)
	}
	return keptTokens{g.Token.Access, g.Token.Refresh}
}

// A sign-in whose authorization server offers no revocation is still
// forgotten by `reasonix mcp logout`, which says it was not revoked and
// why.
func TestE2EMCPOAuthLogoutWithoutRevocation(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t, oauthtest.Options{NoRevocation: true})
	e := newE2E(t)
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte("credentials_store = \"file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.writeUserConfig(fmt.Sprintf("[[plugins]]\nname = \"remote\"\ntype = \"http\"\nurl = %q\n", srv.URL))
	grant, _ := json.Marshal(map[string]any{"url": srv.URL, "client_id": "client-1", "token_url": srv.Base + "/token",
		"token": map[string]any{"access_token": "access-kept", "refresh_token": "refresh-kept"}})
	key := mcp.GrantKey(mcp.Config{Name: "remote", URL: srv.URL})
	if _, err := credentials.Open(e.home, credentials.FileKey, "").Set(key, base64.StdEncoding.EncodeToString(grant)); err != nil {
		t.Fatal(err)
	}
	lo := e.run("", "mcp", "logout", "remote")
	if lo.code != 0 || !strings.Contains(lo.stdout, "Signed out of remote: its sign-in is forgotten here but was not revoked at its authorization server (the authorization server offers no revocation).") {
		t.Errorf("logout: exit %d\n%s\n%s", lo.code, lo.stdout, lo.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(e.home, credentials.File)); strings.Contains(string(b), "mcp-oauth") {
		t.Errorf("logout left the sign-in:\n%s", b)
	}
}

// MCP rules of a Claude Code settings file through the binary: allow
// mcp__example__* (in a trusted project) lets the server's writer run
// headless unasked, a deny of that one tool wins over the allow (even
// under --yolo; adding a deny rule keeps the trust), and the file's
// enabledMcpjsonServers does not trust the repository's own server
// (doctor says so).
func TestE2EClaudeSettingsMCPRules(t *testing.T) {
	t.Parallel()
	plugin := pluginExample(t)
	e := newE2E(t, scripted.Turn{Text: "untrusted"})
	e.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {"example": {"command": %q}}}`, plugin))
	e.write(".claude/settings.json", `{"enabledMcpjsonServers": ["example"], "permissions": {"allow": ["mcp__example__*"]}}`)
	if r := e.run("", "run", "echo"); r.code != 0 || !strings.Contains(r.stderr, "MCP server example") {
		t.Fatalf("enabledMcpjsonServers trusted the repository's server: exit %d\n%s", r.code, r.stderr)
	}
	if names := toolNames(t, e.srv.Requests()[0]); hasName(names, "mcp__example__echo") {
		t.Fatalf("an untrusted server's tools were offered: %v", names)
	}
	d := e.run("", "doctor")
	if !strings.Contains(d.stdout, `key "enabledMcpjsonServers" (a project's MCP servers start once a person trusts them`) {
		t.Errorf("doctor does not say why enabledMcpjsonServers is ignored:\n%s", d.stdout)
	}
	e2 := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__example__echo", map[string]any{"text": "ALLOWED-ECHO"})}},
		scripted.Turn{Text: "first"},
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__example__echo", map[string]any{"text": "DENIED-ECHO"})}},
		scripted.Turn{Text: "second"},
	)
	e2.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {"example": {"command": %q}}}`, plugin))
	e2.write(".claude/settings.json", `{"permissions": {"allow": ["mcp__example__*"]}}`)
	// A repository's allow rule applies once the person trusts the
	// project, as they would after reading the file.
	if r := e2.run("", "trust"); r.code != 0 || !strings.Contains(r.stdout, `permissions.allow "mcp__example__*"`) {
		t.Fatalf("trust: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e2.run("", "run", "--mcp-trust", "echo"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if msgs := string(messagesOf(t, e2.srv.Requests()[1])); !strings.Contains(msgs, `"content":"ALLOWED-ECHO"`) {
		t.Errorf("allow mcp__example__* did not let echo run:\n%s", msgs)
	}
	e2.write(".claude/settings.json", `{"permissions": {"allow": ["mcp__example__*"], "deny": ["mcp__example__echo"]}}`)
	if r := e2.run("", "run", "--mcp-trust", "--yolo", "echo again"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// A deny rule naming the tool refuses every call of it: as Claude
	// Code does, the tool is not offered at all (the others are), and a
	// call of it anyway does not run.
	if names := toolNames(t, e2.srv.Requests()[2]); hasName(names, "mcp__example__echo") || !hasName(names, "mcp__example__wordcount") {
		t.Errorf("the deny did not win: offered %v", names)
	}
	if msgs := wireMessages(t, e2.srv.Requests()[3]); msgs[len(msgs)-1].Role != "tool" || !strings.Contains(msgs[len(msgs)-1].Content, `unknown tool "mcp__example__echo"`) {
		t.Errorf("the withheld tool's call: %+v", msgs[len(msgs)-1])
	}
}
