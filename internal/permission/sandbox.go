package permission

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
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
	// CacheFor is the workspace whose private toolchain caches commands
	// use (caches.go), Workspace when empty: a plan worker's checkout
	// builds with its project's, not with a cold set of its own.
	CacheFor string
	// Home is Reasonix's home. It is deliberately not writable from bash,
	// so a command cannot edit the decision log or the configuration;
	// SandboxStatus warns when a writable path covers it. Its folder
	// "cache" is the exception: confined commands keep their toolchain
	// caches there, in place of the person's (caches.go).
	Home string
	// Network allows TCP bind and connect ([sandbox] network = true).
	// Without it, UDP, raw and unix-socket creation is refused too where
	// the platform allows a seccomp filter, and abstract unix sockets are
	// scoped by Landlock (ABI 6).
	Network bool
	// TempDir is the run's private temporary directory (the children's
	// TMPDIR). When set, it is the only temp dir commands may write: the
	// shared /tmp, /var/tmp and /dev/shm are left out.
	TempDir string
	// DenyRead are absolute paths commands may not read ([sandbox]
	// deny_read and the defaults, see DenyReadPaths); read access becomes
	// an allow-list of everything else. DenyReadExcept are paths beneath
	// them that stay readable (the home's skills).
	DenyRead       []string
	DenyReadExcept []string
	// Hide is what commands must not read inside writable trees
	// (HiddenReads, one per checkout whose rules apply: a plan worker's
	// worktree and the workspace): Landlock cannot deny it, so each
	// command that has some to hide starts in a mount namespace where it
	// reads as empty (Linux, where user namespaces are available;
	// elsewhere the gate alone keeps it). Nil entries are skipped.
	Hide []*Hidden
	// Protect is what commands must not write inside writable trees
	// (ProtectedWrites, one per checkout as for Hide): each command that
	// has some starts in a mount namespace where those files and folders
	// are read-only mounts of themselves (Linux, where user namespaces
	// are available; elsewhere the gate alone keeps them). Nil entries
	// are skipped.
	Protect []*Hidden
	// Bus is the user's D-Bus session bus (FindSessionBus), the way to
	// the Secret Service: where commands may create unix sockets
	// (Network), each starts with its socket hidden, or, for an
	// abstract address, with abstract sockets scoped (see bus.go).
	Bus SessionBus
	// KeysOnBus reports whether Reasonix's own credentials are kept in
	// the Secret Service; asked once, only when the bus cannot be kept
	// from commands that way: then they may not create unix sockets at
	// all. May be nil (no).
	KeysOnBus func() bool
	// Redact lists dotenv files (KEY=VALUE lines) holding secrets of
	// Reasonix's own (an api_key_env variable read from the workspace's
	// .env): each command starts with a copy of the file that leaves
	// those variables' lines out mounted over it (the helper, as for
	// Hide), so the rest of the file still reaches the project's tools.
	Redact []Redaction
	// Orphans, when set, ends what commands leave running outside their
	// process group (see [Orphans]); every Sandbox of a process must
	// share the one it has.
	Orphans *Orphans
	// Notify is called once, the first time a command runs unconfined
	// because Landlock is missing, or cannot hide what Hide lists or
	// protect what Protect lists; may be nil.
	Notify func(string)
}

