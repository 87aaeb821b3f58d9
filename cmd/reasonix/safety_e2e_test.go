package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EHeadlessAskRuleNeedsAPerson: in `reasonix run` nobody can say yes,
// so a bash command an explicit ask rule matches does not run and the
// model is told which rule stopped it; a command only the posture asks
// about still runs. --yolo keeps its meaning and lets the ask rule pass.
func TestE2EHeadlessAskRuleNeedsAPerson(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell test")
	}
	turns := func() []scripted.Turn {
		return []scripted.Turn{
			{ToolCalls: []scripted.Call{
				call("bash", map[string]any{"command": "touch pushed.txt"}),
				call("bash", map[string]any{"command": "echo posture-ran > posture.txt"}),
			}},
			{Text: "done"},
		}
	}
	e := newE2E(t, turns()...)
	e.write("reasonix.toml", "[permissions]\nask = [\"Bash(touch:*)\"]\n")
	for _, mode := range []string{"", "--auto", "--yolo"} {
		args := []string{"run", "push it"}
		if mode != "" {
			args = append(args, mode)
		}
		r := e.run("", args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", mode, r.code, r.stderr)
		}
		_, err := os.Stat(filepath.Join(e.repo, "pushed.txt"))
		ran := err == nil
		if got := e.read("posture.txt"); got != "posture-ran\n" {
			t.Errorf("%s: the posture-decided command did not run: %q", mode, got)
		}
		reqs := e.srv.Requests()
		next := string(messagesOf(t, reqs[len(reqs)-1]))
		const told = `blocked: rule Ask: Bash(touch:*) needs a person and no one can answer in this run; bash \"touch pushed.txt\" was not run.`
		if mode == "--yolo" {
			if !ran || strings.Contains(next, "blocked") {
				t.Errorf("--yolo: the ask rule was not lifted (ran %v): %s", ran, next)
			}
			continue
		}
		if ran {
			t.Errorf("%s: the ask-rule command ran headless", mode)
		}
		if !strings.Contains(next, told) {
			t.Errorf("%s: the model was not told the rule: %s", mode, next)
		}
		e.srv = llmtest.Start(t, &scripted.Script{Turns: turns()})
		e.env = append(e.env, "REASONIX_BASE_URL="+e.srv.URL())
		os.Remove(filepath.Join(e.repo, "posture.txt"))
	}
	log, err := os.ReadFile(filepath.Join(e.home, "permissions.log"))
	if err != nil || !strings.Contains(string(log), `"by":"headless","rule":"Bash(touch:*)"`) {
		t.Errorf("decision log: %v %s", err, log)
	}
}

// TestE2ESecretsStayOutOfReach: a hostile model cannot read a provider key
// from bash's environment, and a key it finds elsewhere (a file) is
// redacted before it reaches the next request, the session file or the
// output.
func TestE2ESecretsStayOutOfReach(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell test")
	}
	const (
		mainKey  = "sk-e2e-main-provider-key-0001"
		otherKey = "sk-e2e-other-provider-key-0002"
		envKey   = "sk-e2e-reasonix-api-key-0003"
	)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("bash", map[string]any{"command": "env; echo ---; printenv; echo ---; cat /proc/self/environ | tr '\\0' '\\n'; echo ---; " +
				"cat /proc/$PPID/environ 2>&1 | tr '\\0' '\\n'; echo ---; " +
				`echo "vars:[$RX_E2E_MAIN_KEY][$RX_E2E_OTHER_KEY][$REASONIX_API_KEY]"; ` +
				`(python3 -c 'import os; print(sorted(os.environ))' || true) 2>/dev/null`}),
		}},
		scripted.Turn{ToolCalls: []scripted.Call{
			call("bash", map[string]any{"command": "cat notes/key.txt; echo $HOME"}),
			call("read_file", map[string]any{"path": "notes/key.txt"}),
			call("grep", map[string]any{"pattern": "sk-e2e", "output_mode": "content"}),
		}},
		scripted.Turn{Text: "nothing to see"},
	)
	e.env = withoutEnv(e.env, "REASONIX_API_KEY")
	e.env = append(e.env, "REASONIX_API_KEY="+envKey, "RX_E2E_MAIN_KEY="+mainKey, "RX_E2E_OTHER_KEY="+otherKey, "RX_E2E_PLAIN=kept")
	e.writeUserConfig(`[[providers]]
name = "main"
base_url = "` + e.srv.URL() + `"
api_key_env = "RX_E2E_MAIN_KEY"
model = "test-model"

[[providers]]
name = "other"
base_url = "http://127.0.0.1:9/v1"
api_key_env = "RX_E2E_OTHER_KEY"
model = "m"
`)
	e.write("notes/key.txt", "main="+mainKey+"\nother="+otherKey+"\nenv="+envKey+"\n")
	r := e.run("", "run", "--output-format", "json", "look around")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d", len(reqs))
	}
	// What bash printed: the last message of the second request.
	var msgs []struct{ Role, Content string }
	if err := json.Unmarshal(messagesOf(t, reqs[1]), &msgs); err != nil {
		t.Fatal(err)
	}
	first := msgs[len(msgs)-1].Content
	parts := strings.Split(first, "---\n")
	if len(parts) != 5 {
		t.Fatalf("bash output has %d parts:\n%s", len(parts), first)
	}
	// env, printenv, /proc/self/environ and python's os.environ show no
	// key variable; Reasonix's own environ (parts[3]) is unreadable unless
	// the test runs as root, and its values are redacted either way.
	for i, part := range parts {
		for _, leak := range []string{"RX_E2E_MAIN_KEY", "RX_E2E_OTHER_KEY", "REASONIX_API_KEY"} {
			if i != 3 && strings.Contains(part, leak) {
				t.Errorf("bash saw %s:\n%s", leak, part)
			}
		}
	}
	if os.Getuid() != 0 && strings.Contains(parts[3], "RX_E2E_PLAIN") {
		t.Errorf("bash read Reasonix's environment:\n%s", parts[3])
	}
	for _, want := range []string{"vars:[][][]", "RX_E2E_PLAIN=kept", "PATH=", "HOME="} {
		if !strings.Contains(first, want) {
			t.Errorf("missing %q in bash output:\n%s", want, first)
		}
	}
	second := string(messagesOf(t, reqs[2]))
	if n := strings.Count(second, "main=[REDACTED]"); n < 3 {
		t.Errorf("the key file was not redacted in every tool (%d):\n%s", n, second)
	}
	sessions, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*"))
	if len(sessions) == 0 {
		t.Fatal("no session file")
	}
	stored := ""
	for _, p := range sessions {
		b, _ := os.ReadFile(p)
		stored += string(b)
	}
	for _, key := range []string{mainKey, otherKey, envKey} {
		for where, s := range map[string]string{"request": string(reqs[1]) + string(reqs[2]), "session file": stored, "stdout": r.stdout, "stderr": r.stderr} {
			if strings.Contains(s, key) {
				t.Errorf("%s reached the %s", key, where)
			}
		}
	}
}
