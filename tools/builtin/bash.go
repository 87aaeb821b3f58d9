package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/tools"
)

const (
	bashDefaultTimeout = 120 * time.Second
	bashMaxTimeout     = 600 * time.Second
	// bashPipeGrace is how long output pipes stay open after the shell
	// exits: a background child that inherited them must not hang the call.
	bashPipeGrace = 2 * time.Second
)

// bashTool runs shell commands. Its zero value, the registered one, runs
// them in bash (else sh); [PowerShell] makes one whose commands run in
// PowerShell, under the same name so rules, hooks and ! lines keep
// working.
type bashTool struct {
	// pwsh is the PowerShell executable; empty means a POSIX shell.
	pwsh string
}

// PowerShell returns the bash tool running its commands with exe
// (pwsh, or powershell.exe) as exe -NoProfile -NonInteractive -Command.
// Its calls describe themselves as PowerShell ([tools.ShellPowerShell]),
// which the gate treats as opaque.
func PowerShell(exe string) tools.Tool { return bashTool{pwsh: exe} }

func (bashTool) Name() string   { return "bash" }
func (bashTool) ReadOnly() bool { return false }

// Prepare gets ready for a command while the session checks the call
// (tools.Preparer): it starts the process-group watcher and builds the
// sandbox's ruleset. Every command needs both, and neither is anything a
// refused call regrets: the ruleset is read from directories, and the
// watcher (one idle shell per process) would start at the first command.
func (bashTool) Prepare(env *tools.Env) {
	var wg sync.WaitGroup
	wg.Go(prepareWatcher)
	if env.Sandbox != nil && env.PrepareSandbox != nil {
		// The ruleset grants the private TMPDIR: built before that
		// exists, Start would find it new and build the ruleset again.
		if env.MakeTempDir != nil {
			_ = env.MakeTempDir()
		}
		env.PrepareSandbox()
	}
	wg.Wait()
}

func (t bashTool) Description() string {
	common := "stdin is closed: nothing interactive. timeout: seconds (default 120, max 600), then the process group is killed. " +
		"run_in_background: start a server or watcher as a job of this session and get its id at once (no timeout; it ends with the session); " +
		"read or stop it with job. Prefer grep, glob, ls and read_file to shell equivalents."
	if t.pwsh != "" {
		return "Run a PowerShell command (pwsh -NoProfile -NonInteractive -Command) in the workspace root; returns the combined output and the exit code. " +
			"Write PowerShell, not bash: cmdlets (Get-ChildItem, Select-String, Get-Content), ';' between statements, $env:NAME for environment variables, the backtick as escape character. " +
			"Nothing may prompt: no Read-Host, and add -Confirm:$false where a cmdlet would ask. " +
			"A person approves every command before it runs, so keep each one short and plain. " + common
	}
	return "Run bash -c in the workspace root; returns stdout+stderr and the exit code. " + common
}

// Schema is bashSchema (schemas_gen.go), generated from bashArgs; see
// schema_test.go.
func (bashTool) Schema() json.RawMessage { return json.RawMessage(bashSchema) }

type bashArgs struct {
	Command     string     `json:"command"`
	Timeout     seconds    `json:"timeout,omitempty"`
	Description string     `json:"description,omitempty" jsonschema:"5-10 words on what it does"`
	Background  tools.Bool `json:"run_in_background,omitempty"`
}

// seconds is a timeout in seconds: a JSON number or a numeric string, since
// models often quote numbers. Unlike tools.Int it keeps fractions.
type seconds float64

func (s *seconds) UnmarshalJSON(b []byte) error {
	str := strings.TrimSpace(string(b))
	if len(str) >= 2 && str[0] == '"' && str[len(str)-1] == '"' {
		str = strings.TrimSpace(str[1 : len(str)-1])
	}
	if str == "" || str == "null" {
		*s = 0
		return nil
	}
	f, err := strconv.ParseFloat(str, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("expected a number of seconds, got %s", b)
	}
	*s = seconds(f)
	return nil
}

// shellSpec is the shell a command runs in: path (empty finds bash, else
// sh), and power for PowerShell.
type shellSpec struct {
	path  string
	power bool
}

func (t bashTool) shell(env *tools.Env) shellSpec {
	if t.pwsh != "" {
		return shellSpec{path: t.pwsh, power: true}
	}
	return shellSpec{path: env.Shell}
}

// powerShellArgs come before the command: no profile (a user's profile
// is code the gate never saw), nothing interactive.
var powerShellArgs = []string{"-NoProfile", "-NonInteractive", "-Command"}

// powerShellEnv keeps PowerShell from phoning home on start, and .NET
// from opening its diagnostics socket, which the sandbox's socket filter
// refuses when the network is off.
var powerShellEnv = []string{"POWERSHELL_TELEMETRY_OPTOUT=1", "POWERSHELL_UPDATECHECK=Off", "DOTNET_EnableDiagnostics=0"}

// bashEnv are hints that keep tools from paging, colouring or prompting.
var bashEnv = []string{"TERM=dumb", "NO_COLOR=1", "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0"}