// WritablePaths lists where a sandboxed command may write: the workspace,
// allow_write, temp dirs, the commands' private toolchain caches, the
// caches of the toolchains those do not cover yet, and a few device
// files. Paths that do not exist are skipped when the sandbox is applied.
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
	if opts.TempDir != "" {
		add(opts.TempDir)
	} else {
		add(os.TempDir())
		add(os.Getenv("TMPDIR"))
		for _, p := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
			add(p)
		}
	}
	add("/dev/pts")
	for _, p := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx"} {
		add(p)
	}
	// Toolchain caches: confined commands get private ones (cacheEnv),
	// writable here, and the person's stay read-only: what a tool
	// cached, the person's own programs trust and run later outside the
	// sandbox (caches.go). The tools cacheEnv cannot redirect yet keep
	// the parts of their caches that hold what was downloaded, not the
	// parts that run on their own later: ~/.cargo/bin is on people's
	// PATH, ~/.cargo/config.toml sets build runners, Gradle runs every
	// script in ~/.gradle/init.d, Maven reads ~/.m2/settings.xml (so
	// `cargo install` and `go install` fail in the sandbox).
	add(privateCacheDir(opts.Home, opts.cacheWorkspace()))
	if c := os.Getenv("CARGO_HOME"); c != "" {
		add(filepath.Join(c, "registry"))
		add(filepath.Join(c, "git"))
	}
	home, err := os.UserHomeDir()
	if err == nil && home != "" {
		for _, d := range toolchainCaches {
			add(filepath.Join(home, filepath.FromSlash(d)))
		}
	}
	// Go records the checksum database's newest signed tree head under
	// the first GOPATH entry, not in a cache it can be told to move; a
	// `go get` with the network would fail without it. A note the
	// checksum database signed runs nothing: the worst a planted one
	// can do is make the person's next lookup fail.
	gopath := filepath.SplitList(os.Getenv("GOPATH"))
	if len(gopath) == 0 && home != "" {
		gopath = []string{filepath.Join(home, "go")}
	}
	if len(gopath) > 0 && gopath[0] != "" {
		add(filepath.Join(gopath[0], "pkg", "sumdb"))
	}
	return out
}

