package permission

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/tools"
	_ "github.com/reasonix/reasonix/tools/builtin"
)

// redteamRules are the rules every corpus case runs under: the prefix
// rules people commonly write, two ask rules and a few deny rules.
var redteamRules = struct{ allow, ask, deny []string }{
	allow: []string{
		"Bash(rg:*)", "Bash(sed:*)", "Bash(tar:*)", "Bash(sort:*)", "Bash(git diff:*)", "Bash(git log:*)",
		"Bash(git show:*)", "Bash(less:*)", "Bash(awk:*)", "Bash(cat:*)", "Bash(ls:*)", "Bash(grep:*)",
		"Bash(find:*)", "Bash(echo:*)", "Bash(make:*)", "Bash(go test:*)", "Bash(man:*)", "Bash(split:*)",
		"Bash(zip:*)", "Bash(rsync:*)", "Bash(ssh:*)", "Bash(fd:*)", "Bash(git fetch:*)", "Bash(git rebase:*)",
		"Bash(git grep:*)", "Bash(git format-patch:*)", "Bash(wget:*)", "Bash(vim:*)", "Bash(head:*)",
		"Bash(xargs:*)", "Bash(git clone:*)", "Bash(git archive:*)", "Bash(git difftool:*)",
		"Bash(git submodule:*)", "Bash(git bisect:*)", "Bash(scp:*)", "Edit(docs/**)",
	},
	ask:  []string{"Bash(git push:*)", "Bash(npm publish:*)", "Edit(docs/secret/**)"},
	deny: []string{"Bash(curl:*)", "Read(secrets/**)", "Edit(**/*.env)"},
}

type redteamCase struct {
	line         int
	mode, expect string
	tool         string
	args         json.RawMessage
	text         string
}

func loadRedteam(t *testing.T) []redteamCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "redteam.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []redteamCase
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, " ", 4)
		if len(fields) != 4 {
			t.Fatalf("testdata/redteam.txt:%d: want <mode> <expect> <tool> <payload>", n)
		}
		c := redteamCase{line: n, mode: fields[0], expect: fields[1], tool: fields[2], text: fields[3]}
		switch c.expect {
		case "allow", "ask", "askrule", "person", "danger", "deny", "refuse":
		default:
			t.Fatalf("testdata/redteam.txt:%d: unknown expectation %q", n, c.expect)
		}
		if c.tool == "bash" {
			c.args = bashArgs(c.text)
		} else {
			if !json.Valid([]byte(c.text)) {
				t.Fatalf("testdata/redteam.txt:%d: arguments are not JSON", n)
			}
			c.args = json.RawMessage(c.text)
		}
		modes := []string{c.mode}
		if c.mode == "*" {
			modes = []string{"ask", "auto", "yolo"}
		}
		for _, m := range modes {
			cc := c
			cc.mode = m
			out = append(out, cc)
		}
	}
	return out
}

// refuser says no to everything and counts the questions.
type refuser struct{ ScriptedApprover }

// TestRedTeamCorpus runs every case of testdata/redteam.txt through the
// gate, with the real tools' descriptions and path confinement: once with
// a person (who refuses everything, so only whether they were asked is
// seen) and once headless.
func TestRedTeamCorpus(t *testing.T) {
	f := newFixture(t)
	t.Setenv("HOME", f.root)
	home := filepath.Join(f.root, ".reasonix")
	tmp := filepath.Join(f.root, "tmp-run")
	for _, d := range []string{".git/hooks", ".reasonix/agents", ".claude", "secrets", "docs/secret", "src"} {
		must(t, os.MkdirAll(filepath.Join(f.ws, d), 0o755))
	}
	must(t, os.MkdirAll(filepath.Join(home, "agents"), 0o755))
	must(t, os.MkdirAll(tmp, 0o700))
	for p, c := range map[string]string{
		"reasonix.toml": "[permissions]\n", ".mcp.json": "{}", ".git/config": "[core]\n",
		".reasonix/agents/helper.md": "x", ".claude/settings.json": "{}", "secrets/key.pem": "k",
		"docs/secret/plan.md": "a", "src/x.go": "package x\n",
	} {
		must(t, os.WriteFile(filepath.Join(f.ws, p), []byte(c), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte("x"), 0o644))
	must(t, os.Link(filepath.Join(f.outside, "secret"), filepath.Join(f.ws, "hard.txt")))
	conf, err := NewConfiner(f.ws, nil, nil, home)
	if err != nil {
		t.Fatal(err)
	}
	env := &tools.Env{Root: f.ws, Guard: conf}

	cases := loadRedteam(t)
	if len(cases) < 300 {
		t.Fatalf("corpus has %d cases, want at least 300", len(cases))
	}
	classes := map[string]int{}
	for _, c := range cases {
		classes[c.expect]++
	}
	t.Logf("%d cases: %v", len(cases), classes)

	gates := map[string][2]*Gate{}
	approvers := map[string]*refuser{}
	for _, m := range []string{"ask", "auto", "yolo"} {
		p, err := ParsePolicy(m, redteamRules.allow, redteamRules.ask, redteamRules.deny, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Workspace, p.Home, p.TempDir = f.ws, home, tmp
		ap := &refuser{}
		ap.Func = func(Request) Answer { return DenyAnswer }
		approvers[m] = ap
		gates[m] = [2]*Gate{
			NewGate(GateOptions{Policy: p, Approver: ap, Workspace: f.ws, Home: home}),
			NewGate(GateOptions{Policy: p, Workspace: f.ws, Home: home}),
		}
	}
	ctx := context.Background()
	for _, c := range cases {
		name := c.mode + "/" + c.tool + " " + c.text
		t.Run(name, func(t *testing.T) {
			tool, ok := tools.Builtin(c.tool)
			if !ok {
				t.Fatalf("line %d: no tool %q", c.line, c.tool)
			}
			inv := tools.Invocation{Session: "s", Role: "executor", Tool: tool, Args: c.args, Env: env}
			ap := approvers[c.mode]
			before := len(ap.Requests())
			v := gates[c.mode][0].Authorize(ctx, inv)
			asked := len(ap.Requests()) > before
			h := gates[c.mode][1].Authorize(ctx, inv)
			wantAsked := c.expect == "ask" || c.expect == "askrule" || c.expect == "person" || c.expect == "danger"
			wantHeadless := c.expect == "allow" || c.expect == "ask"
			if asked != wantAsked || (c.expect == "allow") != v.Allow {
				t.Errorf("line %d: with a person: asked=%v allowed=%v, want %s (%s)", c.line, asked, v.Allow, c.expect, v.Message)
			}
			if h.Allow != wantHeadless {
				t.Errorf("line %d: headless: allowed=%v, want %s (%s)", c.line, h.Allow, c.expect, h.Message)
			}
			if asked && c.expect == "danger" {
				req := ap.Requests()[len(ap.Requests())-1]
				if !req.Dangerous {
					t.Errorf("line %d: asked, but not as dangerous", c.line)
				}
			}
		})
	}
}
