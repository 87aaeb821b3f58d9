package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// streamTurn sends one line over stream-json and answers the approval
// requests of bash calls with answer ("" when none is expected: one then
// fails the test); it returns the requests' commands once the turn ends.
func streamTurn(t *testing.T, e *e2e, line, answer string) []string {
	t.Helper()
	c := startStream(t, e)
	c.send(userLine(line))
	var asked []string
	for {
		m := c.await("an approval request or the turn's end", func(m map[string]any) bool {
			return m["type"] == "approval_request" || lineDone(m)
		})
		if lineDone(m) {
			break
		}
		asked = append(asked, fmt.Sprint(m["command"]))
		if answer == "" {
			t.Errorf("asked about %v, which a rule should allow", m["command"])
			answer = "deny"
		}
		c.send(map[string]any{"type": "approval", "id": m["id"], "decision": answer})
	}
	c.finish()
	return asked
}

// lastToolResult is the content of the last tool message the model got.
func lastToolResult(t *testing.T, e *e2e) string {
	t.Helper()
	reqs := e.srv.Requests()
	msgs := wireMessages(t, reqs[len(reqs)-1])
	if m := msgs[len(msgs)-1]; m.Role == "tool" {
		return m.Content
	}
	return ""
}

// A cloned repository's .claude/settings.json allows Bash(printf:*):
// until the person trusts the project, a printf the model asks for is put
// to the person (the notice, doctor and `reasonix trust` name the rule with its
// file and line); once trusted it runs unasked; when the repository
// changes its allow list, the person is asked again.
func TestE2EProjectAllowRulesWaitForTrust(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{bashCall("printf untrusted-hi")}}, scripted.Turn{Text: "one"},
		scripted.Turn{Text: "the notice's run"},
		scripted.Turn{ToolCalls: []scripted.Call{bashCall("printf trusted-hi")}}, scripted.Turn{Text: "two"},
		scripted.Turn{ToolCalls: []scripted.Call{bashCall("printf changed-hi")}}, scripted.Turn{Text: "three"},
	)
	settings := "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(printf:*)\"\n    ],\n    \"deny\": [\"Read(./secret.txt)\"]\n  }\n}\n"
	e.write(".claude/settings.json", settings)
	e.write("secret.txt", "s3cret\n")
	where := filepath.Join(e.repo, ".claude", "settings.json") + `:4: permissions.allow "Bash(printf:*)"`

	if asked := streamTurn(t, e, "say hi", "deny"); len(asked) != 1 || !strings.Contains(asked[0], "printf untrusted-hi") {
		t.Fatalf("untrusted: asked %q, want the printf", asked)
	}
	if got := lastToolResult(t, e); !strings.Contains(got, "denied by the user") {
		t.Errorf("the denied printf ran: %q", got)
	}
	d := e.run("", "doctor")
	if !strings.Contains(d.stdout, "trust:      NOT APPLIED") || !strings.Contains(d.stdout, where) ||
		!strings.Contains(d.stdout, "1 allow rule(s) NOT APPLIED until you trust the project") {
		t.Errorf("doctor does not name the held rule %q:\n%s", where, d.stdout)
	}
	// The project's deny rule applies untrusted: it only narrows.
	if !strings.Contains(d.stdout, "0 allow, 0 ask, 1 deny rule(s) merged") {
		t.Errorf("doctor: the deny rule is not merged:\n%s", d.stdout)
	}
	r := e.run("", "run", "--output-format", "stream-json", "hi")
	if !strings.Contains(r.stdout, `.claude/settings.json: permissions.allow \"Bash(printf:*)\"`) || !strings.Contains(r.stdout, "reasonix trust") {
		t.Errorf("the notice does not name the rule:\n%s", r.stdout)
	}

	tr := e.run("", "trust")
	if tr.code != 0 || !strings.Contains(tr.stdout, where) {
		t.Fatalf("trust: exit %d\n%s%s", tr.code, tr.stdout, tr.stderr)
	}
	if asked := streamTurn(t, e, "say hi", ""); len(asked) != 0 {
		t.Fatalf("trusted: asked %q", asked)
	}
	if got := lastToolResult(t, e); !strings.Contains(got, "trusted-hi") {
		t.Errorf("trusted: the printf did not run: %q", got)
	}

	// The repository widens its allow list: the trust was not about the
	// new rule, which waits alone; the rule trusted before stays applied
	// (Claude Code appends a rule at every "always allow" answered there).
	e.write(".claude/settings.json", strings.Replace(settings, `"Bash(printf:*)"`, `"Bash(printf:*)", "WebFetch"`, 1))
	if asked := streamTurn(t, e, "say hi", "deny"); len(asked) != 0 {
		t.Fatalf("changed: the trusted rule no longer applies, asked %q", asked)
	}
	if got := lastToolResult(t, e); !strings.Contains(got, "changed-hi") {
		t.Errorf("changed: the printf did not run: %q", got)
	}
	if d := e.run("", "doctor"); !strings.Contains(d.stdout, `permissions.allow "WebFetch"`) ||
		!strings.Contains(d.stdout, "1 allow rule(s) NOT APPLIED") || strings.Contains(d.stdout, where) {
		t.Errorf("doctor does not name the new rule alone as held:\n%s", d.stdout)
	}
}

