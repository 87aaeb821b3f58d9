//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock system calls and constants from linux/landlock.h. The numbers
// are shared by every architecture built here (mips has its own table and
// is excluded by the build tag).
const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	landlockCreateRulesetVersion = 1 << 0
	landlockRulePathBeneath      = 1
	prSetNoNewPrivs              = 38
	oPath                        = 0x200000

	fsWriteFile  = 1 << 1
	fsReadFile   = 1 << 2
	fsReadDir    = 1 << 3
	fsRemoveDir  = 1 << 4
	fsRemoveFile = 1 << 5
	fsMakeChar   = 1 << 6
	fsMakeDir    = 1 << 7
	fsMakeReg    = 1 << 8
	fsMakeSock   = 1 << 9
	fsMakeFifo   = 1 << 10
	fsMakeBlock  = 1 << 11
	fsMakeSym    = 1 << 12
	fsRefer      = 1 << 13 // ABI 2
	fsTruncate   = 1 << 14 // ABI 3

	netBindTCP    = 1 << 0 // ABI 4
	netConnectTCP = 1 << 1

	scopeAbstractUnixSocket = 1 << 0 // ABI 6
)

func landlockABI() int {
	v, _, errno := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, landlockCreateRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// writeRights are the access rights the sandbox handles for an ABI. Reads
// and execution are not handled at all, so they stay unrestricted.
func writeRights(abi int) (dir, file uint64) {
	dir = fsWriteFile | fsRemoveDir | fsRemoveFile | fsMakeChar | fsMakeDir | fsMakeReg |
		fsMakeSock | fsMakeFifo | fsMakeBlock | fsMakeSym
	file = fsWriteFile
	if abi >= 2 {
		// REFER is always denied once any right is handled; handling it
		// lets us grant renames within the writable trees.
		dir |= fsRefer
	}
	if abi >= 3 {
		dir |= fsTruncate
		file |= fsTruncate
	}
	return dir, file
}

// startConfined starts cmd from a throwaway OS thread restricted to
// writing beneath write (see Sandbox).
//
// The kernel sends a child its parent-death signal (Pdeathsig) when the
// thread that forked it ends, not the process; so the thread stays until
// the child has exited, waiting for that without reaping it (cmd.Wait
// still does). The goroutine ends with the child; a caller that never
// waits leaves it parked in the kernel until then.
func startConfined(cmd *exec.Cmd, c confinement) error {
	done := make(chan error, 1)
	go func() {
		// Never unlocked: when this goroutine returns, the runtime ends the
		// thread and its restrictions with it. LockOSThread also makes the
		// runtime start any new thread it needs from a clean template
		// thread, never by cloning this one.
		runtime.LockOSThread()
		var err error
		if len(c.hide) > 0 {
			// The helper restricts itself after hiding c.hide: a
			// restricted thread could not mount.
			err = startHidden(cmd, c, c.hide)
		} else if err = restrictThread(c); err == nil {
			err = c.orphans.start(cmd)
		}
		done <- err
		if err != nil || cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig == 0 {
			return
		}
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		// What the command left behind outside its process group.
		c.orphans.ended()
	}()
	return <-done
}

// prepareConfinement builds c's ruleset ahead of the first command that
// will restrict a thread with it. Once built, the command's own check
// brings it up to date (a stat per path, a listing per changed
// directory): doing that here too would only do it twice.
func prepareConfinement(c confinement) {
	abi := landlockABI()
	if abi < 1 || c.rulesets == nil {
		return
	}
	rc := c.rulesets
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.state.built {
		_, _ = rc.ruleset(c, abi) // an error comes again at the command
	}
}

// lockedRuleset returns c's ruleset for this kernel's Landlock with the
// cache's lock held until unlock: another command's start may not rebuild
// (and close) it meanwhile. Without a cache in c the ruleset is built for
// this one use, and unlock closes it.
func lockedRuleset(c confinement) (fd int, unlock func(), err error) {
	abi := landlockABI()
	if abi < 1 {
		return -1, nil, errors.New("sandbox: Landlock is not available in this kernel")
	}
	rc, own := c.rulesets, c.rulesets == nil
	if own {
		rc = newRulesetCache()
	}
	rc.mu.Lock()
	unlock = func() {
		rc.mu.Unlock()
		if own {
			rc.close()
		}
	}
	fd, err = rc.ruleset(c, abi)
	if err != nil {
		unlock()
		return -1, nil, err
	}
	return fd, unlock, nil
}

// restrictThread applies the ruleset to the calling thread: from then on
// it, and every process it starts, may write only beneath c.write; may
// read everything but c.denyRead (when set); and, unless c.network, may
// neither bind nor connect TCP, connect to abstract unix sockets outside
// its domain, nor create UDP, raw or unix sockets, as far as the kernel
// can say so; may not use the mount API; and holds no capability but
// keptCaps. Paths that do not exist are skipped.
func restrictThread(c confinement) error {
	// The ruleset stays locked until the thread is restricted.
	fd, unlock, err := lockedRuleset(c)
	if err != nil {
		return err
	}
	defer unlock()
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, uintptr(fd), 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", errno)
	}
	if err := installFilter(c.sockets()); err != nil {
		return err
	}
	return dropCapabilities()
}

