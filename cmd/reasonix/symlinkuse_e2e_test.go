//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// Symlinks a repository keeps for itself still work with the file tools,
// which refuse to follow a link anywhere on a path they open: CLAUDE.md
// as a link to AGENTS.md (common where both tools are used), a folder
// linked inside the workspace, and a workspace reached through a linked
// path. The tools resolve the path first and open what it names.
func TestE2EFileToolsFollowTheWorkspacesOwnSymlinks(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("read_file", map[string]any{"path": "CLAUDE.md"}),
			call("read_file", map[string]any{"path": "docs/guide.md"}),
			call("edit_file", map[string]any{"path": "docs/guide.md", "old_string": "old line", "new_string": "new line"}),
			call("grep", map[string]any{"pattern": "agent rules"}),
		}},
		scripted.Turn{Text: "done"},
	)
	e.write("AGENTS.md", "agent rules here\n")
	e.write("shared/docs/guide.md", "old line\n")
	for link, target := range map[string]string{"CLAUDE.md": "AGENTS.md", "docs": "shared/docs"} {
		if err := os.Symlink(target, filepath.Join(e.repo, link)); err != nil {
			t.Fatal(err)
		}
	}
	// The workspace itself is reached through a link.
	via := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(e.repo, via); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "run", "--yolo", "go")
	cmd.Dir, cmd.Env = via, e.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	res := toolResults(t, e.srv.Requests()[1])
	if !strings.Contains(res["call_0_0"], "agent rules here") {
		t.Errorf("read_file CLAUDE.md (a link to AGENTS.md): %s", res["call_0_0"])
	}
	if !strings.Contains(res["call_0_1"], "old line") {
		t.Errorf("read_file through a linked folder: %s", res["call_0_1"])
	}
	if b, _ := os.ReadFile(filepath.Join(e.repo, "shared", "docs", "guide.md")); string(b) != "new line\n" {
		t.Errorf("edit_file through a linked folder left %q: %s", b, res["call_0_2"])
	}
	if !strings.Contains(res["call_0_3"], "AGENTS.md") {
		t.Errorf("grep: %s", res["call_0_3"])
	}
}
