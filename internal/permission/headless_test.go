package permission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

// TestGateHeadlessTable is what a run with no person allows in each
// posture: reads, posture-decided writes and commands run; explicit ask
// rules (except in yolo), dangerous commands, control files and deny rules
// are refused, and the model is told why.
func TestGateHeadlessTable(t *testing.T) {
	f := newFixture(t)
	type hc struct {
		name string
		tool fakeTool
		args json.RawMessage
		// allow per posture: ask, auto, yolo.
		allow [3]bool
		// msg is in the refusal, in every posture that refuses.
		msg string
	}
	const askRefusal = "blocked: rule Ask: Bash(git push:*) needs a person and no one can answer in this run"
	cases := []hc{
		{"read", readTool, pathArgs("main.go"), [3]bool{true, true, true}, ""},
		{"posture write", writeTool, pathArgs("src/new.go"), [3]bool{true, true, true}, ""},
		{"posture command", bashTool, bashArgs("npm install"), [3]bool{true, true, true}, ""},
		{"allow rule", bashTool, bashArgs("go test ./..."), [3]bool{true, true, true}, ""},
		{"ask rule command", bashTool, bashArgs("git push origin main"), [3]bool{false, false, true},
			askRefusal + `; bash "git push origin main" was not run.`},
		{"ask rule in a compound line", bashTool, bashArgs("git status && git push"), [3]bool{false, false, true}, askRefusal},
		{"ask rule wrapped", bashTool, bashArgs("env GIT_TRACE=1 git push"), [3]bool{false, false, true}, askRefusal},
		{"ask rule on a path", writeTool, pathArgs("docs/secret/plan.md"), [3]bool{false, false, true},
			`blocked: rule Ask: Edit(docs/secret/**) needs a person and no one can answer in this run; write_file "docs/secret/plan.md" was not run.`},
		{"dangerous command", bashTool, bashArgs("rm -rf src"), [3]bool{false, false, false}, "is a dangerous command"},
		{"dangerous over an ask rule", bashTool, bashArgs("git push --force"), [3]bool{false, false, false}, "is a dangerous command"},
		{"control file", writeTool, pathArgs("reasonix.toml"), [3]bool{false, false, false}, "needs human approval"},
		{"control file by bash", bashTool, bashArgs("echo 'mode = \"yolo\"' >> reasonix.toml"), [3]bool{false, false, false}, "needs human approval"},
		{"deny rule", bashTool, bashArgs("curl -s x"), [3]bool{false, false, false}, "denied by rule Deny: Bash(curl:*)"},
	}
	for i, mode := range []string{"ask", "auto", "yolo"} {
		p, err := ParsePolicy(mode, []string{"Bash(go test:*)"}, []string{"Bash(git push:*)", "Edit(docs/secret/**)"}, []string{"Bash(curl:*)"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := NewGate(GateOptions{Policy: p, Workspace: f.ws, Home: f.home})
		for _, tc := range cases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				v := g.Authorize(context.Background(), tools.Invocation{Session: "s", Tool: tc.tool, Args: tc.args})
				if v.Allow != tc.allow[i] {
					t.Fatalf("allow = %v, want %v (%s)", v.Allow, tc.allow[i], v.Message)
				}
				if !v.Allow && !strings.Contains(v.Message, tc.msg) {
					t.Errorf("message %q, want it to contain %q", v.Message, tc.msg)
				}
			})
		}
	}
}
