//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"
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

// RunSandboxed is the body of the hidden __sandbox subcommand; main calls
// it with os.Args[2:] when os.Args[1] == SandboxArg. It confines this
// process with Landlock and replaces it with the target command, so it only
// returns on failure; the caller should print the error and exit non-zero.
func RunSandboxed(args []string) error {
	spec, path, argv, err := parseSandboxArgs(args)
	if err != nil {
		return err
	}
	// Landlock and no_new_privs apply to the calling thread; exec keeps
	// only that thread, so it must be the one that calls execve.
	runtime.LockOSThread()
	if err := restrictSelf(spec); err != nil {
		return err
	}
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("sandbox: exec %s: %w", path, err)
	}
	return nil
}

func restrictSelf(spec sandboxSpec) error {
	abi := landlockABI()
	if abi < 1 {
		return errors.New("sandbox: Landlock is not available in this kernel")
	}
	dirRights, fileRights := writeRights(abi)
	var attr struct{ fs, net, scoped uint64 }
	attr.fs = dirRights
	if abi >= 4 && !spec.Network {
		attr.net = netBindTCP | netConnectTCP
	}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("sandbox: landlock_create_ruleset: %w", errno)
	}
	defer syscall.Close(int(fd))
	for _, p := range spec.Write {
		fi, err := os.Stat(p)
		if err != nil {
			continue // a cache or temp dir that does not exist here
		}
		rights := uint64(dirRights)
		if !fi.IsDir() {
			rights = fileRights
		}
		if err := addPathRule(int(fd), p, rights); err != nil {
			return err
		}
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, fd, 0, 0); errno != 0 {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", errno)
	}
	return nil
}

func addPathRule(rulesetFD int, path string, rights uint64) error {
	fd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: open %s: %w", path, err)
	}
	defer syscall.Close(fd)
	// struct landlock_path_beneath_attr is packed: u64 allowed_access,
	// s32 parent_fd.
	var buf [12]byte
	binary.NativeEndian.PutUint64(buf[0:8], rights)
	binary.NativeEndian.PutUint32(buf[8:12], uint32(int32(fd)))
	_, _, errno := syscall.Syscall6(sysLandlockAddRule, uintptr(rulesetFD), landlockRulePathBeneath,
		uintptr(unsafe.Pointer(&buf[0])), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("sandbox: landlock_add_rule %s: %w", path, errno)
	}
	return nil
}
