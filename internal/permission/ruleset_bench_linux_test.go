//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkRulesetBusyDir: the ruleset of a home directory under a busy
// temp dir (as in the end-to-end tests), one entry of which changes
// between commands, so its listing is never reused as it is.
func BenchmarkRulesetBusyDir(b *testing.B) {
	abi := landlockABI()
	if abi < 1 {
		b.Skip("no Landlock")
	}
	busy := b.TempDir()
	for i := range 550 {
		if err := os.WriteFile(filepath.Join(busy, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	home := filepath.Join(busy, "home")
	rxHome := filepath.Join(home, ".reasonix")
	if err := os.MkdirAll(rxHome, 0o755); err != nil {
		b.Fatal(err)
	}
	deny, except := DenyReadPaths(home, rxHome, nil)
	rc := newRulesetCache()
	defer rc.close()
	c := confinement{write: WritablePaths(SandboxOptions{Workspace: b.TempDir()}), denyRead: deny, except: except, rulesets: rc}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := os.WriteFile(filepath.Join(busy, "new"+strconv.Itoa(i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
		if _, err := rc.ruleset(c, abi); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRulesetFirstBuild: a run's first ruleset, with the home under
// a temp dir of 550 entries: a rule for each entry of every directory on
// the way to the Reasonix home.
func BenchmarkRulesetFirstBuild(b *testing.B) {
	abi := landlockABI()
	if abi < 1 {
		b.Skip("no Landlock")
	}
	busy := b.TempDir()
	for i := range 550 {
		if err := os.WriteFile(filepath.Join(busy, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	home := filepath.Join(busy, "home")
	rxHome := filepath.Join(home, ".reasonix")
	if err := os.MkdirAll(rxHome, 0o755); err != nil {
		b.Fatal(err)
	}
	deny, except := DenyReadPaths(home, rxHome, nil)
	c := confinement{write: WritablePaths(SandboxOptions{Workspace: b.TempDir()}), denyRead: deny, except: except}
	b.ReportAllocs()
	for b.Loop() {
		rc := newRulesetCache()
		rc.mu.Lock()
		if _, err := rc.ruleset(c, abi); err != nil {
			b.Fatal(err)
		}
		rc.mu.Unlock()
		rc.close()
	}
}

// BenchmarkRulesetUnchanged: a command's check of a ruleset nothing it was
// built from has changed since (the listings trusted): a stat of each
// path it depends on.
func BenchmarkRulesetUnchanged(b *testing.B) {
	abi := landlockABI()
	if abi < 1 {
		b.Skip("no Landlock")
	}
	busy := b.TempDir()
	home := filepath.Join(busy, "home")
	rxHome := filepath.Join(home, ".reasonix")
	if err := os.MkdirAll(rxHome, 0o755); err != nil {
		b.Fatal(err)
	}
	deny, except := DenyReadPaths(home, rxHome, nil)
	rc := newRulesetCache()
	defer rc.close()
	c := confinement{write: WritablePaths(SandboxOptions{Workspace: b.TempDir()}), denyRead: deny, except: except, rulesets: rc}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, err := rc.ruleset(c, abi); err != nil {
		b.Fatal(err)
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	if _, err := rc.ruleset(c, abi); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rc.ruleset(c, abi); err != nil {
			b.Fatal(err)
		}
	}
}
