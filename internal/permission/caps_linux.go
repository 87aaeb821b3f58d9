//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// A command run by root (Reasonix started as root: a container, a CI
// runner, a VM) would get every capability at exec, and Landlock governs
// none of what they allow: loading kernel modules, mounting and cloning
// mounts (which uncovers the files the sandbox hides), raw devices and
// I/O ports, BPF, network configuration, reading any file by handle, and
// so on. So before a command starts, the thread (or the sandbox helper)
// that starts it lowers its capabilities to keptCaps: the bounding set,
// so exec cannot grant more; the permitted, effective and inheritable
// sets; and the ambient set is cleared. With no_new_privs set as well,
// exec never raises the permitted set above what the thread had (not
// even for root, whose exec would otherwise grant the whole bounding
// set), so lowering the permitted set is enough on its own where the
// bounding set cannot be lowered (no CAP_SETPCAP).
//
// What root keeps is what ordinary work as root needs when the files are
// not root's own (a root shell in a container over a repository owned by
// uid 1000, where go build, npm install, tar or git must still write,
// chmod, chown and keep file modes) and nothing that reaches past
// Landlock:
//
//   - CAP_CHOWN, CAP_FOWNER, CAP_FSETID: chown, chmod, utimes and set-id
//     bits on files not root's own (package managers and tar restore
//     owners and modes). Landlock does not govern chmod or chown, but root
//     owns most of the system's files, and may chmod those without them.
//   - CAP_DAC_OVERRIDE: read and write files whatever their mode bits; the
//     Landlock rules (where a command may write, what it may not read)
//     still apply on top.
//   - CAP_KILL: signal processes of other users (a dev server started as
//     another user); root's own processes it may signal anyway.
//   - CAP_SETUID, CAP_SETGID: switch to another user, as installers that
//     drop privileges do; the Landlock domain and the filter go with it.
//   - CAP_NET_BIND_SERVICE: bind ports below 1024; the network rule
//     ([sandbox] network) still decides whether TCP binds at all.
//
// Everything else goes, among them CAP_SYS_ADMIN (mounts, namespaces'
// mount tables), CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_SYS_PTRACE, CAP_BPF,
// CAP_PERFMON, CAP_NET_ADMIN, CAP_NET_RAW, CAP_MKNOD, CAP_SYS_BOOT,
// CAP_SYS_TIME, CAP_MAC_ADMIN, CAP_MAC_OVERRIDE, CAP_DAC_READ_SEARCH
// (open_by_handle_at reaches files by handle, past any path rule),
// CAP_SETFCAP, CAP_SETPCAP, CAP_LINUX_IMMUTABLE, CAP_SYS_CHROOT,
// CAP_SYS_RESOURCE, CAP_SYS_NICE, CAP_IPC_OWNER, CAP_SYSLOG and
// CAP_AUDIT_*. A user other than root holds no capabilities after exec
// anyway; lowering them costs nothing there.
const keptCaps uint64 = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_FOWNER |
	1<<unix.CAP_FSETID | 1<<unix.CAP_KILL | 1<<unix.CAP_SETGID | 1<<unix.CAP_SETUID |
	1<<unix.CAP_NET_BIND_SERVICE

// dropCapabilities lowers the calling thread's capabilities to keptCaps
// (see above); the thread must be locked, and is thrown away or execs.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: capget: %w", err)
	}
	eff := uint64(data[0].Effective) | uint64(data[1].Effective)<<32
	if eff&(1<<unix.CAP_SETPCAP) != 0 {
		// Number by number until the kernel knows no more (EINVAL).
		for c := uintptr(0); c < 64; c++ {
			if keptCaps&(1<<c) != 0 {
				continue
			}
			_, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0, 0, 0, 0)
			if errno == syscall.EINVAL {
				break
			}
			if errno != 0 {
				return fmt.Errorf("sandbox: prctl(PR_CAPBSET_DROP, %d): %w", c, errno)
			}
		}
	}
	// Kernels before 4.3 have no ambient set, and then nothing to clear.
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); errno != 0 && errno != syscall.EINVAL {
		return fmt.Errorf("sandbox: prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", errno)
	}
	for i := range data {
		k := uint32(keptCaps >> (32 * i))
		data[i].Effective &= k
		data[i].Permitted &= k
		data[i].Inheritable &= k
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: capset: %w", err)
	}
	return nil
}
