package permission

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// SandboxArg is the hidden subcommand that applies the sandbox and then
// runs the real command: `reasonix __sandbox <policy> -- <path> <args…>`.
// main must hand os.Args[2:] to RunSandboxed when os.Args[1] is SandboxArg.
const SandboxArg = "__sandbox"

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
	// Executable is the binary that understands SandboxArg; empty means
	// os.Executable() (tests use the test binary).
	Executable string
	// Notify is called once, the first time a command runs unconfined
	// because Landlock is missing; may be nil.
	Notify func(string)
}

// sandboxSpec travels from the parent to the __sandbox child on its
// command line, so the child needs no configuration of its own.
type sandboxSpec struct {
	Write   []string `json:"w"`
	Network bool     `json:"n"`
	Argv0   string   `json:"a"`
}

func (s sandboxSpec) encode() (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode sandbox policy: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func decodeSpec(s string) (sandboxSpec, error) {
	var spec sandboxSpec
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return spec, fmt.Errorf("decode sandbox policy: %w", err)
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return spec, fmt.Errorf("decode sandbox policy: %w", err)
	}
	return spec, nil
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
	if _, err := sandboxExecutable(opts); err != nil {
		return false, abi, "bash sandbox unavailable: " + err.Error() + "; commands run unconfined"
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

func sandboxExecutable(opts SandboxOptions) (string, error) {
	if opts.Executable != "" {
		return opts.Executable, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate own executable: %w", err)
	}
	return exe, nil
}

// SandboxCommand returns the function to assign to tools.Env.Sandbox. It
// rewrites a command to run through `<self> __sandbox`, which confines it
// with Landlock and then executes it. Where the sandbox is off or missing
// it leaves commands unchanged (and calls opts.Notify once when missing).
func SandboxCommand(opts SandboxOptions) func(*exec.Cmd) error {
	enforced, _, detail := SandboxStatus(opts)
	exe, _ := sandboxExecutable(opts)
	spec := sandboxSpec{Write: WritablePaths(opts), Network: opts.Network}
	var once sync.Once
	return func(cmd *exec.Cmd) error {
		if !enforced {
			if opts.Mode != SandboxOff && opts.Notify != nil {
				once.Do(func() { opts.Notify(detail) })
			}
			return nil
		}
		if cmd.Err != nil {
			return cmd.Err
		}
		s := spec
		s.Argv0 = cmd.Path
		if len(cmd.Args) > 0 {
			s.Argv0 = cmd.Args[0]
		}
		enc, err := s.encode()
		if err != nil {
			return err
		}
		var rest []string
		if len(cmd.Args) > 1 {
			rest = cmd.Args[1:]
		}
		cmd.Args = append([]string{exe, SandboxArg, enc, "--", cmd.Path}, rest...)
		cmd.Path = exe
		return nil
	}
}

// parseSandboxArgs splits `<policy> -- <path> <args…>` (a leading
// SandboxArg is tolerated).
func parseSandboxArgs(args []string) (sandboxSpec, string, []string, error) {
	if len(args) > 0 && args[0] == SandboxArg {
		args = args[1:]
	}
	if len(args) < 3 || args[1] != "--" {
		return sandboxSpec{}, "", nil, fmt.Errorf("sandbox: want <policy> -- <path> [args...], got %d arguments", len(args))
	}
	spec, err := decodeSpec(args[0])
	if err != nil {
		return sandboxSpec{}, "", nil, err
	}
	path := args[2]
	argv0 := spec.Argv0
	if argv0 == "" {
		argv0 = path
	}
	return spec, path, append([]string{argv0}, args[3:]...), nil
}
