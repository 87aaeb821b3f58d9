//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSandboxRulesetAcrossCommands: the commands of one Sandbox
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
	sb := NewSandbox(opts).Start
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

	// A sibling granted by an earlier command, renamed onto a denied path
	// (one that did not exist, then one that did): the same file, already
	// granted, is now a denied path and must not be readable.
	moved := filepath.Join(outside, "moved")
	must(t, os.WriteFile(moved, []byte("MOVED\n"), 0o644))
	if out, err := run("cat " + moved); err != nil || !strings.Contains(out, "MOVED") {
		t.Fatalf("a sibling: %v\n%s", err, out)
	}
	must(t, os.RemoveAll(later))
	must(t, os.Rename(moved, later))
	if out, err := run("cat " + later); err == nil || strings.Contains(out, "MOVED") {
		t.Errorf("a granted sibling renamed onto a denied path that did not exist was read: %s", out)
	}
	must(t, os.WriteFile(moved, []byte("MOVED2\n"), 0o644))
	if out, err := run("cat " + moved); err != nil || !strings.Contains(out, "MOVED2") {
		t.Fatalf("a second sibling: %v\n%s", err, out)
	}
	must(t, os.RemoveAll(secret))
	must(t, os.Rename(moved, secret))
	if out, err := run("cat " + secret); err == nil || strings.Contains(out, "MOVED2") {
		t.Errorf("a granted sibling renamed onto an existing denied path was read: %s", out)
	}
}

// TestSandboxGrantedInodeNotReused: a file granted by one command and then
// removed cannot lend its inode number, and with it its rule, to a file
// created in a denied directory: the ruleset holds the inode until it is
// closed. (On file systems that hand out fresh numbers, such as tmpfs,
// this holds trivially.)
func TestSandboxGrantedInodeNotReused(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	opts := SandboxOptions{}
	ws, outside := sandboxDirs(t, opts)
	secret := filepath.Join(outside, "keys")
	must(t, os.Mkdir(secret, 0o700))
	opts.Workspace = ws
	opts.DenyRead = []string{secret}
	sb := NewSandbox(opts).Start
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
	sibling := filepath.Join(outside, "sibling")
	must(t, os.WriteFile(sibling, []byte("SIBLING\n"), 0o644))
	if out, err := run("cat " + sibling); err != nil || !strings.Contains(out, "SIBLING") {
		t.Fatalf("sibling: %v\n%s", err, out)
	}
	var st syscall.Stat_t
	must(t, syscall.Stat(sibling, &st))
	must(t, os.Remove(sibling))
	for i := range 20 {
		p := filepath.Join(secret, fmt.Sprintf("id%d", i))
		must(t, os.WriteFile(p, []byte("PRIVATE\n"), 0o600))
		var ps syscall.Stat_t
		must(t, syscall.Stat(p, &ps))
		if ps.Ino == st.Ino {
			t.Errorf("%s took the removed sibling's inode %d", p, st.Ino)
		}
	}
	if out, err := run("cat " + filepath.Join(secret, "*")); err == nil || strings.Contains(out, "PRIVATE") {
		t.Errorf("a file in the denied directory was read: %s", out)
	}
}

