//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSandboxRulesetAcrossCommands: the commands of one SandboxCommand
// share a ruleset, and each is judged against the disk as it is when it
// starts: a file created or replaced since the last command is readable,
// a denied path that appeared since is not.
func TestSandboxRulesetAcrossCommands(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	opts := SandboxOptions{}
	ws, outside := sandboxDirs(t, opts)
	secret, later := filepath.Join(outside, "keys"), filepath.Join(outside, "conf", "later")
	must(t, os.Mkdir(secret, 0o700))
	must(t, os.WriteFile(filepath.Join(secret, "id"), []byte("PRIVATE\n"), 0o600))
	// conf exists from the start, so the first ruleset grants it in full.
	must(t, os.Mkdir(filepath.Join(outside, "conf"), 0o755))
	opts.Workspace = ws
	opts.DenyRead = []string{secret, later}
	sb := SandboxCommand(opts)
	run := func(script string) (string, error) {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = ws
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := sb(cmd); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		return out.String(), err
	}
	// Past the racy window the listing of outside is trusted for reuse,
	// so the commands below rely on the changes being noticed.
	time.Sleep(racyWindow + 100*time.Millisecond)
	readme := filepath.Join(outside, "readme")
	if out, err := run("cat " + readme); err != nil || !strings.Contains(out, "readable") {
		t.Fatalf("first read: %v\n%s", err, out)
	}
	must(t, os.WriteFile(filepath.Join(outside, "new"), []byte("NEW\n"), 0o644))
	if out, err := run("cat " + filepath.Join(outside, "new")); err != nil || !strings.Contains(out, "NEW") {
		t.Errorf("a file created after the first command: %v\n%s", err, out)
	}
	must(t, os.Remove(readme))
	must(t, os.WriteFile(readme, []byte("REPLACED\n"), 0o644))
	if out, err := run("cat " + readme); err != nil || !strings.Contains(out, "REPLACED") {
		t.Errorf("a file replaced after the first command: %v\n%s", err, out)
	}
	must(t, os.Mkdir(later, 0o700))
	must(t, os.WriteFile(filepath.Join(later, "id"), []byte("LATER\n"), 0o600))
	if out, err := run("cat " + filepath.Join(later, "id")); err == nil || strings.Contains(out, "LATER") {
		t.Errorf("a denied path created after the first command was read: %s", out)
	}
	if out, err := run("cat " + filepath.Join(secret, "id")); err == nil || strings.Contains(out, "PRIVATE") {
		t.Errorf("the denied path was read: %s", out)
	}
}

// TestRulesetReused: while nothing it was built from changes, a
// confinement's ruleset is reused with the listings it trusts; a denied
// path appearing builds it again.
func TestRulesetReused(t *testing.T) {
	t.Parallel()
	abi := requireLandlock(t)
	opts := SandboxOptions{}
	ws, outside := sandboxDirs(t, opts)
	secret, later := filepath.Join(outside, "keys"), filepath.Join(outside, "later")
	must(t, os.Mkdir(secret, 0o700))
	time.Sleep(racyWindow + 100*time.Millisecond)
	opts.Workspace = ws
	rc := newRulesetCache()
	defer rc.close()
	c := confinement{write: WritablePaths(opts), denyRead: []string{secret, later}, rulesets: rc}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	fd, err := rc.ruleset(c, abi)
	if err != nil {
		t.Fatal(err)
	}
	key := rc.state.key
	if _, ok := rc.state.listed[outside]; !ok {
		t.Fatalf("the listing of %s (unchanged for over the racy window) is not kept: %v", outside, rc.state.listed)
	}
	if fd2, err := rc.ruleset(c, abi); err != nil || fd2 != fd || rc.state.key != key {
		t.Fatalf("second use: fd %d (was %d), %v; key changed: %v", fd2, fd, err, rc.state.key != key)
	}
	must(t, os.Mkdir(later, 0o700))
	if _, err := rc.ruleset(c, abi); err != nil {
		t.Fatal(err)
	}
	if rc.state.key == key {
		t.Fatal("a denied path that appeared did not rebuild the ruleset")
	}
}