// toolchainCaches are the cache folders under the home that commands may
// still write: cargo keeps its registry's index, a lock and the sources
// it extracted beside its configuration in CARGO_HOME, Gradle its caches
// beside gradle.properties and init scripts in GRADLE_USER_HOME, and
// Maven reads the repository's place from settings.xml, so none can be
// given a private cache by the environment alone without losing the
// person's configuration (registries, mirrors, credentials) or, with the
// network denied, every dependency. Not yet covered (ARCHITECTURE.md).
var toolchainCaches = []string{".cargo/registry", ".cargo/git", ".gradle/caches", ".gradle/wrapper", ".m2/repository"}

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
		net = fmt.Sprintf("network: TCP not restricted (needs Landlock ABI 4, kernel has %d)", abi)
	}
	if !opts.Network && seccompAvailable() {
		net += "; UDP, raw and unix sockets cannot be created"
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

// Protection is one promise of the bash sandbox and whether this system
// keeps it, for `reasonix doctor`.
type Protection struct {
	Name   string
	Active bool
	Detail string
}

// SandboxProtections lists the sandbox's protections and, for each,
// whether it is in force here and why not.
func SandboxProtections(opts SandboxOptions) []Protection {
	enforced, abi, detail := SandboxStatus(opts)
	if !enforced {
		return []Protection{{Name: "sandbox", Detail: detail}}
	}
	out := []Protection{{Name: "Landlock", Active: true, Detail: fmt.Sprintf("ABI %d", abi)}}
	out = append(out, Protection{Name: "writes", Active: true, Detail: "confined to " + strings.Join(WritablePaths(opts), ", ")})
	if opts.TempDir != "" {
		out = append(out, Protection{Name: "private tmp", Active: true,
			Detail: "each run gets its own TMPDIR (" + opts.TempDir + "); /tmp, /var/tmp and /dev/shm are not writable"})
	} else {
		out = append(out, Protection{Name: "private tmp", Detail: "no private temp dir: the shared /tmp, /var/tmp and /dev/shm are writable"})
	}
	if len(opts.DenyRead) > 0 {
		d := "cannot read " + strings.Join(opts.DenyRead, ", ")
		if len(opts.DenyReadExcept) > 0 {
			d += " (except " + strings.Join(opts.DenyReadExcept, ", ") + ")"
		}
		out = append(out, Protection{Name: "read deny list", Active: true, Detail: d})
	} else {
		out = append(out, Protection{Name: "read deny list", Detail: "empty: commands may read every file the user can"})
	}
	caches := Protection{Name: "toolchain caches", Detail: "no Reasonix home: commands keep the person's caches, read-only"}
	if dir := privateCacheDir(opts.Home, opts.cacheWorkspace()); dir != "" {
		caches = Protection{Name: "toolchain caches", Active: true,
			Detail: "commands use their own in " + dir + " (Go, npm, yarn, pnpm, XDG); the person's are read-only. Not yet cargo, Gradle, Maven: their download caches stay writable"}
	}
	out = append(out, caches)
	out = append(out, Protection{Name: "devices", Active: true,
		Detail: "in /dev only " + strings.Join(devReadable, ", ") + " are readable (no raw disks, consoles or kernel log)"})
	mounts := Protection{Name: "mounts", Active: seccompAvailable(),
		Detail: "the mount API (mount, umount, open_tree, move_mount, fsopen, ...) is refused (seccomp)"}
	if !seccompAvailable() {
		mounts.Detail = "no seccomp filter on " + runtime.GOOS + "/" + runtime.GOARCH + ": only Landlock and the dropped capabilities keep commands from mounting"
	}
	out = append(out, mounts, Protection{Name: "capabilities", Active: true,
		Detail: "a command run as root keeps only CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_KILL, CAP_SETUID, CAP_SETGID and CAP_NET_BIND_SERVICE"})
	if bus, ok := busProtection(opts); ok {
		out = append(out, bus)
	}
	if opts.Network {
		out = append(out, Protection{Name: "network", Detail: "allowed ([sandbox] network = true)"})
		return out
	}
	tcp := Protection{Name: "network: TCP", Active: abi >= 4, Detail: "bind and connect denied"}
	if abi < 4 {
		tcp.Detail = fmt.Sprintf("not restricted (needs Landlock ABI 4, kernel has %d)", abi)
	}
	abstract := Protection{Name: "network: abstract unix sockets", Active: abi >= 6, Detail: "scoped to the sandbox (Landlock)"}
	if abi < 6 {
		abstract.Detail = fmt.Sprintf("not scoped by Landlock (needs ABI 6, kernel has %d)", abi)
		if seccompAvailable() {
			abstract.Active, abstract.Detail = true, "closed by the socket filter (Landlock scoping needs ABI 6)"
		}
	}
	filter := Protection{Name: "network: UDP, raw and unix sockets", Active: seccompAvailable(),
		Detail: "cannot be created (seccomp filter); socketpair still works"}
	if !seccompAvailable() {
		filter.Detail = "not restricted: no seccomp socket filter on " + runtime.GOOS + "/" + runtime.GOARCH
	}
	return append(out, tcp, abstract, filter)
}

// Sandbox starts commands, in place of cmd.Start, confined by Landlock to
// writing where WritablePaths allows. Where the sandbox is off or missing
// it starts commands unconfined (and calls opts.Notify once when missing).
//
// Confinement costs no new program: a goroutine locks itself to a fresh
// OS thread, restricts that thread (Landlock and no_new_privs apply per
// thread and are inherited by the processes it starts), starts the command
// from it, and exits without unlocking, so the Go runtime discards the
// thread instead of reusing it. The rest of the process stays unconfined.
// A command with SysProcAttr.Pdeathsig keeps that thread until it exits,
// so the signal comes when Reasonix dies, not when the thread would end.
type Sandbox struct {
	opts   SandboxOptions
	write  []string
	status func() (bool, string)
	// keysOnBus is opts.KeysOnBus, asked once.
	keysOnBus  func() bool
	once       sync.Once
	hideOnce   sync.Once
	redactOnce sync.Once
	// protectOnce: the Notify that Protect cannot be kept.
	protectOnce sync.Once
	busOnce     sync.Once
	rulesets    *rulesetCache
	// denyRead and except are the options' with /dev less devReadable.
	denyRead, except []string
	// cacheEnv is what sends a command's toolchains to the private
	// caches (cacheEnv), worked out at the first command; makeCache
	// makes their folder then, before the ruleset that grants it.
	cacheEnv  func() []string
	makeCache sync.Once
}

// NewSandbox returns the sandbox of opts. The writable paths are resolved
// now, at start-up, as the person's configuration stands; the kernel is
// probed and the report worded at the first command (or Prepare), off the
// path to the first request.
func NewSandbox(opts SandboxOptions) *Sandbox {
	return &Sandbox{
		opts:     opts,
		write:    WritablePaths(opts),
		denyRead: append(slices.Clone(opts.DenyRead), "/dev"),
		except:   append(slices.Clone(opts.DenyReadExcept), devReadable...),
		status: sync.OnceValues(func() (bool, string) {
			enforced, _, detail := SandboxStatus(opts)
			return enforced, detail
		}),
		keysOnBus: sync.OnceValue(func() bool { return opts.KeysOnBus != nil && opts.KeysOnBus() }),
		rulesets:  newRulesetCache(),
		cacheEnv: sync.OnceValue(func() []string {
			return cacheEnv(privateCacheDir(opts.Home, opts.cacheWorkspace()), opts.Network, os.Getenv, readGoEnv(os.Getenv))
		}),
	}
}

// privateCaches makes the folder of the commands' private caches, once,
// and returns the variables that name them (to follow the command's
// environment). A folder that cannot be made is reported, once: the
// caches are then simply not writable, as the person's are not.
func (s *Sandbox) privateCaches() []string {
	dir := privateCacheDir(s.opts.Home, s.opts.cacheWorkspace())
	if dir == "" {
		return nil
	}
	s.makeCache.Do(func() {
		if err := os.MkdirAll(dir, 0o700); err != nil && s.opts.Notify != nil {
			s.opts.Notify("sandbox: cannot make the commands' private toolchain cache folder: " + err.Error())
		}
		markUsed(dir, time.Now())
	})
	return s.cacheEnv()
}

// Redaction names the variables of the dotenv file Path that commands
// may not read (SandboxOptions.Redact).
type Redaction struct {
	Path  string
	Names []string
}

// Start starts cmd confined (tools.Env.Sandbox).
func (s *Sandbox) Start(cmd *exec.Cmd) error {
	enforced, detail := s.status()
	if !enforced {
		if s.opts.Mode != SandboxOff && s.opts.Notify != nil {
			s.once.Do(func() { s.opts.Notify(detail) })
		}
		return cmd.Start()
	}
	if cmd.Err != nil {
		return cmd.Err
	}
	// Only a confined command's toolchains use the private caches: an
	// unconfined one (sandbox off or missing) may write the person's
	// caches anyway, and keeps them as the person set them.
	if env := s.privateCaches(); len(env) > 0 {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, env...)
	}
	s.opts.Orphans.prepare()
	c := s.confinement()
	hide := s.hiddenFiles(s.opts.Hide)
	protect := s.hiddenFiles(s.opts.Protect)
	bus := s.busFiles()
	var redact []hiddenFile
	for _, r := range redactFiles(s.opts.Redact) {
		if !slices.ContainsFunc(hide, func(h hiddenFile) bool { return h.path == r.path }) {
			redact = append(redact, r)
		}
	}
	if len(hide)+len(protect)+len(bus)+len(redact) > 0 {
		if ok, why := hideAvailable(); ok {
			c.hide = append(append(append(protect, hide...), bus...), redact...)
		} else {
			if len(redact) > 0 && s.opts.Notify != nil {
				s.redactOnce.Do(func() {
					s.opts.Notify("the sandbox cannot keep the API key lines of " + pathList(redact) + " from commands (" + why +
						"): keep the key in the credential store (reasonix setup) or the environment instead")
				})
			}
			if len(hide) > 0 && s.opts.Notify != nil {
				s.hideOnce.Do(func() {
					s.opts.Notify("the sandbox cannot hide " + pathList(hide) + " from commands (" + why + "); the Read deny rules naming them are enforced by the gate only")
				})
			}
			if len(protect) > 0 && s.opts.Notify != nil {
				s.protectOnce.Do(func() {
					s.opts.Notify("the sandbox cannot make " + pathList(protect) + " read-only for commands (" + why + "); the Edit deny rules naming them are enforced by the gate only")
				})
			}
			if len(bus) > 0 {
				s.busUnguarded(&c, why)
			}
		}
	}
	if s.opts.Bus.Abstract && s.unixSockets() && !c.scopeAbstract {
		s.busUnguarded(&c, fmt.Sprintf("an abstract socket, which Landlock scopes from ABI 6; the kernel has %d", landlockABI()))
	}
	return startConfined(cmd, c)
}

