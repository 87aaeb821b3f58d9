package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/tools"
)

func skipOnWindows(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell test")
	}
}

func TestBashOutputAndExitCode(t *testing.T) {
	skipOnWindows(t)
	dir := t.TempDir()
	env := tools.NewEnv(dir)
	res, err := runTool(t, bashTool{}, env, `{"command":"echo out; echo err >&2; pwd; echo $TERM $NO_COLOR $GIT_PAGER; exit 3"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"out\n", "err\n", dir + "\n", "dumb 1 cat\n", "exit code: 3"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("missing %q in %q", want, res.Content)
		}
	}
	if !res.IsError || res.Summary != "exit code 3" {
		t.Errorf("IsError=%v summary=%q", res.IsError, res.Summary)
	}
	res, err = runTool(t, bashTool{}, env, `{"command":"true"}`)
	if err != nil || res.Content != "(no output)\nexit code: 0" || res.IsError {
		t.Fatalf("got %q %v", res.Content, err)
	}
	res, _ = runTool(t, bashTool{}, env, `{"command":"cat; echo done"}`)
	if !strings.Contains(res.Content, "done") {
		t.Fatalf("stdin should be closed: %q", res.Content)
	}
	for _, bad := range []string{`{}`, `{"command":"  "}`, `{"command":"x","timeout":-1}`} {
		if _, err := runTool(t, bashTool{}, env, bad); err == nil {
			t.Errorf("%s: want error", bad)
		}
	}
}

// processGone reports whether pid has exited (a zombie counts as gone).
func processGone(pid int) bool {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	return err != nil || strings.HasPrefix(strings.TrimSpace(string(out)), "Z")
}

func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	skipOnWindows(t)
	env := tools.NewEnv(t.TempDir())
	start := time.Now()
	res, err := runTool(t, bashTool{}, env, `{"command":"sleep 30 & echo bg=$!; sleep 30","timeout":1}`)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
	if !strings.Contains(res.Content, "timed out after 1s; process group killed") || !res.IsError {
		t.Fatalf("got %q", res.Content)
	}
	i := strings.Index(res.Content, "bg=")
	pid, _ := strconv.Atoi(strings.Fields(res.Content[i+3:])[0])
	if pid == 0 {
		t.Fatalf("no background pid in %q", res.Content)
	}
	deadline := time.Now().Add(3 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("background sleep %d survived the timeout", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestBashTimeoutCappedByEnv(t *testing.T) {
	skipOnWindows(t)
	env := tools.NewEnv(t.TempDir())
	env.BashTimeout = 300 * time.Millisecond
	env.BashMaxTimeout = 500 * time.Millisecond
	start := time.Now()
	res, err := runTool(t, bashTool{}, env, `{"command":"sleep 20","timeout":100}`)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 4*time.Second || !strings.Contains(res.Content, "timed out after 500ms") {
		t.Fatalf("got %q after %s", res.Content, time.Since(start))
	}
}

func TestBashBackgroundChildDoesNotHang(t *testing.T) {
	skipOnWindows(t)
	env := tools.NewEnv(t.TempDir())
	start := time.Now()
	res, err := runTool(t, bashTool{}, env, `{"command":"sleep 30 & echo started; echo pid=$! >&2"}`)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > bashPipeGrace+3*time.Second {
		t.Fatalf("took %s", d)
	}
	if !strings.Contains(res.Content, "started\n") || !strings.HasSuffix(res.Content, "exit code: 0") {
		t.Fatalf("got %q", res.Content)
	}
	// The detached sleep outlives the call by design; end it here.
	if i := strings.Index(res.Content, "pid="); i >= 0 {
		if pid, err := strconv.Atoi(strings.Fields(res.Content[i+4:])[0]); err == nil {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	}
}

func TestBashContextCancel(t *testing.T) {
	skipOnWindows(t)
	env := tools.NewEnv(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := bashTool{}.Execute(ctx, env, json.RawMessage(`{"command":"sleep 30"}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cancel took %s", d)
	}
}

func TestBashTruncationKeepsHeadAndTail(t *testing.T) {
	skipOnWindows(t)
	env := tools.NewEnv(t.TempDir())
	env.OutputLimit = 1000
	res, err := runTool(t, bashTool{}, env, `{"command":"echo FIRST; seq 1 20000; echo LAST"}`)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Content
	if len(c) > 1300 || !strings.HasPrefix(c, "FIRST\n") || !strings.Contains(c, "LAST\n") || !strings.Contains(c, "truncated") || !strings.HasSuffix(c, "exit code: 0") {
		t.Fatalf("got %d bytes: %q", len(c), c)
	}
	// The session truncates every result again; that must be a no-op, not
	// a second marker.
	if again := tools.Truncate(c, env.Limit()); again != c {
		t.Fatalf("result exceeds the limit (%d bytes) and would be truncated twice", len(c))
	}
}

