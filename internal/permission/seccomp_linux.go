//go:build linux && (amd64 || arm64)

package permission

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// With network = false, Landlock refuses TCP bind and connect (ABI 4) and
// abstract unix sockets outside the sandbox (ABI 6), but not UDP (DNS
// exfiltration), raw sockets or unix sockets by path (a Docker daemon's).
// A seccomp filter on the confined thread closes them: socket(2) may only
// create TCP sockets (which Landlock then governs), and io_uring, which
// could create sockets around the filter, is refused. socketpair(2) stays
// allowed, so processes can still talk to their own children.

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

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// socketFilter is the BPF program described above.
func socketFilter() []unix.SockFilter {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		and = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	deny := uint32(seccompRetErrno | uint32(syscall.EACCES))
	// Indexes: the two returns are at the end; jumps are relative.
	prog := []unix.SockFilter{
		/* 0 */ stmt(ld, offArch),
		/* 1 */ jump(jeq, auditArch, 1, 0),
		/* 2 */ stmt(ret, deny), // another ABI (int 0x80 on amd64)
		/* 3 */ stmt(ld, offNr),
		/* 4 */ jump(jge, x32Bit, 0, 1),
		/* 5 */ stmt(ret, deny),
		/* 6 */ jump(jeq, uint32(unix.SYS_IO_URING_SETUP), 0, 1),
		/* 7 */ stmt(ret, deny),
		/* 8 */ jump(jeq, uint32(unix.SYS_SOCKET), 1, 0),
		/* 9 */ stmt(ret, seccompRetAllow),
		/* 10 */ stmt(ld, offArg0),
		/* 11 */ jump(jeq, unix.AF_INET, 1, 0),
		/* 12 */ jump(jeq, unix.AF_INET6, 0, 4),
		/* 13 */ stmt(ld, offArg1),
		/* 14 */ stmt(and, 0xf), // the type without SOCK_NONBLOCK, SOCK_CLOEXEC
		/* 15 */ jump(jeq, unix.SOCK_STREAM, 0, 1),
		/* 16 */ stmt(ret, seccompRetAllow),
		/* 17 */ stmt(ret, deny),
	}
	return prog
}

// installSocketFilter installs socketFilter on the calling thread (no
// TSYNC: the rest of the process stays free); no_new_privs must be set.
func installSocketFilter() error {
	prog := socketFilter()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("sandbox: seccomp filter: %w", errno)
	}
	return nil
}
