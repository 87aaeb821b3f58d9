//go:build linux && (amd64 || arm64)

package permission

import (
	"encoding/binary"
	"runtime"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// runFilter runs a seccomp BPF program over one system call as the kernel
// would, for the instructions sandboxFilter uses, and returns its verdict.
// It fails the test on a jump out of the program or an unknown
// instruction.
func runFilter(t *testing.T, prog []unix.SockFilter, arch, nr uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[offNr:], nr)
	binary.LittleEndian.PutUint32(data[offArch:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			taken := acc == in.K
			if in.Code&0xf0 == unix.BPF_JGE {
				taken = acc >= in.K
			}
			if taken {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, in.Code)
		}
	}
	t.Fatalf("nr %d: ran off the end of the program", nr)
	return 0
}

// The filter refuses the mount API with EPERM whatever the socket rule;
// without network only TCP sockets may be made, and with network where
// the session bus cannot be hidden every kind but unix sockets; every
// other call (each number up to 1024 is tried) passes, and another ABI
// or x32 is refused outright.
func TestSandboxFilterVerdicts(t *testing.T) {
	eperm := uint32(seccompRetErrno | uint32(syscall.EPERM))
	eacces := uint32(seccompRetErrno | uint32(syscall.EACCES))
	for _, rule := range []socketRule{socketsTCP, socketsAll, socketsNoUnix} {
		prog := sandboxFilter(rule)
		if len(prog) > 255 {
			t.Fatalf("program of %d instructions", len(prog))
		}
		for nr := uint32(0); nr < 1024; nr++ {
			want := uint32(seccompRetAllow)
			switch {
			case slices.Contains(mountCalls[:], nr):
				want = eperm
			case rule != socketsAll && nr == unix.SYS_IO_URING_SETUP:
				want = eacces
			case rule == socketsTCP && nr == unix.SYS_SOCKET:
				want = eacces // AF_UNSPEC (0)
			}
			if got := runFilter(t, prog, auditArch, nr); got != want {
				t.Errorf("rule %d nr %d: verdict %#x, want %#x", rule, nr, got, want)
			}
		}
		socket := func(family, typ uint64) uint32 {
			return runFilter(t, prog, auditArch, unix.SYS_SOCKET, family, typ)
		}
		network := rule != socketsTCP
		for _, c := range []struct {
			family, typ uint64
			ok          bool
		}{
			{unix.AF_INET, unix.SOCK_STREAM, true},
			{unix.AF_INET6, unix.SOCK_STREAM | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC, true},
			{unix.AF_INET, unix.SOCK_DGRAM, network},
			{unix.AF_INET6, unix.SOCK_RAW, network},
			{unix.AF_UNIX, unix.SOCK_STREAM, rule == socketsAll},
			{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, rule == socketsAll},
			{unix.AF_NETLINK, unix.SOCK_RAW, network},
		} {
			want := eacces
			if c.ok {
				want = seccompRetAllow
			}
			if got := socket(c.family, c.typ); got != want {
				t.Errorf("rule %d socket(%d, %#x): verdict %#x, want %#x", rule, c.family, c.typ, got, want)
			}
		}
		if got := runFilter(t, prog, auditArch^1, unix.SYS_GETPID); got != eacces {
			t.Errorf("rule %d: another ABI's call: verdict %#x", rule, got)
		}
		if got := runFilter(t, prog, auditArch, x32Bit|unix.SYS_GETPID); got != eacces {
			t.Errorf("rule %d: an x32 call: verdict %#x", rule, got)
		}
	}
	// Every call the mount API has on the kernel headers is listed.
	for _, nr := range []uint32{unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_OPEN_TREE,
		unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
		unix.SYS_MOUNT_SETATTR, unix.SYS_OPEN_TREE_ATTR} {
		if !slices.Contains(mountCalls[:], nr) {
			t.Errorf("mount call %d is not refused", nr)
		}
	}
}

// In the kernel: a thread restricted as a command's is (filter, then
// capabilities) cannot clone or make mounts or unix sockets, holds no
// capability but keptCaps, and still makes TCP sockets and ordinary calls.
func TestSandboxFilterAndCapabilitiesInKernel(t *testing.T) {
	type result struct {
		openTree, mount, fsopen, unixSock, tcpSock error
		caps                                       [2]unix.CapUserData
		bset                                       uint64
		err                                        error
	}
	dir := t.TempDir()
	done := make(chan result)
	go func() {
		// Never unlocked: the restricted thread ends with the goroutine.
		runtime.LockOSThread()
		var r result
		defer func() { done <- r }()
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
			r.err = errno
			return
		}
		if r.err = installFilter(socketsTCP); r.err != nil {
			return
		}
		if r.err = dropCapabilities(); r.err != nil {
			return
		}
		var fd int
		fd, r.openTree = unix.OpenTree(unix.AT_FDCWD, "/", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if r.openTree == nil {
			unix.Close(fd)
		}
		r.mount = unix.Mount("tmpfs", dir, "tmpfs", 0, "")
		fd, r.fsopen = unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
		if r.fsopen == nil {
			unix.Close(fd)
		}
		if fd, r.unixSock = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0); r.unixSock == nil {
			unix.Close(fd)
		}
		if fd, r.tcpSock = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); r.tcpSock == nil {
			unix.Close(fd)
		}
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		r.err = unix.Capget(&hdr, &r.caps[0])
		for c := uintptr(0); c < 64; c++ {
			v, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_CAPBSET_READ, c, 0)
			if errno != 0 {
				break
			}
			r.bset |= uint64(v) << c
		}
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	for name, err := range map[string]error{"open_tree": r.openTree, "mount": r.mount, "fsopen": r.fsopen} {
		if err != syscall.EPERM {
			t.Errorf("%s: %v, want EPERM", name, err)
		}
	}
	if r.unixSock != syscall.EACCES || r.tcpSock != nil {
		t.Errorf("unix socket: %v (want EACCES), TCP socket: %v (want none)", r.unixSock, r.tcpSock)
	}
	for i, d := range r.caps {
		k := uint32(keptCaps >> (32 * i))
		if d.Effective&^k != 0 || d.Permitted&^k != 0 || d.Inheritable&^k != 0 {
			t.Errorf("capabilities beyond the kept ones: %+v", r.caps)
		}
	}
	if syscall.Getuid() == 0 {
		if r.bset != keptCaps {
			t.Errorf("bounding set %#x, want %#x", r.bset, keptCaps)
		}
		if uint64(r.caps[0].Effective) != keptCaps {
			t.Errorf("root's effective set %#x, want %#x", r.caps[0].Effective, keptCaps)
		}
	}
}
