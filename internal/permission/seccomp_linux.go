//go:build linux && (amd64 || arm64)

package permission

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A seccomp filter on the confined thread closes what Landlock leaves
// open.
//
// Always: the mount API. Landlock refuses mount, umount and pivot_root
// to a restricted thread, but not open_tree, which clones a mount: a
// command holding CAP_SYS_ADMIN in its mount namespace's user namespace
// (root in the namespace the sandbox made to hide files) cloned the
// workspace's mount without the mounts that hide files and read them
// through the clone. Commands lose that capability (dropCapabilities);
// the filter refuses the whole mount API besides, so that no capability
// left anywhere, nor a namespace of the command's own, brings it back.
//
// With network = false: Landlock refuses TCP bind and connect (ABI 4) and
// abstract unix sockets outside the sandbox (ABI 6), but not UDP (DNS
// exfiltration), raw sockets or unix sockets by path (a Docker daemon's).
// socket(2) may only create TCP sockets (which Landlock then governs),
// and io_uring, which could create sockets around the filter, is
// refused. socketpair(2) stays allowed, so processes can still talk to
// their own children.
//
// With network = true where the D-Bus session bus can be kept from
// commands no other way (bus.go): socket(2) may create anything but unix
// sockets, and io_uring is refused.

func seccompAvailable() bool { return true }

const (
	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000
	// Offsets in struct seccomp_data: nr, arch, then args[6] of 8 bytes
	// (the low half first on these little-endian machines).
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
	// x32 system calls on amd64 carry this bit; they are refused.
	x32Bit = 0x40000000
)

// mountCalls are the system calls that mount, unmount, move or clone
// mounts or make file systems to mount (x/sys numbers them for the
// architecture built).
var mountCalls = [...]uint32{
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT,
	unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
	unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR, unix.SYS_OPEN_TREE_ATTR,
}

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// sandboxFilter is the BPF program described above. Every jump is
// relative and short: each refused call is tested by a pair (skip the
// refusal when it is not this call; refuse), so the pairs can be added
// or removed without moving any other jump's target.
func sandboxFilter(sockets socketRule) []unix.SockFilter {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		and = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	deny := uint32(seccompRetErrno | uint32(syscall.EACCES))
	denyMount := uint32(seccompRetErrno | uint32(syscall.EPERM))
	prog := []unix.SockFilter{
		stmt(ld, offArch),
		jump(jeq, auditArch, 1, 0),
		stmt(ret, deny), // another ABI (int 0x80 on amd64)
		stmt(ld, offNr),
		jump(jge, x32Bit, 0, 1),
		stmt(ret, deny),
	}
	for _, nr := range mountCalls {
		prog = append(prog, jump(jeq, nr, 0, 1), stmt(ret, denyMount))
	}
	if sockets == socketsAll {
		return append(prog, stmt(ret, seccompRetAllow))
	}
	// Both other rules refuse io_uring and look at socket(2)'s family.
	prog = append(prog,
		jump(jeq, uint32(unix.SYS_IO_URING_SETUP), 0, 1),
		stmt(ret, deny),
		jump(jeq, uint32(unix.SYS_SOCKET), 1, 0),
		stmt(ret, seccompRetAllow),
		stmt(ld, offArg0),
	)
	if sockets == socketsNoUnix {
		return append(prog,
			/* 0 */ jump(jeq, unix.AF_UNIX, 0, 1),
			/* 1 */ stmt(ret, deny),
			/* 2 */ stmt(ret, seccompRetAllow),
		)
	}
	// Indexes relative to the start of this part.
	return append(prog,
		/* 0 */ jump(jeq, unix.AF_INET, 1, 0),
		/* 1 */ jump(jeq, unix.AF_INET6, 0, 4),
		/* 2 */ stmt(ld, offArg1),
		/* 3 */ stmt(and, 0xf), // the type without SOCK_NONBLOCK, SOCK_CLOEXEC
		/* 4 */ jump(jeq, unix.SOCK_STREAM, 0, 1),
		/* 5 */ stmt(ret, seccompRetAllow),
		/* 6 */ stmt(ret, deny),
	)
}

// installFilter installs sandboxFilter on the calling thread (no TSYNC:
// the rest of the process stays free); no_new_privs must be set.
func installFilter(sockets socketRule) error {
	prog := sandboxFilter(sockets)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("sandbox: seccomp filter: %w", errno)
	}
	return nil
}