// hiddenFiles lists what each Hidden of list hides (or protects) now,
// each path once (a worktree under the workspace is walked by both).
func (s *Sandbox) hiddenFiles(list []*Hidden) []hiddenFile {
	var out []hiddenFile
	for _, h := range list {
		if h == nil {
			continue
		}
		for _, f := range h.files() {
			if !slices.ContainsFunc(out, func(o hiddenFile) bool { return o.path == f.path }) {
				f.readOnly = h.readOnly
				out = append(out, f)
			}
		}
	}
	return out
}

func pathList(files []hiddenFile) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.path
	}
	return strings.Join(names, ", ")
}

// unixSockets reports whether commands may create unix sockets: with
// Network, or where no seccomp filter refuses them.
func (s *Sandbox) unixSockets() bool { return s.opts.Network || !seccompAvailable() }

// busFiles lists the session bus's sockets that exist now, when commands
// could connect to them.
func (s *Sandbox) busFiles() []hiddenFile {
	if !s.unixSockets() || len(s.opts.Bus.Paths) == 0 {
		return nil
	}
	return busSockets(s.opts.Bus.Paths)
}

// busUnguarded handles a session bus the sandbox can neither hide nor
// scope (why says why): where Reasonix's keys are in the Secret Service,
// c refuses unix sockets, and the person is told once either way.
func (s *Sandbox) busUnguarded(c *confinement, why string) {
	keys := s.keysOnBus()
	if keys && seccompAvailable() {
		c.noUnix = true
	}
	if s.opts.Notify == nil {
		return
	}
	s.busOnce.Do(func() {
		switch {
		case keys && seccompAvailable():
			s.opts.Notify("the sandbox cannot hide the D-Bus session bus from commands (" + why + "), and Reasonix's keys are in the Secret Service behind it: commands cannot create unix sockets, though [sandbox] network = true")
		default:
			s.opts.Notify("the sandbox cannot hide the D-Bus session bus from commands (" + why + "): they can ask the Secret Service for every secret unlocked in it")
		}
	})
}

