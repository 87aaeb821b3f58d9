package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestTUIAsksToTrustTheProject: a repository's reasonix.toml names its own
// model endpoint, and its .claude/settings.json allows a command.
// `reasonix` in a terminal asks before the session starts, naming each
// setting with its file, line and why. Not now (where the choice
// starts: Enter alone) keeps it held: the person's own provider answers,
// the repository's endpoint gets nothing, the notice says how to trust it
// later, and nothing is recorded. Trusting in the next run records the
// workspace and this very session talks to the project's endpoint; the run
// after that asks nothing.
func TestTUIAsksToTrustTheProject(t *testing.T) {
	t.Parallel()
	project := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{{Text: "from the project's endpoint"}, {Text: "the project again"}}})
	e := newE2E(t, scripted.Turn{Text: "from your own provider"})
	e.env = append(withoutEnv(e.env, "REASONIX_BASE_URL", "REASONIX_MODEL"), "RX_PERSONAL_KEY=sk-personal-51c0")
	e.writeUserConfig("default_model = \"mine/test-model\"\n[[providers]]\nname = \"mine\"\nbase_url = \"" + e.srv.URL() +
		"\"\napi_key_env = \"RX_PERSONAL_KEY\"\nmodel = \"test-model\"\n")
	e.write("reasonix.toml", "# the project's own endpoint\ndefault_model = \"proj/test-model\"\n\n[[providers]]\nname = \"proj\"\nbase_url = \""+
		project.URL()+"\"\napi_key_env = \"RX_PERSONAL_KEY\"\nmodel = \"test-model\"\n")
	e.write(".claude/settings.json", `{"permissions": {"allow": ["Bash(make:*)"]}}`)
	trusted := filepath.Join(e.home, "trusted-projects.json")

	// Not now.
	tt := startTerm(t, e, "Trust this project?")
	s := tt.waitFor("reasonix.toml:4: providers (model endpoints: the conversation and your API key would go there)",
		"reasonix.toml:2: default_model", `.claude/settings.json:1: permissions.allow "Bash(make:*)"`, "Trust this project", "Not now")
	if strings.Index(s, "reasonix.toml:2:") > strings.Index(s, "reasonix.toml:4:") {
		t.Errorf("the settings are not in the file's order:\n%s", s)
	}
	tt.keys("Enter")
	tt.waitFor("Enter sends", "once you trust it", "Read the files, then run")
	tt.typeLine("hello")
	tt.waitFor("from your own provider")
	if n := len(project.Requests()); n != 0 {
		t.Fatalf("not trusted, the project's endpoint got %d request(s)", n)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Fatalf("your own provider got %d request(s)", n)
	}
	tt.quit()
	if _, err := os.Stat(trusted); err == nil {
		b, _ := os.ReadFile(trusted)
		t.Fatalf("Not now recorded trust:\n%s", b)
	}

	// Trust this project: it applies to the session that follows.
	tt = startTerm(t, e, "Trust this project?")
	tt.keys("Up", "Enter")
	s = tt.waitFor("Enter sends")
	if strings.Contains(s, "once you trust it") {
		t.Errorf("the trusted session still says the settings are held:\n%s", s)
	}
	tt.typeLine("hello")
	tt.waitFor("from the project's endpoint")
	got := project.Received()
	if len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer sk-personal-51c0" {
		t.Fatalf("trusted, the project's endpoint got %d request(s)", len(got))
	}
	tt.quit()
	tt.waitFor("reasonix: trusted " + e.repo)
	if b, err := os.ReadFile(trusted); err != nil || !strings.Contains(string(b), e.repo) {
		t.Fatalf("trusted-projects.json (%v):\n%s", err, b)
	}

	// Trusted already: no question.
	tt = startTUI(t, e)
	s = tt.waitFor("Enter sends")
	if strings.Contains(s, "Trust this project") || strings.Contains(s, "once you trust it") {
		t.Errorf("a trusted project was asked about again:\n%s", s)
	}
	tt.typeLine("again")
	tt.waitFor("the project again")
	tt.quit()
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("your own provider got %d request(s) in all, want the first run's 1", n)
	}
}
