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
// Registrations fit; a table, map literal or regexp belongs in a
// sync.OnceValue built on first use.
const initBudget = 6 << 10

// TestOwnPackageInitIsSmall runs `reasonix version` with
// GODEBUG=inittrace=1 and holds each of our packages' init to
// initBudget bytes. Allocations, unlike times, do not depend on the
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
		if len(f) < 10 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/reasonix/reasonix") {
			continue
		}
		seen++
		bytesAlloc, err := strconv.Atoi(f[7])
		if err != nil || f[8] != "bytes," {
			t.Fatalf("unexpected inittrace line %q", sc.Text())
		}
		if bytesAlloc > initBudget {
			t.Errorf("%s allocates %d bytes (%s allocs) in its package init, over %d: build its tables on first use (sync.OnceValue)",
				f[1], bytesAlloc, f[9], initBudget)
		}
	}
	if seen == 0 {
		t.Fatalf("no init lines of our packages in:\n%s", stderr.String())
	}
}
