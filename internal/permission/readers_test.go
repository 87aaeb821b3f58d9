package permission

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

// TestReadDenyRedirectionAndRecursion: a Read(./.env) deny (any depth, so
// found by walking) stops cat < .env outright and makes recursive readers
// of a folder holding a .env ask, in every posture and whatever allow
// rules say; a folder without one, or rg (which skips hidden files unless
// told otherwise), runs as before.
func TestReadDenyRedirectionAndRecursion(t *testing.T) {
	ws := t.TempDir()
	for p, c := range map[string]string{"app/.env": "K=1", "app/main.go": "package main", "src/x.go": "package x", "README": "r"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(ws, p), []byte(c), 0o644))
	}
	allow := []string{"Bash(cat:*)", "Bash(grep:*)", "Bash(rg:*)", "Bash(tar:*)", "Bash(find:*)", "Bash(cp:*)"}
	for _, mode := range []string{"ask", "auto", "yolo"} {
		p, err := ParsePolicy(mode, allow, nil, []string{"Read(./.env)"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Workspace = ws
		for _, c := range []struct {
			line string
			want Decision
			why  string
		}{
			{"cat < app/.env", Deny, "the command reads < app/.env"},
			{"cat <app/.env", Deny, ""},
			{"cat 0< ./app/.env", Deny, ""},
			{"cd app && cat < .env", Deny, ""},
			{"cat <<< app/.env", Allow, ""}, // a here-string is text, not a file
			{"grep -r KEY .", Ask, "grep reads every file beneath ., including app/.env, which rule Deny: Read(./.env) covers"},
			{"grep -rl KEY app", Ask, "including app/.env"},
			{"grep -r KEY src", Allow, ""},
			{"grep KEY README", Allow, ""},
			{"rg KEY", Allow, ""},
			{"rg --hidden KEY", Ask, "rg reads every file beneath ."},
			{"rg -uu KEY app", Ask, ""},
			{"find app -name '*.go' -exec cat {} +", Ask, "find reads every file beneath app"},
			{"find app -name '*.go'", Allow, ""},
			{"tar czf out.tgz .", Ask, "tar reads every file beneath ."},
			{"tar czf out.tgz src", Allow, ""},
			{"cp -r app backup", Ask, "cp reads every file beneath app"},
		} {
			out := p.Explain("bash", false, tools.Access{Kind: tools.KindExecute, Command: c.line})
			if out.Decision != c.want {
				t.Errorf("%s: %q = %v (%s), want %v", mode, c.line, out.Decision, out.Reason, c.want)
				continue
			}
			if c.why != "" && !strings.Contains(out.Reason, c.why) {
				t.Errorf("%s: %q reason %q, want %q in it", mode, c.line, out.Reason, c.why)
			}
			if c.want == Ask && (out.Person == "" || len(out.Suggest) != 0 || len(out.Dangerous) != 0) {
				t.Errorf("%s: %q: person %q suggest %v dangerous %v: want a person, no standing grant", mode, c.line, out.Person, out.Suggest, out.Dangerous)
			}
		}
	}
}

// TestReadDenyWalkIsBounded: a folder too large to walk asks rather than
// guessing.
func TestReadDenyWalkIsBounded(t *testing.T) {
	old := maxReaderWalk
	maxReaderWalk = 50
	t.Cleanup(func() { maxReaderWalk = old })
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, "big"), 0o755))
	for i := 0; i <= 60; i++ {
		must(t, os.WriteFile(filepath.Join(ws, "big", "f"+strconv.Itoa(i)), nil, 0o644))
	}
	p, _ := ParsePolicy("ask", []string{"Bash(grep:*)"}, nil, []string{"Read(./.env)"}, nil)
	p.Workspace = ws
	out := p.Explain("bash", false, tools.Access{Kind: tools.KindExecute, Command: "grep -r KEY big"})
	if out.Decision != Ask || !strings.Contains(out.Reason, "too many to check") {
		t.Errorf("%v %s", out.Decision, out.Reason)
	}
}

func TestStaticBase(t *testing.T) {
	for pat, want := range map[string]string{"secrets/**": "secrets", "**/.env": "", "/home/u/.ssh/**": "/home/u/.ssh",
		"a/b/*.pem": "a/b", "/x/y": "/x/y", "/**/k": "/"} {
		if got := filepath.ToSlash(staticBase(pat)); got != want {
			t.Errorf("staticBase(%q) = %q, want %q", pat, got, want)
		}
	}
}

// Read deny rules that name one absolute path or a whole absolute folder
// outside every writable tree join the sandbox's list; the rest (globs,
// workspace-relative rules, paths a writable tree covers) stay the
// gate's.
func TestReadRuleDenies(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	paths, gateOnly := ReadRuleDenies([]string{
		"Read(~/secrets/prod.key)",
		"Read(~/.config/gh/**)",
		"Read(/etc/app/**)",
		"Read(/etc/app/**)", // twice: listed once
		"Read(./.env)",
		"Read(**/*.pem)",
		"Read(/srv/*/key)",
		"Read(/home/u/ws/keys/**)", // inside the writable workspace
		"Read(/home/**)",           // holds the workspace
		"Read(/**)",                // everything
		"Bash(cat:*)",              // not a Read rule
		"Edit(/etc/hosts)",         // not a Read rule
		"Read(not a [glob)",        // does not parse: ParsePolicy's to report
	}, []string{"/home/u/ws", "/tmp/run"})
	want := []string{"/home/u/secrets/prod.key", "/home/u/.config/gh", "/etc/app"}
	if !slices.Equal(paths, want) {
		t.Errorf("paths = %q, want %q", paths, want)
	}
	wantGate := []string{"Read(./.env)", "Read(**/*.pem)", "Read(/srv/*/key)", "Read(/home/u/ws/keys/**)", "Read(/home/**)", "Read(/**)"}
	if !slices.Equal(gateOnly, wantGate) {
		t.Errorf("gateOnly = %q, want %q", gateOnly, wantGate)
	}
}

// A recursive reader of a folder whose denied files the sandbox hides
// from commands (Policy.Hidden) runs without asking; one that also holds
// a denied file the sandbox does not hide still asks; naming the hidden
// file is still refused.
func TestRecursiveReaderOfHiddenFilesRuns(t *testing.T) {
	ws := t.TempDir()
	for _, p := range []string{"app/.env", "app/main.go", "other/.env"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(ws, p), []byte("x"), 0o644))
	}
	p, err := ParsePolicy("auto", []string{"Bash(grep:*)", "Bash(cat:*)"}, nil, []string{"Read(./.env)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Workspace = ws
	asked := 0
	p.Hidden = func(w string) []string {
		asked++
		if w != ws {
			t.Errorf("asked what is hidden in %s, want %s", w, ws)
		}
		return []string{filepath.Join(ws, "app", ".env")}
	}
	for line, want := range map[string]Decision{
		"grep -r KEY app": Allow,
		"grep -r KEY .":   Ask, // other/.env is not hidden
		"cat app/.env":    Deny,
		"grep -r KEY src": Allow,
	} {
		if out := p.Explain("bash", false, tools.Access{Kind: tools.KindExecute, Command: line}); out.Decision != want {
			t.Errorf("%q = %v (%s), want %v", line, out.Decision, out.Reason, want)
		}
	}
	if asked == 0 {
		t.Error("Hidden was never consulted")
	}
}
