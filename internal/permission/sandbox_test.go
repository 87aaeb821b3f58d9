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
// under a temp dir or cache (which the sandbox leaves writable): beside
// the package, or, for a clone under /tmp, in the home directory.
func sandboxDirs(t *testing.T, opts SandboxOptions) (ws, outside string) {
	t.Helper()
	parents := []string{"."}
	if home, err := os.UserHomeDir(); err == nil {
		parents = append(parents, home)
	}
	var why string
	for _, parent := range parents {
		base, err := os.MkdirTemp(parent, ".sandbox-test-")
		if err != nil {
			why = err.Error()
			continue
		}
		base, _ = filepath.Abs(base)
		t.Cleanup(func() { os.RemoveAll(base) })
		ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
		must(t, os.Mkdir(ws, 0o755))
		must(t, os.Mkdir(outside, 0o755))
		must(t, os.WriteFile(filepath.Join(outside, "readme"), []byte("readable\n"), 0o644))
		opts.Workspace = ws
		if w := writableAbove(opts, ws, outside); w != "" {
			why = fmt.Sprintf("the test directory %s lies under %s, which the sandbox leaves writable", outside, w)
			continue
		}
		return ws, outside
	}
	t.Skip(why)
	return "", ""
}

// writableAbove names a path of WritablePaths(opts) other than ws that
// holds dir, or "".
func writableAbove(opts SandboxOptions, ws, dir string) string {
	for _, p := range WritablePaths(opts) {
		if p != ws && within(dir, p) {
			return p
		}
	}
	return ""
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
	if err := NewSandbox(opts).Start(cmd); err != nil {
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
		must(t, NewSandbox(opts).Start(cmd))
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
	must(t, NewSandbox(SandboxOptions{Mode: SandboxOff, Workspace: t.TempDir()}).Start(cmd))
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
		sb := NewSandbox(SandboxOptions{Notify: func(string) { n++ }}).Start
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
	sb := NewSandbox(opts).Start
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

// TestSandboxDenyRead: read access is an allow-list of everything but the
// denied paths; an exception beneath a denied path stays readable, and
// reading elsewhere (the workspace, system files) still works.
func TestSandboxDenyRead(t *testing.T) {
	requireLandlock(t)
	opts := SandboxOptions{}
	ws, outside := sandboxDirs(t, opts)
	secret := filepath.Join(outside, "keys")
	must(t, os.MkdirAll(filepath.Join(secret, "public"), 0o755))
	must(t, os.WriteFile(filepath.Join(secret, "id"), []byte("PRIVATE\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(secret, "public", "ok"), []byte("PUBLIC\n"), 0o644))
	must(t, os.Symlink(secret, filepath.Join(outside, "alias")))
	opts.Workspace = ws
	opts.DenyRead = []string{secret}
	opts.DenyReadExcept = []string{filepath.Join(secret, "public")}
	for _, p := range []string{filepath.Join(secret, "id"), filepath.Join(outside, "alias", "id")} {
		if out, err := runConfined(t, opts, "cat "+p); err == nil || strings.Contains(out, "PRIVATE") {
			t.Errorf("read of denied %s succeeded: %s", p, out)
		}
	}
	out, err := runConfined(t, opts, "cat "+filepath.Join(secret, "public", "ok")+" "+filepath.Join(outside, "readme")+
		" && echo w > f && cat f && head -c 0 /etc/hostname && ls / >/dev/null")
	if err != nil || !strings.Contains(out, "PUBLIC") || !strings.Contains(out, "readable") {
		t.Fatalf("allowed reads failed: %v\n%s", err, out)
	}
}

// TestSandboxPrivateTmp: with a private temp dir the shared /tmp is not
// writable, the private one is.
func TestSandboxPrivateTmp(t *testing.T) {
	requireLandlock(t)
	opts := SandboxOptions{}
	ws, outside := sandboxDirs(t, opts)
	tmp := filepath.Join(outside, "run-tmp")
	must(t, os.Mkdir(tmp, 0o700))
	opts.Workspace, opts.TempDir = ws, tmp
	shared := filepath.Join(os.TempDir(), fmt.Sprintf("reasonix-shared-%d", os.Getpid()))
	defer os.Remove(shared)
	if out, err := runConfined(t, opts, "echo x > "+shared); err == nil {
		t.Fatalf("write to the shared temp dir succeeded: %s", out)
	}
	if out, err := runConfined(t, opts, "echo x > "+filepath.Join(tmp, "out")+" && cat "+filepath.Join(tmp, "out")); err != nil {
		t.Fatalf("write to the private temp dir failed: %v %s", err, out)
	}
	for _, p := range WritablePaths(opts) {
		if p == "/tmp" || p == "/var/tmp" || p == "/dev/shm" {
			t.Errorf("%s is still writable", p)
		}
	}
}

// TestSandboxNoNetworkClosesUDPAndUnixSockets: with network = false a
// command cannot create UDP or unix sockets; socketpair still works.
func TestSandboxNoNetworkClosesUDPAndUnixSockets(t *testing.T) {
	requireLandlock(t)
	if !seccompAvailable() {
		t.Skip("no seccomp socket filter on this architecture")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed; the test creates sockets with it")
	}
	ws := t.TempDir()
	script := py + ` -c '
import socket, sys
for name, fam, typ in [("udp", socket.AF_INET, socket.SOCK_DGRAM), ("udp6", socket.AF_INET6, socket.SOCK_DGRAM), ("unix", socket.AF_UNIX, socket.SOCK_STREAM), ("unixgram", socket.AF_UNIX, socket.SOCK_DGRAM)]:
    try:
        socket.socket(fam, typ).close(); print(name, "open")
    except OSError as e:
        print(name, "refused")
a, b = socket.socketpair(); a.close(); b.close(); print("socketpair open")
socket.socket(socket.AF_INET, socket.SOCK_STREAM).close(); print("tcp open")
'`
	for _, network := range []bool{false, true} {
		out, err := runConfined(t, SandboxOptions{Workspace: ws, Network: network}, script)
		if err != nil {
			t.Fatalf("network=%v: %v\n%s", network, err, out)
		}
		want := "refused"
		if network {
			want = "open"
		}
		for _, s := range []string{"udp", "udp6", "unix", "unixgram"} {
			if !strings.Contains(out, s+" "+want+"\n") {
				t.Errorf("network=%v: %s not %s:\n%s", network, s, want, out)
			}
		}
		if !strings.Contains(out, "socketpair open") || !strings.Contains(out, "tcp open") {
			t.Errorf("network=%v: socketpair or TCP socket creation broke:\n%s", network, out)
		}
	}
}