// rulesetState is the Landlock ruleset a confinement built, kept for its
// next command. A ruleset can restrict any number of threads, and rules
// can be added to it between uses. Building it opens and adds a rule for
// every entry of every directory on the way to a denied path (hundreds in
// a home directory or /tmp), which cost more than starting the command;
// reused, a command costs a stat of each path the rules depend on, and a
// listing of each directory on the way that changed, with a rule only
// for its entries that are new since.
//
// key names what the rules were built from: the denied paths that exist,
// the directories on the way to them, and the writable and excepted paths,
// with the file each one is. When any of that changes the ruleset is
// built again from scratch. listed holds each directory on the way as it
// was when it was last listed, and which file each of its entries was
// granted as.
type rulesetState struct {
	built  bool
	fd     int
	key    string
	listed map[string]*dirGrants
	// added counts the rules added to the ruleset, for tests.
	added int
	// buf holds directory listings (see grantEntries).
	buf []byte
}

// dirGrants is what a ruleset granted of one directory on the way to a
// denied path: the directory as stat last saw it (trusted says whether
// that listing may be reused as it is) and, per entry name, the inode
// number its rule was added for.
//
// An entry listed again under the same name and inode number needs no
// new rule: a Landlock rule holds a reference to the inode it names, so
// while the ruleset lives that inode stays allocated and its number
// cannot pass to another file. Skipping a rule can only leave a file
// unreadable, never make one readable: every entry present is granted
// (as the first build would), and nothing else.
type dirGrants struct {
	stamp   dirStamp
	trusted bool
	granted map[string]*grantedEntry
	// gen counts the listings; an entry not seen in the newest is gone.
	gen uint32
}

// grantedEntry is one entry a rule was added for: the inode number, and
// the listing that last saw it.
type grantedEntry struct {
	ino uint64
	gen uint32
}

func newRulesetCache() *rulesetCache {
	rc := &rulesetCache{state: new(rulesetState)}
	// The ruleset lives as long as its Sandbox (a plan worker's
	// ends with the worker).
	runtime.AddCleanup(rc, (*rulesetState).drop, rc.state)
	return rc
}

// drop closes the ruleset and forgets what it was built from.
func (st *rulesetState) drop() {
	if st.built {
		syscall.Close(st.fd)
	}
	*st = rulesetState{}
}

// dirStamp is what stat says about a directory: which one it is and when
// its entries last changed.
type dirStamp struct {
	dev, ino     uint64
	mtime, ctime int64
}

