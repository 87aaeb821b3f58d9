//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
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
// writing beneath write (see SandboxCommand).
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
		if err := restrictThread(c); err != nil {
			done <- err
			return
		}
		err := cmd.Start()
		done <- err
		if err != nil || cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig == 0 {
			return
		}
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				return
			}
		}
	}()
	return <-done
}

// restrictThread applies the ruleset to the calling thread: from then on
// it, and every process it starts, may write only beneath c.write; may
// read everything but c.denyRead (when set); and, unless c.network, may
// neither bind nor connect TCP, connect to abstract unix sockets outside
// its domain, nor create UDP, raw or unix sockets, as far as the kernel
// can say so. Paths that do not exist are skipped.
func restrictThread(c confinement) error {
	abi := landlockABI()
	if abi < 1 {
		return errors.New("sandbox: Landlock is not available in this kernel")
	}
	dirRights, fileRights := writeRights(abi)
	var readDir, readFile uint64
	if len(c.denyRead) > 0 {
		readDir, readFile = fsReadFile|fsReadDir, fsReadFile
	}
	var attr struct{ fs, net, scoped uint64 }
	attr.fs = dirRights | readDir
	if abi >= 4 && !c.network {
		attr.net = netBindTCP | netConnectTCP
	}
	if abi >= 6 && !c.network {
		attr.scoped = scopeAbstractUnixSocket
	}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("sandbox: landlock_create_ruleset: %w", errno)
	}
	defer syscall.Close(int(fd))
	for _, p := range c.write {
		if err := addPathRule(int(fd), p, dirRights|readDir, fileRights|readFile, false); err != nil {
			return err
		}
	}
	if len(c.denyRead) > 0 {
		for _, r := range readRules(c.denyRead, c.except) {
			dr, fr := readDir, readFile
			if r.listOnly {
				dr, fr = fsReadDir, 0
			}
			if err := addPathRule(int(fd), r.path, dr, fr, true); err != nil {
				return err
			}
		}
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, fd, 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", errno)
	}
	if !c.network {
		if err := installSocketFilter(); err != nil {
			return err
		}
	}
	return nil
}

// readRule is a path the read allow-list grants: beneath it entirely, or
// (listOnly) only the listing of directories, for the ancestors of a
// denied path.
type readRule struct {
	path     string
	listOnly bool
}

// readRules turns a deny list into the allow-list Landlock needs: for
// every directory on the way from / to a denied path, its listing, and
// full read access to each of its entries that is not itself on such a
// way. Exceptions are granted in full. Symlinks are not granted as such:
// access through one is judged at its target. Denied paths that do not
// exist are skipped.
func readRules(deny, except []string) []readRule {
	onPath := map[string]bool{} // ancestors of denied paths, and the paths
	isDenied := map[string]bool{}
	for _, d := range deny {
		for _, p := range []string{d, resolved(d)} {
			if p == "" {
				continue
			}
			if _, err := os.Lstat(p); err != nil {
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
	var out []readRule
	if len(onPath) == 0 {
		return []readRule{{path: "/"}}
	}
	for dir := range onPath {
		if isDenied[dir] {
			continue
		}
		out = append(out, readRule{path: dir, listOnly: true})
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if onPath[p] || e.Type()&os.ModeSymlink != 0 {
				continue
			}
			out = append(out, readRule{path: p})
		}
	}
	for _, e := range except {
		out = append(out, readRule{path: e})
	}
	return out
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
// than its target.
func addPathRule(rulesetFD int, path string, dirRights, fileRights uint64, noFollow bool) error {
	flags := oPath | syscall.O_CLOEXEC
	if noFollow {
		flags |= syscall.O_NOFOLLOW
	}
	fd, err := syscall.Open(path, flags, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil
	}
	rights := dirRights
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		rights = fileRights
	}
	if rights == 0 || st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		return nil
	}
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
		return fmt.Errorf("sandbox: landlock_add_rule %s: %w", path, errno)
	}
	return nil
}
