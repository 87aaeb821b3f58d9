package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/nodetest"
	"github.com/reasonix/reasonix/providers/scripted"
)

// npmServer is the entry point of an npm MCP server package, or the test
// skips saying how to install it.
func npmServer(t *testing.T, pkg string) string {
	t.Helper()
	mods := nodetest.Module(t, "@modelcontextprotocol/"+pkg)
	return filepath.Join(mods, "@modelcontextprotocol", pkg, "dist", "index.js")
}

// Two servers nobody here wrote, over stdio, through the real binary: the
// scripted model calls their tools; a resource and a prompt are read.
func TestE2EMCPNpmServersOverStdio(t *testing.T) {
	t.Parallel()
	everything := npmServer(t, "server-everything")
	fsServer := npmServer(t, "server-filesystem")
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("mcp__everything__get-sum", map[string]any{"a": 2, "b": 40}),
			call("mcp__everything__get-env", map[string]any{}),
			call("mcp__everything__get-tiny-image", map[string]any{}),
			call("mcp__fs__read_text_file", map[string]any{"path": "notes.txt"}),
		}},
		scripted.Turn{Text: "done"},
		scripted.Turn{Text: "read the resource"},
		scripted.Turn{Text: "answered the prompt"},
	)
	e.env = append(e.env, "PROVIDER_SECRET_FOR_TEST=sk-abcdefgh12345678")
	e.write("notes.txt", "the notes file says hello\n")
	e.writeUserConfig(fmt.Sprintf(`
[[plugins]]
name = "everything"
command = "node"
args = [%q, "stdio"]
env = { CONFIGURED_FOR_SERVER = "yes" }
timeout_ms = 60000

[[plugins]]
name = "fs"
command = "node"
args = [%q, "."]
timeout_ms = 60000
`, everything, fsServer))
	r := e.run("", "run", "use the servers")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	names := toolNames(t, reqs[0])
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__fs__read_text_file", "mcp__fs__write_file"} {
		if !hasName(names, want) {
			t.Fatalf("first request lacks %s: %v", want, names)
		}
	}
	msgs := string(messagesOf(t, reqs[1]))
	for _, want := range []string{"42", "CONFIGURED_FOR_SERVER", "PATH", "[image: image/png", "the notes file says hello"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("tool results lack %q:\n%.3000s", want, msgs)
		}
	}
	for _, leak := range []string{"sk-abcdefgh12345678", "REASONIX_API_KEY", "PROVIDER_SECRET_FOR_TEST"} {
		if strings.Contains(msgs, leak) {
			t.Errorf("the server's environment holds %s", leak)
		}
	}
	assertPrefixStable(t, reqs[:2])

	r = e.run("", "run", "summarise @everything:demo://resource/static/document/features.md")
	if r.code != 0 {
		t.Fatalf("resource: exit %d\n%s", r.code, r.stderr)
	}
	if msgs := messagesOf(t, e.srv.Requests()[2]); !bytes.Contains(msgs, []byte(`uri=\"demo://resource/static/document/features.md\"`)) {
		t.Fatalf("resource not attached: %.2000s", msgs)
	}
	r = e.run("", "run", "/mcp__everything__args-prompt Paris")
	if r.code != 0 {
		t.Fatalf("prompt: exit %d\n%s", r.code, r.stderr)
	}
	if msgs := messagesOf(t, e.srv.Requests()[3]); !bytes.Contains(msgs, []byte("Paris")) || bytes.Contains(msgs, []byte("/mcp__everything__args-prompt")) {
		t.Fatalf("prompt text not the turn: %.2000s", msgs)
	}
	log, _ := os.ReadFile(filepath.Join(e.home, "logs", "mcp", "fs.log"))
	if !strings.Contains(string(log), "Secure MCP Filesystem Server") {
		t.Errorf("the filesystem server's stderr was not logged: %q", log)
	}
}

// server-everything over streamable HTTP, and over the older HTTP+SSE
// transport.
func TestE2EMCPNpmServerOverHTTP(t *testing.T) {
	t.Parallel()
	everything := npmServer(t, "server-everything")
	for _, tc := range []struct{ mode, typ, path, ready string }{
		{"streamableHttp", "http", "/mcp", "listening"},
		{"sse", "sse", "/sse", "running on port"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			t.Parallel()
			port := startNodeServer(t, everything, tc.mode, tc.ready)
			e := newE2E(t,
				scripted.Turn{ToolCalls: []scripted.Call{call("mcp__remote__echo", map[string]any{"message": "over " + tc.typ})}},
				scripted.Turn{Text: "done"},
			)
			e.writeUserConfig(fmt.Sprintf("[[plugins]]\nname = \"remote\"\ntype = %q\nurl = \"http://127.0.0.1:%d%s\"\n", tc.typ, port, tc.path))
			r := e.run("", "run", "echo remotely")
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
			}
			if msgs := string(messagesOf(t, e.srv.Requests()[1])); !strings.Contains(msgs, "Echo: over "+tc.typ) {
				t.Fatalf("echo result missing: ...%s\nstderr: %s", msgs[max(0, len(msgs)-1500):], r.stderr)
			}
			list := e.run("", "mcp", "list")
			if !strings.Contains(list.stdout, "running  "+tc.typ) {
				t.Fatalf("mcp list:\n%s%s", list.stdout, list.stderr)
			}
		})
	}
}

// startNodeServer runs server-everything in mode on a free port and waits
// until its stderr says ready.
func startNodeServer(t *testing.T, script, mode, ready string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := exec.Command("node", script, mode)
	srv.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	up := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		closed := false
		for sc.Scan() {
			if !closed && strings.Contains(sc.Text(), ready) {
				close(up)
				closed = true
			}
		}
	}()
	t.Cleanup(func() { _ = srv.Process.Kill(); <-done; _ = srv.Wait() })
	select {
	case <-up:
	case <-time.After(60 * time.Second):
		t.Fatalf("server-everything %s did not start within 60s", mode)
	}
	return port
}