// Prepare does ahead of a command what Start does first for any command:
// it probes the kernel and, before the first command, builds the ruleset,
// so a Start that follows finds it ready and only checks it again. The
// session calls it (tools.Env.PrepareSandbox) while the gate and the
// checkpoint before a change run. It confines nothing and reports
// nothing: a failure here is met again, and reported, by Start.
func (s *Sandbox) Prepare() {
	if enforced, _ := s.status(); enforced {
		// The ruleset grants the private caches' folder: built before
		// that exists, Start would find it new and build it again.
		s.privateCaches()
		prepareConfinement(s.confinement())
	}
}

func (s *Sandbox) confinement() confinement {
	return confinement{write: s.write, network: s.opts.Network,
		scopeAbstract: (!s.opts.Network || s.opts.Bus.Abstract) && landlockABI() >= 6,
		denyRead:      s.denyRead, except: s.except, rulesets: s.rulesets, orphans: s.opts.Orphans}
}

// devReadable are the device files and folders under /dev a command may
// read: the ones it may write (see WritablePaths) and /dev/shm. The rest
// of /dev is on the read deny list of every command, whatever the
// configuration: raw disks (a root command could read every file's
// blocks there, past the deny list and the hidden files), consoles'
// screens (/dev/vcs*), input devices and the like. The links /dev/fd,
// /dev/stdin, … are judged at their targets in /proc.
var devReadable = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"}

// confinement is what startConfined applies to one command.
type confinement struct {
	write   []string
	network bool
	// noUnix refuses unix sockets even with network (busUnguarded);
	// scopeAbstract scopes abstract unix sockets (Landlock ABI 6), as
	// without network, or for a session bus at an abstract address.
	noUnix, scopeAbstract bool
	denyRead, except      []string
	rulesets              *rulesetCache // shared by the commands of one Sandbox
	// hide are what the command starts with hidden (startHidden).
	hide []hiddenFile
	// orphans records the command and sweeps after it (nil: neither).
	orphans *Orphans
}