func TestHeadTailDropsMiddle(t *testing.T) {
	h := newHeadTail(4)
	for _, s := range []string{"ab", "cdef", "ghij", "k"} {
		h.Write([]byte(s))
	}
	if got := h.String(); got != "abcd\n[... 3 bytes of output dropped ...]\nhijk" {
		t.Fatalf("got %q", got)
	}
	small := newHeadTail(4)
	small.Write([]byte("abcdef"))
	if small.String() != "abcdef" {
		t.Fatalf("got %q", small.String())
	}
}

func TestBashSandboxHook(t *testing.T) {
	skipOnWindows(t)
	env := tools.NewEnv(t.TempDir())
	called := false
	env.Sandbox = func(cmd *exec.Cmd) error {
		called = true
		// The hook starts the command itself; emulate a confining one
		// that changes what runs.
		cmd.Args = append([]string{cmd.Args[0], "-c", "echo sandboxed"}, cmd.Args[3:]...)
		return cmd.Start()
	}
	res, err := runTool(t, bashTool{}, env, `{"command":"echo plain"}`)
	if err != nil || !called || !strings.Contains(res.Content, "sandboxed") {
		t.Fatalf("called=%v content=%q err=%v", called, res.Content, err)
	}
	env.Sandbox = func(*exec.Cmd) error { return errors.New("landlock unavailable") }
	if _, err := runTool(t, bashTool{}, env, `{"command":"echo plain"}`); err == nil || !strings.Contains(err.Error(), "landlock unavailable") {
		t.Fatalf("want the sandbox error, got %v", err)
	}
}

// A command has the run's TMPDIR made first, and does not start when it
// could not be made: TMPDIR would name a directory that is not the run's.
func TestBashMakesItsTempDirFirst(t *testing.T) {
	skipOnWindows(t)
	env := tools.NewEnv(t.TempDir())
	env.TempDir = filepath.Join(t.TempDir(), "run")
	env.MakeTempDir = func() error { return os.Mkdir(env.TempDir, 0o700) }
	res, err := runTool(t, bashTool{}, env, `{"command":"echo x > \"$TMPDIR/f\" && cat \"$TMPDIR/f\""}`)
	if err != nil || res.IsError || !strings.Contains(res.Content, "x\n") {
		t.Fatalf("content=%q err=%v", res.Content, err)
	}
	env.MakeTempDir = func() error { return errors.New("private temp dir: file exists") }
	marker := filepath.Join(t.TempDir(), "ran")
	if _, err := runTool(t, bashTool{}, env, `{"command":"touch `+marker+`"}`); err == nil || !strings.Contains(err.Error(), "private temp dir") {
		t.Fatalf("want the temp dir's error, got %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran without its TMPDIR")
	}
}

func TestBashWithholdsSecretsFromTheEnvironment(t *testing.T) {
	skipOnWindows(t)
	const key = "sk-bash-test-0123456789"
	t.Setenv("RX_TEST_PROVIDER_KEY", key)
	t.Setenv("REASONIX_API_KEY", "sk-reasonix-test-key")
	t.Setenv("RX_TEST_ALIAS", "x"+key)
	t.Setenv("RX_TEST_KEEP", "kept")
	dir := t.TempDir()
	env := tools.NewEnv(dir)
	env.Secrets = tools.NewSecrets([]string{"RX_TEST_PROVIDER_KEY"}, []string{key})
	res, err := runTool(t, bashTool{}, env, `{"command":"env; printenv; cat /proc/self/environ 2>/dev/null | tr '\\0' '\\n'; echo \"[$RX_TEST_PROVIDER_KEY]\"; echo $HOME $PATH"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"RX_TEST_PROVIDER_KEY=", "REASONIX_API_KEY", "RX_TEST_ALIAS", key, "sk-reasonix-test-key"} {
		if strings.Contains(res.Content, leak) {
			t.Errorf("%q reached the shell:\n%s", leak, res.Content)
		}
	}
	for _, want := range []string{"RX_TEST_KEEP=kept", "[]", os.Getenv("HOME") + " " + os.Getenv("PATH")} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("missing %q:\n%s", want, res.Content)
		}
	}
	// A key the shell finds elsewhere (a file) is redacted from the output.
	if err := os.WriteFile(dir+"/leak.txt", []byte("token="+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, _ = runTool(t, bashTool{}, env, `{"command":"cat leak.txt"}`)
	if strings.Contains(res.Content, key) || !strings.Contains(res.Content, "token=[REDACTED]") {
		t.Errorf("file content not redacted: %q", res.Content)
	}
	// Without configured secrets the shell still never sees REASONIX_API_KEY.
	res, _ = runTool(t, bashTool{}, tools.NewEnv(dir), `{"command":"env"}`)
	if strings.Contains(res.Content, "REASONIX_API_KEY") || !strings.Contains(res.Content, "RX_TEST_KEEP=kept") {
		t.Errorf("default environment: %s", res.Content)
	}
}