// racyWindow: a directory changed this close to when it was listed may
// have changed again within the same timestamp (file times are coarse),
// so its listing is not trusted for reuse. That is a second where the
// file system may keep whole seconds; fineRacyWindow where its times have
// a fraction of a second, which Linux takes from a clock that moves by
// the timer tick (at most 10 ms). A busy directory (/tmp, which each run
// changes as it starts) was otherwise listed again at every command of
// a run's first second. A listing trusted too early could only leave a
// new entry unreadable, never grant anything.
const (
	racyWindow     = time.Second
	fineRacyWindow = 50 * time.Millisecond
)

// trustedAt reports whether a listing made at listedAt of a directory
// with this stamp may be reused while the stamp stays the same.
func (d dirStamp) trustedAt(listedAt time.Time) bool {
	changed := max(d.mtime, d.ctime)
	window := racyWindow
	if d.mtime%int64(time.Second) != 0 && d.ctime%int64(time.Second) != 0 {
		window = fineRacyWindow
	}
	return listedAt.Sub(time.Unix(0, changed)) > window
}

func (rc *rulesetCache) close() { rc.state.drop() }

// ruleset returns the ruleset for c, built or brought up to date. The
// caller holds rc.mu.
func (rc *rulesetCache) ruleset(c confinement, abi int) (int, error) {
	dirRights, fileRights := writeRights(abi)
	var readDir, readFile uint64
	if len(c.denyRead) > 0 {
		readDir, readFile = fsReadFile|fsReadDir, fsReadFile
	}
	onPath, isDenied := deniedRoots(c.denyRead)
	key, stamps := rulesetKey(c, onPath, isDenied)
	st := rc.state
	if !st.built || st.key != string(key) || st.stale() {
		st.drop()
		fd, err := createRuleset(c, abi, dirRights|readDir)
		if err != nil {
			return 0, err
		}
		*st = rulesetState{built: true, fd: fd, key: string(key), listed: map[string]*dirGrants{}}
		if err := st.grantFixed(c, onPath, isDenied, dirRights, fileRights, readDir, readFile); err != nil {
			st.drop()
			return 0, err
		}
	}
	if err := st.grantEntries(onPath, isDenied, stamps, readDir, readFile); err != nil {
		st.drop()
		return 0, err
	}
	return st.fd, nil
}

// staleSlack is how many more rules than twice the live ones a ruleset
// may hold before it is built afresh (see stale).
const staleSlack = 256

// stale reports whether most of the ruleset's entry rules are for files
// no longer listed. Such a rule still holds its inode: a removed file's
// disk space is not given back while the ruleset lives, and every
// restriction copies the rule. In a busy directory (/tmp) they pile up
// command after command, so past that point the ruleset is built again,
// which costs one full listing of each directory on the way.
func (st *rulesetState) stale() bool {
	live := 0
	for _, g := range st.listed {
		live += len(g.granted)
	}
	return st.added > 2*live+staleSlack
}

func createRuleset(c confinement, abi int, fsRights uint64) (int, error) {
	var attr struct{ fs, net, scoped uint64 }
	attr.fs = fsRights
	if abi >= 4 && !c.network {
		attr.net = netBindTCP | netConnectTCP
	}
	if abi >= 6 && c.scopeAbstract {
		attr.scoped = scopeAbstractUnixSocket
	}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return 0, fmt.Errorf("sandbox: landlock_create_ruleset: %w", errno)
	}
	return int(fd), nil
}

// grantFixed adds the rules that depend only on the key: the writable
// trees, the listing of each directory on the way to a denied path, and
// the exceptions; with nothing denied that exists, reading everything.
func (st *rulesetState) grantFixed(c confinement, onPath, isDenied map[string]bool, dirRights, fileRights, readDir, readFile uint64) error {
	for _, p := range c.write {
		if _, err := addPathRule(st.fd, p, dirRights|readDir, fileRights|readFile, false); err != nil {
			return err
		}
	}
	if len(c.denyRead) == 0 {
		return nil
	}
	if len(onPath) == 0 {
		_, err := addPathRule(st.fd, "/", readDir, readFile, true)
		return err
	}
	for dir := range onPath {
		if isDenied[dir] {
			continue
		}
		if _, err := addPathRule(st.fd, dir, fsReadDir, 0, true); err != nil {
			return err
		}
	}
	for _, e := range c.except {
		if _, err := addPathRule(st.fd, e, readDir, readFile, true); err != nil {
			return err
		}
	}
	return nil
}

