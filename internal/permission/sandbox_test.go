package permission

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// sandboxDirs makes a workspace and an outside directory that are not
// under a temp dir or cache (which the sandbox leaves writable).
func sandboxDirs(t *testing.T, opts SandboxOptions) (ws, outside string) {
	t.Helper()
	base, err := os.MkdirTemp(".", ".sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	base, _ = filepath.Abs(base)
	t.Cleanup(func() { os.RemoveAll(base) })
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.Mkdir(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "readme"), []byte("readable\n"), 0o644))
	opts.Workspace = ws
	for _, p := range WritablePaths(opts) {
		if p != ws && within(outside, p) {
			t.Skipf("the test directory %s lies under %s, which the sandbox leaves writable", outside, p)
		}
	}
	return ws, outside
}

func requireLandlock(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("no Landlock on %s", runtime.GOOS)
	}
	abi := landlockABI()
	if abi < 1 {
		t.Skip("Landlock is not available in this kernel; the bash sandbox would run unconfined")
	}
	return abi
}

func runConfined(t *testing.T, opts SandboxOptions, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = opts.Workspace
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := SandboxCommand(opts)(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	return out.String(), err
}

func TestSandboxConfinesWrites(t *testing.T) {
	abi := requireLandlock(t)
	opts := SandboxOptions{Mode: SandboxEnforce}
	ws, outside := sandboxDirs(t, opts)
	opts.Workspace = ws
	opts.Home = outside
	enforced, gotABI, detail := SandboxStatus(opts)
	if !enforced || gotABI != abi {
		t.Fatalf("SandboxStatus = %v, %d, %q", enforced, gotABI, detail)
	}
	t.Logf("landlock ABI %d: %s", abi, detail)
	if !strings.Contains(detail, "stays read-only") {
		t.Errorf("status does not report the home: %q", detail)
	}

	if out, err := runConfined(t, opts, "echo inside > inside.txt && mkdir -p d/e && mv inside.txt d/e/ && cat d/e/inside.txt"); err != nil {
		t.Fatalf("write inside the workspace failed: %v\n%s", err, out)
	}
	out, err := runConfined(t, opts, "echo escaped > "+filepath.Join(outside, "bad.txt"))
	if err == nil {
		t.Fatalf("write outside the workspace succeeded:\n%s", out)
	}
	if _, statErr := os.Stat(filepath.Join(outside, "bad.txt")); statErr == nil {
		t.Fatal("file outside the workspace was created")
	}
	if !strings.Contains(out, "ermission denied") {
		t.Errorf("expected a permission error, got %q", out)
	}
	if out, err := runConfined(t, opts, "rm -f "+filepath.Join(outside, "readme")); err == nil {
		t.Fatalf("delete outside the workspace succeeded:\n%s", out)
	}
	if out, err := runConfined(t, opts, "cat "+filepath.Join(outside, "readme")+" && echo x > /dev/null"); err != nil || !strings.Contains(out, "readable") {
		t.Fatalf("reads must stay allowed: %v\n%s", err, out)
	}

	// allow_write opens a directory up.
	opts.AllowWrite = []string{outside}
	if out, err := runConfined(t, opts, "echo ok > "+filepath.Join(outside, "allowed.txt")); err != nil {
		t.Fatalf("write to allow_write failed: %v\n%s", err, out)
	}
}

func TestSandboxNetwork(t *testing.T) {
	abi := requireLandlock(t)
	if abi < 4 {
		t.Skipf("Landlock ABI %d cannot restrict TCP (needs 4)", abi)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed; the test connects with /dev/tcp")
	}
	_ = bash
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Skip("no loopback TCP:", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	ws := t.TempDir()
	script := fmt.Sprintf("exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d'", port)
	run := func(network bool) error {
		opts := SandboxOptions{Workspace: ws, Network: network}
		cmd := exec.Command("sh", "-c", script)
		done := make(chan error, 1)
		must(t, SandboxCommand(opts)(cmd))
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			return fmt.Errorf("timed out")
		}
	}
	if err := run(false); err == nil {
		t.Error("connect succeeded with network = false")
	}
	if err := run(true); err != nil {
		t.Errorf("connect failed with network = true: %v", err)
	}
}

func TestSandboxOffAndNotice(t *testing.T) {
	// Off, the command starts as it is.
	outside := t.TempDir()
	cmd := exec.Command("sh", "-c", "echo x > "+filepath.Join(outside, "off.txt"))
	must(t, SandboxCommand(SandboxOptions{Mode: SandboxOff, Workspace: t.TempDir()})(cmd))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("off mode: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "off.txt")); err != nil {
		t.Fatalf("off mode confined the command: %v", err)
	}
	enforced, _, detail := SandboxStatus(SandboxOptions{Mode: SandboxOff})
	if enforced || !strings.Contains(detail, "off") {
		t.Fatalf("status for off = %v %q", enforced, detail)
	}
	if enforced, _, detail := SandboxStatus(SandboxOptions{Mode: "strict"}); enforced || !strings.Contains(detail, "strict") {
		t.Fatalf("status for a bad mode = %v %q", enforced, detail)
	}
	// Where Landlock is missing, the notice comes once.
	if runtime.GOOS != "linux" || landlockABI() < 1 {
		n := 0
		sb := SandboxCommand(SandboxOptions{Notify: func(string) { n++ }})
		for i := 0; i < 3; i++ {
			c := exec.Command("true")
			must(t, sb(c))
			must(t, c.Wait())
		}
		if n != 1 {
			t.Fatalf("notice shown %d times, want 1", n)
		}
	}
}

// TestSandboxStaysInTheChild checks that confining a command leaves the
// rest of the process free: many confined starts while other goroutines
// keep writing outside the workspace, then a write from this goroutine.
func TestSandboxStaysInTheChild(t *testing.T) {
	requireLandlock(t)
	opts := SandboxOptions{}
	ws, outside := sandboxDirs(t, opts)
	opts.Workspace = ws
	sb := SandboxCommand(opts)
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func(w int) {
			p := filepath.Join(outside, fmt.Sprintf("writer-%d", w))
			for i := 0; ; i++ {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				if err := os.WriteFile(p, []byte(fmt.Sprint(i)), 0o644); err != nil {
					errs <- err
					return
				}
				runtime.Gosched()
			}
		}(w)
	}
	for i := 0; i < 40; i++ {
		cmd := exec.Command("sh", "-c", "echo x > "+filepath.Join(outside, "child.txt")+" 2>/dev/null; echo y > inside.txt")
		cmd.Dir = ws
		must(t, sb(cmd))
		if err := cmd.Wait(); err != nil {
			t.Fatalf("confined command %d: %v", i, err)
		}
	}
	close(stop)
	for w := 0; w < 4; w++ {
		if err := <-errs; err != nil {
			t.Fatalf("a goroutine of the parent lost write access: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "child.txt")); err == nil {
		t.Fatal("a confined command wrote outside the workspace")
	}
	if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
		t.Fatalf("a confined command could not write inside the workspace: %v", err)
	}
	must(t, os.WriteFile(filepath.Join(outside, "parent.txt"), []byte("ok"), 0o644))
}