func (t bashTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a bashArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Result{}, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return tools.Result{}, fmt.Errorf("command is required")
	}
	if a.Timeout < 0 {
		return tools.Result{}, fmt.Errorf("timeout must be positive seconds")
	}
	timeout := env.BashTimeout
	if timeout <= 0 {
		timeout = bashDefaultTimeout
	}
	limit := env.BashMaxTimeout
	if limit <= 0 {
		limit = bashMaxTimeout
	}
	if a.Timeout > 0 {
		timeout = time.Duration(float64(a.Timeout) * float64(time.Second))
	}
	timeout = min(timeout, limit)

	if a.Background {
		return startJob(env, t.shell(env), a.Command)
	}

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := newHeadTail(max(4*env.Limit(), 1<<20))
	cmd, reap, err := startShell(env, t.shell(env), a.Command, out)
	if err != nil {
		return tools.Result{}, err
	}
	defer reap.done()
	// Kill the whole group, not just the shell, when time runs out or the
	// session is cancelled; exec.CommandContext would only kill the shell.
	stop := context.AfterFunc(runCtx, func() { _ = killProcessGroup(cmd) })
	cmd.WaitDelay = bashPipeGrace
	waitErr := waitWithDelay(cmd)
	stop()

	// Redact before truncating, so a cut cannot leave half a key behind.
	body := env.Redact(out.String())
	if body == "" {
		body = "(no output)\n"
	} else if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	// Truncate the finished result, not the body: a status line appended
	// after truncation would push it over the limit, and the session's own
	// truncation would then cut it a second time. The tail the cut keeps
	// holds the status line.
	switch {
	case ctx.Err() != nil:
		return tools.Result{}, fmt.Errorf("command cancelled, process group killed: %w", ctx.Err())
	case runCtx.Err() != nil:
		msg := fmt.Sprintf("timed out after %s; process group killed", fmtSeconds(timeout))
		return tools.Result{Content: tools.Truncate(body+msg, env.Limit()), IsError: true, Summary: msg}, nil
	}
	code := 0
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	} else if waitErr != nil {
		return tools.Result{}, fmt.Errorf("command failed: %w", waitErr)
	}
	return tools.Result{
		Content: tools.Truncate(fmt.Sprintf("%sexit code: %d", body, code), env.Limit()),
		IsError: code != 0,
		Summary: fmt.Sprintf("exit code %d", code),
	}, nil
}

// startShell starts command as every bash call does: in the workspace
// root, in a process group of its own, with the scrubbed environment and
// the private TMPDIR, through the sandbox when there is one, and watched
// by a reaper so the group dies with Reasonix. Its output goes to out.
func startShell(env *tools.Env, sh shellSpec, command string, out io.Writer) (*exec.Cmd, *reaper, error) {
	cmd := shellCommand(sh, command)
	cmd.Dir = env.Root
	// Always an explicit environment, never the inherited one: provider
	// keys and anything holding a secret value are withheld.
	cmd.Env = append(env.Secrets.Environ(os.Environ()), bashEnv...)
	if sh.power {
		cmd.Env = append(cmd.Env, powerShellEnv...)
	}
	if env.TempDir != "" {
		if env.MakeTempDir != nil {
			if err := env.MakeTempDir(); err != nil {
				return nil, nil, fmt.Errorf("cannot start shell: %w", err)
			}
		}
		cmd.Env = append(cmd.Env, "TMPDIR="+env.TempDir, "TMP="+env.TempDir, "TEMP="+env.TempDir)
	}
	cmd.Stdout, cmd.Stderr = out, out
	start := cmd.Start
	if env.Sandbox != nil {
		start = func() error { return env.Sandbox(cmd) }
	}
	if err := start(); err != nil {
		return nil, nil, fmt.Errorf("cannot start shell: %w", err)
	}
	// The group dies with Reasonix, however Reasonix ends.
	return cmd, watchGroup(cmd.Process.Pid), nil
}

// waitWithDelay waits for cmd; a shell that exited while a background child
// still held its output is a normal exit, not an error.
func waitWithDelay(cmd *exec.Cmd) error {
	err := cmd.Wait()
	if errors.Is(err, exec.ErrWaitDelay) {
		return nil
	}
	return err
}

func fmtSeconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return d.String()
}

// headTail keeps the first and last n bytes written to it, so a command that
// prints gigabytes costs bounded memory while the start and the end (where
// errors usually are) survive.
type headTail struct {
	mu      sync.Mutex
	n       int
	head    []byte
	tail    []byte // ring buffer of the most recent bytes once head is full
	pos     int
	total   int64
	wrapped bool
}

func newHeadTail(n int) *headTail { return &headTail{n: n} }

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total += int64(len(p))
	written := len(p)
	if room := h.n - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(h.tail) < h.n {
			k := min(h.n-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(h.tail[h.pos:], p)
		h.pos = (h.pos + k) % h.n
		h.wrapped = true
		p = p[k:]
	}
	return written, nil
}

// String returns everything kept; when bytes were dropped in the middle, an
// explicit marker says how many.
func (h *headTail) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.wrapped {
		return string(h.head) + string(h.tail)
	}
	tail := append(append([]byte(nil), h.tail[h.pos:]...), h.tail[:h.pos]...)
	dropped := h.total - int64(len(h.head)+len(tail))
	return fmt.Sprintf("%s\n[... %d bytes of output dropped ...]\n%s", h.head, dropped, tail)
}
