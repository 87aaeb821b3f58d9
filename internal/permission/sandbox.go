package permission

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Sandbox modes for [sandbox] bash.
const (
	SandboxEnforce = "enforce"
	SandboxOff     = "off"
)

// SandboxOptions configure the bash sandbox.
type SandboxOptions struct {
	// Mode is "enforce" (the default when empty) or "off".
	Mode string
	// Workspace is where commands may write, with AllowWrite
	// ([sandbox] allow_write), temp dirs and toolchain caches.
	Workspace  string
	AllowWrite []string
	// Home is Reasonix's home. It is deliberately not writable from bash,
	// so a command cannot edit the decision log or the configuration;
	// SandboxStatus warns when a writable path covers it.
	Home string
	// Network allows TCP bind and connect ([sandbox] network = true).
	Network bool
	// Notify is called once, the first time a command runs unconfined
	// because Landlock is missing; may be nil.
	Notify func(string)
}

// WritablePaths lists where a sandboxed command may write: the workspace,
// allow_write, temp dirs, toolchain caches and a few device files. Paths
// that do not exist are skipped when the sandbox is applied.
func WritablePaths(opts SandboxOptions) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if opts.Workspace != "" {
		ws, err := filepath.Abs(opts.Workspace)
		if err == nil {
			add(ws)
		}
	}
	for _, p := range opts.AllowWrite {
		add(p)
	}
	add(os.TempDir())
	add(os.Getenv("TMPDIR"))
	for _, p := range []string{"/tmp", "/var/tmp", "/dev/shm", "/dev/pts"} {
		add(p)
	}
	for _, p := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx"} {
		add(p)
	}
	// Toolchain caches: builds and installs must work inside the sandbox.
	add(os.Getenv("GOCACHE"))
	add(os.Getenv("GOMODCACHE"))
	for _, p := range filepath.SplitList(os.Getenv("GOPATH")) {
		add(p)
	}
	add(os.Getenv("XDG_CACHE_HOME"))
	add(os.Getenv("CARGO_HOME"))
	add(os.Getenv("npm_config_cache"))
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		for _, d := range []string{".cache", ".npm", ".cargo", "go", ".yarn", ".pnpm-store", ".gradle", ".m2"} {
			add(filepath.Join(home, d))
		}
	}
	return out
}

// SandboxStatus reports whether bash would run confined, the kernel's
// Landlock ABI (0 when missing) and a sentence for `reasonix doctor`.
func SandboxStatus(opts SandboxOptions) (enforced bool, abi int, detail string) {
	abi = landlockABI()
	switch opts.Mode {
	case "", SandboxEnforce:
	case SandboxOff:
		return false, abi, `bash sandbox is off ([sandbox] bash = "off"); commands run unconfined`
	default:
		return false, abi, fmt.Sprintf("[sandbox] bash = %q is not a mode (want enforce or off); commands run unconfined", opts.Mode)
	}
	if runtime.GOOS != "linux" {
		return false, 0, "the bash sandbox uses Linux Landlock, not available on " + runtime.GOOS + "; commands run unconfined"
	}
	if abi < 1 {
		return false, 0, "Landlock is not available in this kernel (or is disabled); bash commands run unconfined"
	}
	net := "network: TCP bind/connect denied ([sandbox] network = false)"
	switch {
	case opts.Network:
		net = "network: allowed ([sandbox] network = true)"
	case abi < 4:
		net = fmt.Sprintf("network: not restricted (needs Landlock ABI 4, kernel has %d)", abi)
	}
	writable := WritablePaths(opts)
	home := ""
	if opts.Home != "" {
		home = "; the Reasonix home " + opts.Home + " stays read-only"
		for _, p := range writable {
			if within(filepath.Clean(opts.Home), p) {
				home = "; warning: the Reasonix home " + opts.Home + " lies under writable " + p
				break
			}
		}
	}
	return true, abi, fmt.Sprintf("Landlock ABI %d enforced: bash may write only to %s; %s%s",
		abi, strings.Join(writable, ", "), net, home)
}

// SandboxCommand returns the function to assign to tools.Env.Sandbox: it
// starts a command, in place of cmd.Start, confined by Landlock to writing
// where WritablePaths allows. Where the sandbox is off or missing it starts
// commands unconfined (and calls opts.Notify once when missing).
//
// Confinement costs no new program: a goroutine locks itself to a fresh
// OS thread, restricts that thread (Landlock and no_new_privs apply per
// thread and are inherited by the processes it starts), starts the command
// from it, and exits without unlocking, so the Go runtime discards the
// thread instead of reusing it. The rest of the process stays unconfined.
// A command with SysProcAttr.Pdeathsig keeps that thread until it exits,
// so the signal comes when Reasonix dies, not when the thread would end.
func SandboxCommand(opts SandboxOptions) func(*exec.Cmd) error {
	enforced, _, detail := SandboxStatus(opts)
	write := WritablePaths(opts)
	var once sync.Once
	return func(cmd *exec.Cmd) error {
		if !enforced {
			if opts.Mode != SandboxOff && opts.Notify != nil {
				once.Do(func() { opts.Notify(detail) })
			}
			return cmd.Start()
		}
		if cmd.Err != nil {
			return cmd.Err
		}
		return startConfined(cmd, write, opts.Network)
	}
}
