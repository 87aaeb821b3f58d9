//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EEditDenyRulesHoldAgainstCommands: a Claude Code settings file
// denies Edit(./locked.txt) and Edit(./conf/**). The commands below name
// neither path in a way the gate can read (the names are put together at
// run time), so only the sandbox stands between them and the files:
// python3 writing, a shell redirect, mv over the file, rm of it, sed -i
// (which renames a new file over it), a hard link to it, and
// writes, removals and a rename in and of the folder. Every one must
// fail, the files must be unchanged on disk, and a write elsewhere in the
// workspace must still work. A person allows every command asked about.
func TestE2EEditDenyRulesHoldAgainstCommands(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	needPython(t)
	cmds := []string{
		`f=lock; python3 -c "open('${f}ed.txt','w').write('pwned')"`,
		`f=lock; sh -c "echo x > ${f}ed.txt"`,
		`f=lock; mv other.txt ${f}ed.txt`,
		`f=lock; rm -f ${f}ed.txt`,
		`f=lock; sed -i s/original/pwned/ ${f}ed.txt`,
		`f=lock; ln ${f}ed.txt hard.txt`,
		`d=con; echo x > ${d}f/a.yml`,
		`d=con; echo y > ${d}f/new.yml`,
		`d=con; rm -f ${d}f/a.yml`,
		`d=con; mv ${d}f ${d}f2`,
		`echo fine > free.txt && mkdir -p sub && echo ok > sub/x.txt && mv sub/x.txt sub/y.txt`,
	}
	var turns []scripted.Turn
	for _, c := range cmds {
		turns = append(turns, scripted.Turn{ToolCalls: []scripted.Call{bashCall(c)}})
	}
	turns = append(turns, scripted.Turn{Text: "done"})
	e := newE2E(t, turns...)
	e.write(".claude/settings.json", `{"permissions": {"deny": ["Edit(./locked.txt)", "Edit(./conf/**)"]}}`)
	e.write("locked.txt", "original\n")
	e.write("other.txt", "other\n")
	e.write("conf/a.yml", "a: 1\n")
	if d := e.run("", "doctor"); !strings.Contains(d.stdout, "mounted read-only (a mount namespace") {
		t.Skipf("the sandbox cannot mount files read-only here:\n%s", d.stdout)
	}

	// A person allows each command the gate asks about (mv, rm and sh
	// are dangerous): a hasty yes must not reach past a deny rule either.
	c := startStream(t, e, "--yolo")
	c.send(userLine("tidy up"))
	asked := 0
	for {
		m := c.await("a question or the turn's end", func(m map[string]any) bool {
			return m["type"] == "approval_request" || turnDone(m)
		})
		if m["type"] != "approval_request" {
			break
		}
		asked++
		c.send(map[string]any{"type": "approval", "id": m["id"], "decision": "allow"})
	}
	c.stdin.Close()
	for range c.lines {
	}
	if err := <-c.exit; err != nil {
		t.Fatalf("exit: %v", err)
	}
	t.Logf("%d commands were asked about and allowed", asked)
	reqs := e.srv.Requests()
	results := toolResults(t, reqs[len(reqs)-1])
	if got := e.read("locked.txt"); got != "original\n" {
		t.Errorf("locked.txt = %q on disk, want it unchanged", got)
	}
	if got := e.read("other.txt"); got != "other\n" {
		t.Errorf("other.txt = %q, want it left where it was", got)
	}
	if got := e.read("conf/a.yml"); got != "a: 1\n" {
		t.Errorf("conf/a.yml = %q, want it unchanged", got)
	}
	for _, p := range []string{"conf/new.yml", "conf2", "hard.txt"} {
		if _, err := os.Lstat(filepath.Join(e.repo, p)); err == nil {
			t.Errorf("%s was made", p)
		}
	}
	// What the kernel said, as the model saw it: read-only, or busy for
	// the mount point itself.
	for i := range cmds[:len(cmds)-1] {
		out := results[fmt.Sprintf("call_%d_0", i)]
		t.Logf("%s: %s", cmds[i], out)
		if !strings.Contains(out, "Read-only file system") && !strings.Contains(out, "busy") && !strings.Contains(out, "cross-device") {
			t.Errorf("command %q did not fail as a read-only file would: %q", cmds[i], out)
		}
	}
	if got := e.read("free.txt"); got != "fine\n" {
		t.Errorf("free.txt = %q: a write elsewhere in the workspace failed (%s)", got, results["call_10_0"])
	}
	if got := e.read("sub/y.txt"); got != "ok\n" {
		t.Errorf("sub/y.txt = %q", got)
	}
}