// socketRule is what the seccomp filter lets a command do with sockets
// (the helper takes it as a number).
type socketRule int

const (
	// socketsTCP: only TCP sockets, which Landlock governs (no network).
	socketsTCP socketRule = iota
	// socketsAll: every kind (network).
	socketsAll
	// socketsNoUnix: every kind but unix sockets (network, where the
	// session bus can be kept from commands no other way).
	socketsNoUnix
)

func (c confinement) sockets() socketRule {
	switch {
	case !c.network:
		return socketsTCP
	case c.noUnix:
		return socketsNoUnix
	}
	return socketsAll
}

// rulesetCache keeps the ruleset a confinement built for its next
// command (Linux: see rulesetState).
type rulesetCache struct {
	mu    sync.Mutex
	state *rulesetState
}

// DefaultDenyRead are the credential stores commands and file tools may
// not read, relative to the user's home directory.
// .dbus-keyrings holds the cookies a D-Bus bus over TCP authenticates
// with (see bus.go); .local/share/keyrings and .local/share/kwalletd are
// the files GNOME Keyring and KWallet keep the Secret Service's secrets
// in (unencrypted where the keyring has no password). Then the files
// other tools keep tokens in as plain text (git's credential store, the
// GitHub and Azure CLIs, publishing credentials), and web browsers' and
// mail clients' profiles: cookies and saved sessions for every site the
// person is signed in to, the browser UI of `reasonix serve` among them.
// (~/.npmrc is left readable: npm reads its registry settings there.)
var DefaultDenyRead = []string{".ssh", ".aws", ".gnupg", ".config/gcloud", ".netrc", ".docker/config.json", ".kube",
	".dbus-keyrings", ".local/share/keyrings", ".local/share/kwalletd",
	".git-credentials", ".config/gh", ".config/hub", ".azure", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
	".terraform.d/credentials.tfrc.json",
	".mozilla", ".thunderbird", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge",
	".config/vivaldi", ".config/opera", "snap/firefox", "snap/chromium", ".var/app/org.mozilla.firefox",
	".var/app/com.google.Chrome", ".var/app/org.chromium.Chromium", ".var/app/com.brave.Browser",
	"Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
	"Library/Application Support/BraveSoftware", "Library/Application Support/Microsoft Edge", "Library/Cookies", "Library/Safari"}

// homeReadable are the parts of Reasonix's home a run needs to read (skill
// scripts, agent and command definitions, plan workers' worktrees, the
// commands' private toolchain caches); the rest (config with keys, the decision log, history) is denied.
var homeReadable = []string{"skills", "agents", "commands", "worktrees", "cache"}

// DenyReadPaths builds the read deny list: DefaultDenyRead under
// userHome, the Reasonix home less homeReadable, and the configured
// entries (a leading ~/ is the user's home; relative entries are
// ignored). It returns the denied paths and the exceptions beneath them.
func DenyReadPaths(userHome, reasonixHome string, configured []string) (deny, except []string) {
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			deny = append(deny, p)
		}
	}
	if userHome != "" {
		for _, d := range DefaultDenyRead {
			add(filepath.Join(userHome, d))
		}
	}
	if reasonixHome != "" {
		add(reasonixHome)
		for _, d := range homeReadable {
			except = append(except, filepath.Join(filepath.Clean(reasonixHome), d))
		}
	}
	for _, c := range configured {
		if rest, ok := strings.CutPrefix(c, "~/"); ok && userHome != "" {
			c = filepath.Join(userHome, rest)
		}
		add(c)
	}
	return deny, except
}

// denied reports whether p (absolute, clean) lies in a denied path and
// in none of the exceptions.
func denied(p string, deny, except []string) (string, bool) {
	for _, d := range deny {
		if within(p, d) {
			for _, e := range except {
				if within(p, e) {
					return "", false
				}
			}
			return d, true
		}
	}
	return "", false
}