// grantEntries grants full read access to each entry of each directory on
// the way to a denied path that is not itself on such a way. A directory
// unchanged since a listing that is trusted is not listed again; one that
// changed is, and only its entries that are new, or are now another file
// under the same name, get a rule (see dirGrants). Symlinks are not
// granted as such: access through one is judged at its target.
//
// A busy directory (/tmp, a home) is listed again at nearly every
// command, so the listing is read straight from getdents64 into a buffer
// kept for the next time, and names already granted cost a map lookup,
// not a string.
func (st *rulesetState) grantEntries(onPath, isDenied map[string]bool, stamps map[string]dirStamp, readDir, readFile uint64) error {
	// The names in each directory that are themselves on the way.
	skip := map[string]map[string]bool{}
	for p := range onPath {
		if p == "/" || p == "." {
			continue
		}
		dir := filepath.Dir(p)
		if skip[dir] == nil {
			skip[dir] = map[string]bool{}
		}
		skip[dir][filepath.Base(p)] = true
	}
	for dir := range onPath {
		if isDenied[dir] {
			continue
		}
		stamp, ok := stamps[dir] // taken before the listing, as it must be
		g := st.listed[dir]
		if g != nil && ok && g.trusted && g.stamp == stamp {
			continue
		}
		if g == nil || !ok || g.stamp.dev != stamp.dev || g.stamp.ino != stamp.ino {
			// Another directory under this path: nothing granted in the
			// old one says anything about this one's entries.
			g = &dirGrants{granted: map[string]*grantedEntry{}}
		}
		g.gen++
		listedAt := time.Now()
		err := st.eachEntry(dir, func(dirFD int, name []byte, ino uint64, typ byte) error {
			if skip[dir][string(name)] {
				return nil
			}
			if e := g.granted[string(name)]; e != nil && e.ino == ino {
				e.gen = g.gen
				return nil
			}
			got, err := addEntryRule(st.fd, dirFD, name, ino, typ, readDir, readFile)
			if err != nil {
				return fmt.Errorf("%w (in %s)", err, dir)
			}
			n := string(name)
			st.added++
			// Kept only when the rule went to the file the listing
			// named: if the name changed hands in between, the next
			// listing grants it again.
			if got != 0 && got == ino {
				g.granted[n] = &grantedEntry{ino: ino, gen: g.gen}
			} else {
				delete(g.granted, n)
			}
			return nil
		})
		if err == errListing {
			delete(st.listed, dir)
			continue
		}
		if err != nil {
			return err
		}
		for name, e := range g.granted {
			if e.gen != g.gen {
				delete(g.granted, name) // gone from the directory
			}
		}
		g.stamp = stamp
		g.trusted = ok && stamp.trustedAt(listedAt)
		st.listed[dir] = g
	}
	return nil
}

// errListing: a directory could not be listed.
var errListing = errors.New("sandbox: cannot list directory")

// eachEntry calls fn with the listing's descriptor of dir, the name
// (valid only during the call, and followed by a NUL in memory) and inode
// number of each entry of dir but "." and "..", in directory order;
// errListing when dir cannot be read.
func (st *rulesetState) eachEntry(dir string, fn func(dirFD int, name []byte, ino uint64, typ byte) error) error {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return errListing
	}
	defer syscall.Close(fd)
	if st.buf == nil {
		st.buf = make([]byte, 32<<10)
	}
	for {
		n, err := syscall.ReadDirent(fd, st.buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return errListing
		}
		if n <= 0 {
			return nil
		}
		// Each record is struct linux_dirent64: u64 inode, s64 offset,
		// u16 record length, u8 type, then the NUL-terminated name.
		b := st.buf[:n]
		for len(b) >= 19 {
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			if reclen < 19 || reclen > len(b) {
				break
			}
			ino := *(*uint64)(unsafe.Pointer(&b[0]))
			typ := b[18]
			name := b[19:reclen]
			i := bytes.IndexByte(name, 0)
			b = b[reclen:]
			if i < 0 {
				continue // the kernel ends each name with a NUL
			}
			name = name[:i]
			if ino == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			if err := fn(fd, name, ino, typ); err != nil {
				return err
			}
		}
	}
}

