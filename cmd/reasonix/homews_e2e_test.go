//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers/scripted"
)

// Reasonix started in a home directory: the workspace holds ~/.ssh and
// Reasonix's own home, which the read deny list names but Landlock cannot
// deny inside a writable tree. Neither a command, however it names the
// path, nor a file tool reads them; the skills in Reasonix's home stay
// readable, and the rest of the home works as any workspace.
func TestE2EHomeDirectoryWorkspaceKeepsTheDenyList(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	if ok, why := permission.HidingAvailable(); !ok {
		t.Skipf("the sandbox cannot hide files here: %s", why)
	}
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			// Paths the gate cannot read in the line: the sandbox's part.
			bashCall(`k=ssh; cat .$k/id_rsa | base64; c=credentials; cat .reasonix/$c.json; cat ~/.$k/id_rsa`),
			bashCall(`cat .reasonix/skills/s/SKILL.md notes.txt`),
			call("read_file", map[string]any{"path": ".ssh/id_rsa"}),
			call("grep", map[string]any{"pattern": "CANARY", "output_mode": "content"}),
		}},
		scripted.Turn{Text: "done"},
	)
	// The home is the workspace, and Reasonix's home the default one in it.
	e.home = e.repo + "/.reasonix"
	var env []string
	for _, kv := range e.env {
		switch {
		case strings.HasPrefix(kv, "HOME="):
			kv = "HOME=" + e.repo
		case strings.HasPrefix(kv, "REASONIX_HOME="):
			continue
		}
		env = append(env, kv)
	}
	e.env = env
	e.write(".ssh/id_rsa", "SSH-CANARY-KEY\n")
	e.write(".reasonix/credentials.json", `{"K":"CRED-CANARY"}`)
	e.write(".reasonix/skills/s/SKILL.md", "---\nname: s\ndescription: a skill\n---\nskill-body-readable\n")
	e.write("notes.txt", "ordinary-notes\n")
	msgs := e.lastMessages("run", "--yolo", "look around")
	for _, leak := range []string{"SSH-CANARY", "U1NILUNBTkFSWS1LRVk", "CRED-CANARY"} {
		if strings.Contains(msgs, leak) {
			t.Errorf("%q reached the model", leak)
		}
	}
	res := toolResults(t, e.srv.Requests()[1])
	for id, r := range res {
		if strings.Contains(r, "CANARY") || strings.Contains(r, "U1NILUNBTkFSWS1LRVk") {
			t.Errorf("%s: %s", id, r)
		}
	}
	if !strings.Contains(res["call_0_1"], "skill-body-readable") || !strings.Contains(res["call_0_1"], "ordinary-notes") {
		t.Errorf("the rest of the home was not readable: %s", res["call_0_1"])
	}
	if !strings.Contains(res["call_0_2"], "denied") {
		t.Errorf("read_file of ~/.ssh/id_rsa: %s", res["call_0_2"])
	}
}

// The grep tool searching a folder meets files the gate never judged: a
// Read deny rule keeps them out of its results as it keeps them from
// read_file (it printed a denied .env's lines before).
func TestE2EGrepToolHonoursReadDenyRules(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("grep", map[string]any{"pattern": "grep-secret", "output_mode": "content"}),
			call("grep", map[string]any{"pattern": "grep-secret", "path": "app", "output_mode": "count"}),
			call("grep", map[string]any{"pattern": "visible-line", "output_mode": "content"}),
		}},
		scripted.Turn{Text: "done"},
	)
	e.write("reasonix.toml", "[permissions]\ndeny = [\"Read(./.env)\", \"Read(./keys/**)\"]\n")
	e.write(".env", "TOKEN=grep-secret-1\n")
	e.write("app/.env", "TOKEN=grep-secret-2\n")
	e.write("keys/k.pem", "grep-secret-3\n")
	e.write("app/main.go", "// visible-line grep-secret-in-code\n")
	msgs := e.lastMessages("run", "--yolo", "look")
	for _, s := range []string{"grep-secret-1", "grep-secret-2", "grep-secret-3"} {
		if strings.Contains(msgs, s) {
			t.Errorf("%s reached the model", s)
		}
	}
	res := toolResults(t, e.srv.Requests()[1])
	if !strings.Contains(res["call_0_0"], "app/main.go") || !strings.Contains(res["call_0_2"], "visible-line") {
		t.Errorf("the readable file was not searched: %v", res)
	}
}
