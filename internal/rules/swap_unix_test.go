//go:build unix

package rules

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A nested rules file that is a symlink (AGENTS.md to a shared file) may
// be retargeted by a confined command between the deny check and the
// read: what is read must be what was checked. The deny check itself
// retargets the link here, right after it looked, where a command would
// race for that moment.
func TestNestedRulesRetargetedAfterTheCheck(t *testing.T) {
	f := newFix(t)
	secret := f.write(filepath.Join(f.root, "ssh", "id_rsa"), "SECRET-KEY\n")
	shared := f.write(filepath.Join(f.repo, "docs", "shared.md"), "SHARED-RULES\n")
	link := filepath.Join(f.repo, "a", "AGENTS.md")
	f.write(filepath.Join(f.repo, "a", "x.go"), "package a\n")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	opts := f.opts(f.repo)
	opts.Denied = func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil && strings.HasPrefix(r, filepath.Dir(secret)) {
			return "the read deny list"
		}
		tmp := link + ".new"
		_ = os.Symlink(secret, tmp)
		_ = os.Rename(tmp, link)
		return ""
	}
	got, _ := NewNested(opts, f.repo, nil).Attach([]string{"a/x.go"})
	if strings.Contains(got, "SECRET-KEY") {
		t.Errorf("the nested rules carried the denied file: %q", got)
	}
}

// A rules file that is a FIFO (a confined command's mkfifo AGENTS.md) is
// left out: opening it to read would wait for a writer forever, at the
// next start.
func TestRulesFileFIFO(t *testing.T) {
	f := newFix(t)
	if err := syscall.Mkfifo(filepath.Join(f.repo, "AGENTS.md"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan *Prefix, 1)
	go func() { done <- Load(f.opts(f.repo)) }()
	select {
	case p := <-done:
		for _, pt := range p.Parts {
			if pt.Kind == KindProject {
				t.Errorf("a FIFO was read as rules: %+v", pt)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("loading the rules waited on a FIFO")
	}
}