// deniedRoots returns the directories on the way from / to each denied path
// that exists (the path itself included) and the denied paths themselves,
// each both as written and with symlinks resolved.
func deniedRoots(deny []string) (onPath, isDenied map[string]bool) {
	onPath = map[string]bool{}
	isDenied = map[string]bool{}
	var st syscall.Stat_t
	for _, d := range deny {
		if err := syscall.Lstat(d, &st); err != nil {
			// Neither d nor its resolution exists (Lstat follows every
			// symlink but the last, and a dangling last one is found):
			// no need to resolve it, which stats every component.
			continue
		}
		for _, p := range []string{d, resolved(d)} {
			if p == "" {
				continue
			}
			if p != d && syscall.Lstat(p, &st) != nil {
				continue
			}
			isDenied[p] = true
			for q := p; ; q = filepath.Dir(q) {
				onPath[q] = true
				if q == "/" || q == "." {
					break
				}
			}
		}
	}
	return onPath, isDenied
}

// rulesetKey describes what a ruleset was built from: whether it
// restricts the network and scopes abstract unix sockets (attributes
// fixed when it is created), each directory on the way to a denied path
// and each denied path (which file it is), and which file each writable
// path (symlinks followed, as its rule does) and each exception is, "-"
// for one that does not exist.
// It is built at every command, so into one buffer, without fmt; it also
// returns what the stat of each directory on the way said (see
// grantEntries), the paths that could not be stat'ed left out.
func rulesetKey(c confinement, onPath, isDenied map[string]bool) ([]byte, map[string]dirStamp) {
	b := make([]byte, 0, 4096)
	stamps := make(map[string]dirStamp, len(onPath))
	var st syscall.Stat_t
	stat := func(tag byte, p string, follow bool) bool {
		var err error
		if follow {
			err = syscall.Stat(p, &st)
		} else {
			err = syscall.Lstat(p, &st)
		}
		b = strconv.AppendQuote(append(b, tag, ' '), p)
		if err != nil {
			b = append(b, " -\n"...)
			return false
		}
		b = strconv.AppendUint(append(b, ' '), uint64(st.Dev), 10)
		b = strconv.AppendUint(append(b, ' '), uint64(st.Ino), 10)
		b = strconv.AppendUint(append(b, ' '), uint64(st.Mode&syscall.S_IFMT), 8)
		b = append(b, '\n')
		return true
	}
	// Fixed for one Sandbox today, but a ruleset kept across a change
	// of either would confine the next command as the last one.
	b = append(b, 'n', ' ', keyFlag(c.network), ' ', 'a', ' ', keyFlag(c.scopeAbstract), '\n')
	for _, p := range c.write {
		stat('w', p, true)
	}
	for _, p := range slices.Sorted(maps.Keys(onPath)) {
		if stat('o', p, false) {
			stamps[p] = stampOf(&st)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(isDenied)) {
		b = append(strconv.AppendQuote(append(b, 'd', ' '), p), '\n')
	}
	for _, p := range c.except {
		stat('e', p, false)
	}
	return b, stamps
}

// keyFlag is a bool as one key byte.
func keyFlag(v bool) byte {
	if v {
		return '1'
	}
	return '0'
}

func stampOf(st *syscall.Stat_t) dirStamp {
	return dirStamp{dev: uint64(st.Dev), ino: uint64(st.Ino), mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// resolved is p with symlinks resolved, or "" when that fails or changes
// nothing.
func resolved(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil || r == p {
		return ""
	}
	return r
}

// addPathRule grants access beneath path: the directory rights for a
// directory, the file rights for anything else. A path that cannot be
// opened (a cache or temp dir that does not exist) is skipped, and so is
// one that no right applies to. noFollow opens a symlink itself rather
// than its target. It returns the inode number of the file a rule was
// added for, 0 when none was.
func addPathRule(rulesetFD int, path string, dirRights, fileRights uint64, noFollow bool) (uint64, error) {
	flags := oPath | syscall.O_CLOEXEC
	if noFollow {
		flags |= syscall.O_NOFOLLOW
	}
	fd, err := syscall.Open(path, flags, 0)
	if err != nil {
		return 0, nil
	}
	defer syscall.Close(fd)
	got, err := addFDRule(rulesetFD, fd, dirRights, fileRights)
	if err != nil {
		return 0, fmt.Errorf("sandbox: landlock_add_rule %s: %w", path, err)
	}
	return got, nil
}

// addEntryRule is addPathRule for the entry name of the directory open
// as dirFD, which the listing said has inode number ino and type typ (a
// DT_ constant): opened where the listing found it, with one step of
// path lookup rather than one per component of its full path, and given
// the rights of the type the listing said without asking the file (a
// symlink is not opened at all). A ruleset's first build does this for
// every entry of every directory on the way to a denied path (hundreds
// in a temp dir or a home), at three system calls an entry instead of
// four. It returns ino for the rule it added: when the name changed
// hands between the listing and the open, the rule went to another file
// than ino, which a later listing may then take as granted; that file
// stays unreadable until the ruleset is rebuilt, and nothing the rules
// did not grant becomes readable. A type that no longer fits is found by
// the kernel refusing the rule, and then asked of the file. name must be
// followed by a NUL in memory, as a directory listing's names are.
func addEntryRule(rulesetFD, dirFD int, name []byte, ino uint64, typ byte, dirRights, fileRights uint64) (uint64, error) {
	if len(name) == 0 || cap(name) == len(name) || name[:len(name)+1][len(name)] != 0 {
		return 0, errors.New("sandbox: entry name not NUL-terminated")
	}
	if typ == syscall.DT_LNK {
		return 0, nil
	}
	fd, _, errno := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(dirFD), uintptr(unsafe.Pointer(&name[0])),
		uintptr(oPath|syscall.O_CLOEXEC|syscall.O_NOFOLLOW), 0, 0, 0)
	if errno != 0 {
		return 0, nil
	}
	defer syscall.Close(int(fd))
	if rights := fileRights; typ != syscall.DT_UNKNOWN && rights != 0 {
		if typ == syscall.DT_DIR {
			rights = dirRights
		}
		err := addRule(rulesetFD, int(fd), rights)
		if err == nil {
			return ino, nil
		}
		if err != syscall.EINVAL {
			return 0, fmt.Errorf("sandbox: landlock_add_rule %s: %w", name, err)
		}
		// No longer the type the listing said: ask the file.
	}
	got, err := addFDRule(rulesetFD, int(fd), dirRights, fileRights)
	if err != nil {
		return 0, fmt.Errorf("sandbox: landlock_add_rule %s: %w", name, err)
	}
	return got, nil
}

// addFDRule adds the rule for the file open as fd (O_PATH) and returns
// its inode number, or 0 when no right applies to it.
func addFDRule(rulesetFD, fd int, dirRights, fileRights uint64) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0, nil
	}
	rights := dirRights
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		rights = fileRights
	}
	if rights == 0 || st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		return 0, nil
	}
	if err := addRule(rulesetFD, fd, rights); err != nil {
		return 0, err
	}
	return uint64(st.Ino), nil
}

// addRule grants rights beneath the file open as fd.
func addRule(rulesetFD, fd int, rights uint64) error {
	// struct landlock_path_beneath_attr is packed: u64 allowed_access then
	// s32 parent_fd, 12 bytes laid out as this struct's first 12 (the
	// kernel does not read the padding after them).
	rule := struct {
		access uint64
		fd     int32
	}{rights, int32(fd)}
	_, _, errno := syscall.Syscall6(sysLandlockAddRule, uintptr(rulesetFD), landlockRulePathBeneath,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
