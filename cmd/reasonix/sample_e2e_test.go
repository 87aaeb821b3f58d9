package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// The product spec's sample configuration (testdata/config-sample.toml, a
// copy of the spec's section 5) loads unchanged apart from its endpoint and
// runs a turn: its system prompt, max_steps = 0, the trailing-* deny rules,
// its example MCP plugin and a key from the project's .env all take effect.
func TestE2ESpecSampleConfigRunsATurn(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "git push origin main"})}},
		scripted.Turn{Text: "pushing is not allowed here"},
	)
	sample, err := os.ReadFile(filepath.Join("testdata", "config-sample.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(sample), `base_url = "https://api.deepseek.com"`, `base_url = "`+e.srv.URL()+`"`, 1)
	// The sample's [[plugins]] entry starts reasonix-plugin-example from
	// PATH: build it there.
	bin := t.TempDir()
	plugin := filepath.Join(bin, "reasonix-plugin-example")
	if runtime.GOOS == "windows" {
		plugin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", plugin, "../reasonix-plugin-example").CombinedOutput(); err != nil {
		t.Fatalf("build the example plugin: %v\n%s", err, out)
	}
	if strings.Contains(text, "https://api.deepseek.com") {
		t.Fatal("the sample was not pointed at the test server")
	}
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write(".env", "DEEPSEEK_API_KEY=sk-from-dotenv-0123\n")
	var env []string
	for _, kv := range e.env {
		if !strings.HasPrefix(kv, "REASONIX_BASE_URL=") && !strings.HasPrefix(kv, "REASONIX_MODEL=") && !strings.HasPrefix(kv, "REASONIX_API_KEY=") {
			env = append(env, kv)
		}
	}
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	e.env = append(env, "REASONIX_LANG=zh")
	r := e.run("", "run", "ship it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := e.srv.Received()
	if len(got) != 2 {
		t.Fatalf("requests = %d", len(got))
	}
	if h := got[0].Header.Get("Authorization"); h != "Bearer sk-from-dotenv-0123" {
		t.Errorf("Authorization %q: the key from .env was not used", h)
	}
	body := string(got[0].Body)
	for _, want := range []string{`"model":"deepseek-v4-flash"`, `You are Reasonix, a coding agent...`, `Answer the user in Chinese`, `"mcp__example__echo"`} {
		if !strings.Contains(body, want) {
			t.Errorf("first request lacks %q", want)
		}
	}
	if !strings.Contains(string(got[1].Body), "denied by rule Deny: Bash(git push*)") {
		t.Errorf("git push was not denied by the sample's rule:\n%s", messagesOf(t, got[1].Body))
	}
}

// The spec's other documented keys, through the binary: system_prompt_file
// (relative to its file), language and reasoning_language in the rules,
// [tools] enabled narrowing the tools offered, bash_timeout_seconds = 0,
// max_steps = 0 and planner_max_steps = 0 loading as no limit, and
// [permissions] mode = "deny" refusing a writer no rule covers, unasked.
func TestE2ESpecConfigKeysTakeEffect(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "touch made-by-bash"})}},
		scripted.Turn{Text: "refused"},
	)
	e.write("prompts/system.md", "SYSTEM-PROMPT-FROM-FILE: you are a careful agent.\n")
	e.write("reasonix.toml", `language = "zh"

[agent]
system_prompt_file = "prompts/system.md"
reasoning_language = "en"
max_steps = 0
planner_max_steps = 0

[tools]
enabled = ["read_file", "bash"]
bash_timeout_seconds = 0

[permissions]
mode = "deny"
`)
	r := e.run("", "run", "make a file")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	var first []struct{ Role, Content string }
	if err := json.Unmarshal(messagesOf(t, reqs[0]), &first); err != nil {
		t.Fatal(err)
	}
	sys := first[0].Content
	for _, want := range []string{"SYSTEM-PROMPT-FROM-FILE", "Answer the user in Chinese", "Write your visible reasoning in English"} {
		if first[0].Role != "system" || !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%.600s", want, sys)
		}
	}
	// task and goal_status are the orchestrator's, not built-in tools.
	names := toolNames(t, reqs[0])
	for _, n := range names {
		if n != "read_file" && n != "bash" && n != "task" && n != "goal_status" {
			t.Errorf("tool %s offered; [tools] enabled names read_file and bash: %v", n, names)
		}
	}
	if !hasName(names, "read_file") || !hasName(names, "bash") {
		t.Errorf("tools offered %v lack read_file or bash", names)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "made-by-bash")); err == nil {
		t.Error(`mode = "deny" let a writer run`)
	}
	if msgs := string(messagesOf(t, reqs[1])); !strings.Contains(msgs, "mode deny: no rule allows it") {
		t.Errorf("the model was not told the call was refused:\n%s", msgs)
	}
}
