package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// initBudget is what one of our packages may allocate in its package
// init: every start of the binary pays it, `reasonix version` included.
// Registrations fit; a table or regexp belongs in a lazy.Value built on
// first use.
const initBudget = 6 << 10

// initAllowed are our packages that may run code at start: they register
// themselves (tools, provider kinds), or must act before anything else
// (main makes the process not dumpable). Any other package with init code
// costs every start at least a page fault on that code, wherever the
// linker put it: a package-level map literal, sync.OnceValue call, regexp,
// or value computed by a call (a switch, a lazy.Value composite literal or
// a constant expression runs nothing).
var initAllowed = map[string]bool{
	"main": true,
	"github.com/reasonix/reasonix/tools/builtin":      true,
	"github.com/reasonix/reasonix/providers/openai":   true,
	"github.com/reasonix/reasonix/providers/scripted": true,
}

// TestOwnPackageInitIsSmall runs `reasonix version` with
// GODEBUG=inittrace=1, which lists every package with init code: only
// initAllowed may be there, each within initBudget bytes. Allocations, unlike times, do not depend on the
// machine's load.
func TestOwnPackageInitIsSmall(t *testing.T) {
	cmd := exec.Command(binPath, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("version: %v\n%s", err, stderr.String())
	}
	// init github.com/reasonix/reasonix/internal/permission @1.2 ms, 0.05 ms clock, 3296 bytes, 52 allocs
	seen := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/reasonix/reasonix") && f[1] != "main" {
			continue
		}
		seen++
		if !initAllowed[f[1]] {
			t.Errorf("%s runs code in its package init (%s bytes, %s allocs): build its tables on first use (lazy.Value), use a switch for a lookup, or say why it must run at start in initAllowed",
				f[1], f[7], f[9])
		}
		bytesAlloc, err := strconv.Atoi(f[7])
		if err != nil || f[8] != "bytes," {
			t.Fatalf("unexpected inittrace line %q", sc.Text())
		}
		if bytesAlloc > initBudget {
			t.Errorf("%s allocates %d bytes (%s allocs) in its package init, over %d: build its tables on first use (lazy.Value)",
				f[1], bytesAlloc, f[9], initBudget)
		}
	}
	if seen == 0 {
		t.Fatalf("no init lines of our packages in:\n%s", stderr.String())
	}
}
