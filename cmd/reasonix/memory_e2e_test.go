package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EMemoryToolAsksForEveryWrite drives the one memory tool through
// the binary in yolo mode: its list is a read and is not asked about;
// every save and forget is, offering only allow or deny (no "for the
// session" or "always"), and each does what the person allowed.
func TestE2EMemoryToolAsksForEveryWrite(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("memory", map[string]string{"operation": "list"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("memory", map[string]string{"operation": "save", "name": "deploy", "content": "Deploy with make ship."})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("memory", map[string]string{"operation": "save", "name": "deploy", "content": "Deploy with make release."})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("memory", map[string]string{"operation": "forget", "name": "deploy"})}},
		scripted.Turn{Text: "done"},
	)
	file := filepath.Join(e.repo, ".reasonix", "memory", "deploy.md")
	c := startStream(t, e, "--yolo")
	c.send(userLine("remember how we deploy, then change it, then forget it"))

	for i, fileHas := range []string{"", "make ship.", "make release."} {
		// Had list been asked about, the first question would come
		// before any save and the file checks below would be off by one.
		req := c.await("an approval request", typed("approval_request"))
		if req["tool"] != "memory" || fmt.Sprint(req["choices"]) != "[allow deny]" || req["dangerous"] != true {
			t.Fatalf("request %d: %v", i, req)
		}
		data, _ := os.ReadFile(file)
		if fileHas == "" && len(data) > 0 || !strings.Contains(string(data), fileHas) {
			t.Errorf("before request %d the memory file holds %q, want %q", i, data, fileHas)
		}
		c.send(map[string]any{"type": "approval", "id": req["id"], "decision": "allow"})
	}
	c.await("the turn's end", turnDone)
	c.stdin.Close()
	for m := range c.lines {
		if m["type"] == "approval_request" {
			t.Errorf("a fourth question: %v", m)
		}
	}
	if err := <-c.exit; err != nil {
		t.Fatalf("exit: %v", err)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("the forgotten memory is still there")
	}
	arch, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "memory", ".archive", "deploy-*.md"))
	if len(arch) != 1 {
		t.Fatalf("archive = %v", arch)
	}
	if data, _ := os.ReadFile(arch[0]); !strings.Contains(string(data), "make release.") {
		t.Errorf("archived memory %q", data)
	}
	if reqs := e.srv.Requests(); len(reqs) != 5 || !strings.Contains(string(reqs[1]), "No memories yet.") {
		t.Errorf("%d requests; the list result did not reach the model", len(reqs))
	}
}