// The person's own "always allow" answer, which Reasonix writes into the
// project's reasonix.toml, is theirs: in an untrusted project it applies
// at the next start (the repository's own allow rule still waits), and in
// a trusted project it leaves the trust standing.
func TestE2EAlwaysAllowAnswerNeedsNoTrust(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{bashCall("printf hello")}}, scripted.Turn{Text: "one"},
		scripted.Turn{ToolCalls: []scripted.Call{bashCall("printf hello")}}, scripted.Turn{Text: "two"},
		scripted.Turn{ToolCalls: []scripted.Call{bashCall("wc -c reasonix.toml")}}, scripted.Turn{Text: "three"},
		scripted.Turn{ToolCalls: []scripted.Call{bashCall("wc -l reasonix.toml"), bashCall("printf hello")}}, scripted.Turn{Text: "four"},
	)
	e.write(".claude/settings.json", `{"permissions": {"allow": ["Bash(npm test:*)"]}}`)

	if asked := streamTurn(t, e, "say first", "allow_always"); len(asked) != 1 {
		t.Fatalf("untrusted: asked %q, want the printf", asked)
	}
	if cfg := e.read("reasonix.toml"); !strings.Contains(cfg, `"Bash(printf hello:*)"`) {
		t.Fatalf("the answer was not saved:\n%s", cfg)
	}
	if asked := streamTurn(t, e, "say second", ""); len(asked) != 0 {
		t.Fatalf("untrusted, the next start: asked %q", asked)
	}
	if got := lastToolResult(t, e); !strings.HasPrefix(got, "hello\n") {
		t.Errorf("the always-allowed printf did not run: %q", got)
	}
	// The repository's own rule still waits for trust.
	if d := e.run("", "doctor"); !strings.Contains(d.stdout, `permissions.allow "Bash(npm test:*)"`) || strings.Contains(d.stdout, `reasonix.toml:`) {
		t.Errorf("doctor:\n%s", d.stdout)
	}

	if tr := e.run("", "trust"); tr.code != 0 {
		t.Fatalf("trust: %s%s", tr.stdout, tr.stderr)
	}
	if asked := streamTurn(t, e, "print", "allow_always"); len(asked) != 1 || !strings.Contains(asked[0], "wc -c") {
		t.Fatalf("trusted: asked %q, want the wc", asked)
	}
	if asked := streamTurn(t, e, "print again", ""); len(asked) != 0 {
		t.Fatalf("trusted, the next start: asked %q", asked)
	}
	d := e.run("", "doctor")
	if strings.Contains(d.stdout, "NOT APPLIED") {
		t.Errorf("the answer broke the trust:\n%s", d.stdout)
	}
	if b, err := os.ReadFile(filepath.Join(e.home, "trusted-projects.json")); err != nil || !strings.Contains(string(b), `"allowed"`) {
		t.Errorf("trust store: %v\n%s", err, b)
	}
}