// TestRulesetGrantsOnlyWhatChanged: a directory on the way to a denied
// path that changed is listed again, but only its new entries, and those
// now another file under the same name, get a rule; names gone are
// forgotten.
func TestRulesetGrantsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	abi := requireLandlock(t)
	opts := SandboxOptions{}
	ws, outside := sandboxDirs(t, opts)
	secret := filepath.Join(outside, "keys")
	must(t, os.Mkdir(secret, 0o700))
	for i := range 30 {
		must(t, os.WriteFile(filepath.Join(outside, fmt.Sprintf("f%d", i)), nil, 0o644))
	}
	opts.Workspace = ws
	rc := newRulesetCache()
	defer rc.close()
	c := confinement{write: WritablePaths(opts), denyRead: []string{secret}, rulesets: rc}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, err := rc.ruleset(c, abi); err != nil {
		t.Fatal(err)
	}
	g := rc.state.listed[outside]
	if g == nil || len(g.granted) != 31 { // f0..f29 and readme; keys is denied
		t.Fatalf("first listing of %s granted %v, want 31 entries", outside, g)
	}
	oldReadme := g.ino("readme")
	must(t, os.Remove(filepath.Join(outside, "f0")))
	must(t, os.Remove(filepath.Join(outside, "readme")))
	must(t, os.WriteFile(filepath.Join(outside, "readme"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "new"), nil, 0o644))
	before := rc.state.added
	if _, err := rc.ruleset(c, abi); err != nil {
		t.Fatal(err)
	}
	g = rc.state.listed[outside]
	if _, ok := g.granted["f0"]; ok {
		t.Error("a removed entry is still listed as granted")
	}
	var st syscall.Stat_t
	must(t, syscall.Stat(filepath.Join(outside, "readme"), &st))
	if g.ino("readme") != st.Ino || st.Ino == oldReadme {
		t.Errorf("readme replaced: granted as inode %d, now %d (was %d)", g.ino("readme"), st.Ino, oldReadme)
	}
	if g.ino("new") == 0 {
		t.Error("a new entry was not granted")
	}
	// Other directories on the way (the temp dir's parents) may have
	// changed too; outside alone would need 2 new rules, not 31.
	if n := rc.state.added - before; n < 2 || n >= 31 {
		t.Errorf("%d rules added for 2 changed entries of %s", n, outside)
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
	if g := rc.state.listed[outside]; g == nil || !g.trusted {
		t.Fatalf("the listing of %s (unchanged for over the racy window) is not trusted: %+v", outside, g)
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

// TestRulesetRebuiltWhenMostlyStale: rules for entries since removed pile
// up in a busy directory (each holds its inode, and a removed file's disk
// space); once they outnumber the live ones the ruleset is built afresh.
func TestRulesetRebuiltWhenMostlyStale(t *testing.T) {
	t.Parallel()
	abi := requireLandlock(t)
	opts := SandboxOptions{}
	ws, outside := sandboxDirs(t, opts)
	secret := filepath.Join(outside, "keys")
	must(t, os.Mkdir(secret, 0o700))
	opts.Workspace = ws
	rc := newRulesetCache()
	defer rc.close()
	c := confinement{write: WritablePaths(opts), denyRead: []string{secret}, rulesets: rc}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, err := rc.ruleset(c, abi); err != nil {
		t.Fatal(err)
	}
	rebuilt, added := false, rc.state.added
	for round := range 12 {
		// 100 short-lived files a round: each listing grants them anew.
		for i := range 100 {
			must(t, os.WriteFile(filepath.Join(outside, fmt.Sprintf("tmp%d-%d", round, i)), nil, 0o644))
		}
		if _, err := rc.ruleset(c, abi); err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			must(t, os.Remove(filepath.Join(outside, fmt.Sprintf("tmp%d-%d", round, i))))
		}
		if rc.state.added < added { // counted afresh: built again
			rebuilt = true
		}
		added = rc.state.added
		live := 0
		for _, g := range rc.state.listed {
			live += len(g.granted)
		}
		if rc.state.added > 2*live+staleSlack+200 {
			t.Fatalf("round %d: %d entry rules for %d live entries", round, rc.state.added, live)
		}
	}
	if !rebuilt {
		t.Error("1200 rules for removed files never rebuilt the ruleset")
	}
	if out, err := runWith(t, NewSandbox(SandboxOptions{Workspace: ws, DenyRead: []string{secret}}).Start, ws, "cat "+filepath.Join(outside, "readme")); err != nil || !strings.Contains(out, "readable") {
		t.Errorf("after rebuilds: %v\n%s", err, out)
	}
}

// runWith runs script through sb in dir.
func runWith(t *testing.T, sb func(*exec.Cmd) error, dir, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sb(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	return out.String(), err
}

// ino is the inode number name was granted as, 0 when it was not.
func (g *dirGrants) ino(name string) uint64 {
	if e := g.granted[name]; e != nil {
		return e.ino
	}
	return 0
}

// TestSandboxPrepare: Prepare builds the ruleset a command then starts
// with (the same one, not built again), and a command started after it is
// judged against the disk as it is then: a denied path that appeared
// between Prepare and the command stays unreadable, a new sibling is
// readable.
func TestSandboxPrepare(t *testing.T) {
	t.Parallel()
	requireLandlock(t)
	opts := SandboxOptions{}
	ws, outside := sandboxDirs(t, opts)
	secret := filepath.Join(outside, "later")
	opts.Workspace = ws
	opts.DenyRead = []string{secret}
	sb := NewSandbox(opts)
	sb.Prepare()
	if !sb.rulesets.state.built {
		t.Fatal("Prepare built no ruleset")
	}
	must(t, os.Mkdir(secret, 0o700))
	must(t, os.WriteFile(filepath.Join(secret, "id"), []byte("LATER\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(outside, "new"), []byte("NEW\n"), 0o644))
	run := func(script string) (string, error) {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = ws
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := sb.Start(cmd); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		return out.String(), err
	}
	if out, err := run("cat " + filepath.Join(secret, "id")); err == nil || strings.Contains(out, "LATER") {
		t.Errorf("a denied path created after Prepare was read: %s", out)
	}
	if out, err := run("cat " + filepath.Join(outside, "readme") + " " + filepath.Join(outside, "new")); err != nil || !strings.Contains(out, "readable") || !strings.Contains(out, "NEW") {
		t.Errorf("siblings: %v\n%s", err, out)
	}
	// Nothing changed since Prepare: the command starts with its ruleset.
	keys := filepath.Join(outside, "keys")
	must(t, os.Mkdir(keys, 0o700))
	sb2 := NewSandbox(SandboxOptions{Workspace: ws, DenyRead: []string{keys}})
	sb2.Prepare()
	before := sb2.rulesets.state.listed
	if len(before) == 0 {
		t.Fatal("Prepare listed no directory")
	}
	cmd := exec.Command("true")
	must(t, sb2.Start(cmd))
	must(t, cmd.Wait())
	for dir, g := range before {
		if sb2.rulesets.state.listed[dir] != g {
			t.Errorf("Start built the ruleset again after Prepare (%s listed afresh)", dir)
		}
	}
}

// TestEntryRuleTypeFromListing: an entry's rule takes its rights from the
// type its listing gave; a type that no longer fits the file (it was
// replaced between the listing and the rule) is asked of the file, not
// an error that would fail every command; a symlink gets no rule.
func TestEntryRuleTypeFromListing(t *testing.T) {
	abi := landlockABI()
	if abi < 1 {
		t.Skip("no Landlock")
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	must(t, os.Symlink("f", filepath.Join(dir, "l")))
	fd, err := createRuleset(confinement{network: true}, abi, fsReadFile|fsReadDir)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	dirFD, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(dirFD)
	ino := func(name string) uint64 {
		var st syscall.Stat_t
		must(t, syscall.Lstat(filepath.Join(dir, name), &st))
		return uint64(st.Ino)
	}
	for _, c := range []struct {
		name string
		typ  byte
		want uint64
	}{
		{"f", syscall.DT_REG, ino("f")},
		{"d", syscall.DT_DIR, ino("d")},
		{"f", syscall.DT_DIR, ino("f")}, // a directory when listed, a file now
		{"d", syscall.DT_REG, ino("d")}, // the reverse: file rights suit a directory too
		{"f", syscall.DT_UNKNOWN, ino("f")},
		{"l", syscall.DT_LNK, 0},
		{"l", syscall.DT_UNKNOWN, 0},
	} {
		name := append([]byte(c.name), 0)[:len(c.name)]
		got, err := addEntryRule(fd, dirFD, name, ino(c.name), c.typ, fsReadFile|fsReadDir, fsReadFile)
		if err != nil || got != c.want {
			t.Errorf("%s listed as type %d: rule for inode %d, %v; want %d", c.name, c.typ, got, err, c.want)
		}
	}
}

// TestListingTrustedAfterTheRacyWindow: a listing is trusted once the
// directory's last change is older than its times can tell apart: a
// second on a file system with whole-second times, fineRacyWindow where
// they have fractions.
func TestListingTrustedAfterTheRacyWindow(t *testing.T) {
	base := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	whole := dirStamp{mtime: base.UnixNano(), ctime: base.UnixNano()}
	fine := dirStamp{mtime: base.Add(123456789).UnixNano(), ctime: base.Add(123456789).UnixNano()}
	mixed := dirStamp{mtime: base.Add(123456789).UnixNano(), ctime: base.Add(time.Second).UnixNano()}
	for _, c := range []struct {
		name  string
		stamp dirStamp
		after time.Duration
		want  bool
	}{
		{"whole seconds, just changed", whole, 100 * time.Millisecond, false},
		{"whole seconds, past a second", whole, racyWindow + time.Millisecond, true},
		{"fractions, within the fine window", fine, fineRacyWindow / 2, false},
		{"fractions, past the fine window", fine, fineRacyWindow + 100*time.Millisecond, true},
		{"a whole-second time among them", mixed, 500 * time.Millisecond, false},
	} {
		changed := time.Unix(0, max(c.stamp.mtime, c.stamp.ctime))
		if got := c.stamp.trustedAt(changed.Add(c.after)); got != c.want {
			t.Errorf("%s: trusted %v, want %v", c.name, got, c.want)
		}
	}
}

// In /dev a command reads only the ordinary devices: the kernel log
// (readable to anyone here unsandboxed, or the test says so and skips
// that half) and any disk are refused, /dev/urandom, /dev/null and the
// terminals are not.
func TestSandboxDevices(t *testing.T) {
	if landlockABI() < 1 {
		t.Skip("no Landlock")
	}
	ws := t.TempDir()
	sb := NewSandbox(SandboxOptions{Workspace: ws}).Start
	out, err := runWith(t, sb, ws, "head -c 4 /dev/urandom | wc -c; cat /dev/null && echo null-ok; ls /dev/pts >/dev/null && echo pts-ok")
	if err != nil || !strings.Contains(out, "4\n") || !strings.Contains(out, "null-ok") || !strings.Contains(out, "pts-ok") {
		t.Errorf("ordinary devices: %v %q", err, out)
	}
	var probes []string
	if f, err := os.Open("/dev/kmsg"); err == nil {
		f.Close()
		probes = append(probes, "/dev/kmsg")
	} else {
		t.Logf("/dev/kmsg cannot be opened here even unsandboxed (%v)", err)
	}
	entries, _ := os.ReadDir("/dev")
	for _, e := range entries {
		if e.Type()&os.ModeDevice != 0 && e.Type()&os.ModeCharDevice == 0 {
			if f, err := os.Open(filepath.Join("/dev", e.Name())); err == nil {
				f.Close()
				probes = append(probes, filepath.Join("/dev", e.Name()))
			}
		}
	}
	if len(probes) == 0 {
		t.Skip("no device to probe: none can be opened here unsandboxed")
	}
	for _, p := range probes {
		if out, err := runWith(t, sb, ws, "exec 3<"+p+" && echo opened"); err == nil || strings.Contains(out, "opened") || !strings.Contains(out, "ermission denied") {
			t.Errorf("%s: %v %q, want permission denied", p, err, out)
		}
	}
}

// TestRulesetKeyHasAttributes: a ruleset's network restriction and
// abstract socket scope are set when it is created, so two confinements
// that differ only there must not share one.
func TestRulesetKeyHasAttributes(t *testing.T) {
	ws := t.TempDir()
	secret := filepath.Join(ws, "secret")
	base := confinement{write: []string{ws}, denyRead: []string{secret}}
	keyOf := func(c confinement) string {
		onPath, isDenied := deniedRoots(c.denyRead)
		k, _ := rulesetKey(c, onPath, isDenied)
		return string(k)
	}
	want := keyOf(base)
	if again := keyOf(base); again != want {
		t.Fatalf("the same confinement gave two keys:\n%s\n%s", want, again)
	}
	net, abstract, both := base, base, base
	net.network = true
	abstract.scopeAbstract = true
	both.network, both.scopeAbstract = true, true
	seen := map[string]string{want: "base"}
	for name, c := range map[string]confinement{"network": net, "scopeAbstract": abstract, "both": both} {
		k := keyOf(c)
		if other, ok := seen[k]; ok {
			t.Errorf("%s has the key of %s:\n%s", name, other, k)
		}
		seen[k] = name
	}
}
