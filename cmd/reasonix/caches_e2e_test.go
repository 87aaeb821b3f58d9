//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// Toolchain caches are writable for builds, but not the parts of them
// that run later on their own outside the sandbox: a program planted in
// ~/.cargo/bin or ~/go/bin (on people's PATH), a Gradle init script, a
// cargo config's runner. The download caches beside them stay writable.
func TestE2ESandboxKeepsToolchainLaunchPointsReadOnly(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	needPython(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{bashCall(`python3 -c "
import os
for f in ['.cargo/bin/git', 'go/bin/ls', '.gradle/init.d/evil.gradle', '.cargo/config.toml', '.m2/settings.xml', '.cargo/registry/ok', 'go/pkg/ok', '.gradle/caches/ok', '.m2/repository/ok']:
    try:
        open(os.path.expanduser('~/' + f), 'w').write('x')
        print('wrote', f)
    except OSError:
        print('refused', f)
"`)}},
		scripted.Turn{Text: "done"},
	)
	home := filepath.Dir(e.repo) // HOME in these tests
	for _, d := range []string{".cargo/bin", ".cargo/registry", "go/bin", "go/pkg", ".gradle/init.d", ".gradle/caches", ".m2/repository"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.lastMessages("run", "--yolo", "build")
	res := toolResults(t, e.srv.Requests()[1])["call_0_0"]
	for _, f := range []string{".cargo/bin/git", "go/bin/ls", ".gradle/init.d/evil.gradle", ".cargo/config.toml", ".m2/settings.xml"} {
		if !strings.Contains(res, "refused "+f) {
			t.Errorf("%s was writable:\n%s", f, res)
		}
		if _, err := os.Stat(filepath.Join(home, f)); err == nil {
			t.Errorf("%s exists after the run", f)
		}
	}
	for _, f := range []string{".cargo/registry/ok", "go/pkg/ok", ".gradle/caches/ok", ".m2/repository/ok"} {
		if !strings.Contains(res, "wrote "+f) {
			t.Errorf("the cache %s was not writable:\n%s", f, res)
		}
	}
}
