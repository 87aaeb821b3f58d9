//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/reasonix/reasonix/internal/lazy"
)

// Hiding files from a command inside the workspace, where Landlock cannot
// deny a read (a writable tree's rule grants reading all of it): the
// command starts through the Reasonix binary as a helper, in a user and
// mount namespace of its own, where the helper mounts an empty read-only
// file over each hidden file and an empty read-only tmpfs over each hidden folder, then
// restricts itself with the run's Landlock ruleset (which also forbids
// unmounting them again) and the seccomp filter (which refuses the whole
// mount API, open_tree's clone of a mount without them included), lowers
// its capabilities (dropCapabilities) and execs the command.
// The command sees the rest of the file system as it is, under the same
// user; only the hidden paths read as empty.

// HidingAvailable reports whether the sandbox can hide paths from
// commands here (SandboxOptions.Hide), and why not; the first call probes.
func HidingAvailable() (bool, string) { return hideAvailable() }

// hideAvailable reports, once per process, whether a user and mount
// namespace can be made here (a probe start of the helper), and why not.
func hideAvailable() (bool, string) { return hideProbe.Get() }

var hideProbe = lazy.Values[bool, string]{Build: func() (bool, string) {
	exe, err := os.Executable()
	if err != nil {
		return false, "cannot find the Reasonix binary: " + err.Error()
	}
	cmd := exec.Command(exe, SandboxHelperArg, "probe")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	namespaced(cmd.SysProcAttr)
	if out, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Sprintf("user namespaces are not available (%v %s)", err, out)
	}
	return true, ""
}}

// namespaced makes a child start in a new user and mount namespace, as
// the same user. Only that user's own ids are mapped in it, unless
// Reasonix runs as root and may map every id (CAP_SETUID and
// CAP_SETGID): then all are, each to itself, so that files owned by other
// users keep their owners inside and root's file capabilities apply to
// them as outside (a root shell in a container over a checkout owned by
// uid 1000 must still write to it). Capabilities held in the new
// namespace never count outside it.
func namespaced(a *syscall.SysProcAttr) {
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 && gid == 0 && mayMapAllIDs() {
		// 4294967295 ids from 0: every valid id ((uid_t)-1 is not one).
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.GidMappingsEnableSetgroups = true
		return
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
}

// mayMapAllIDs reports whether the calling thread holds CAP_SETUID and
// CAP_SETGID, which writing a map of other users' ids takes.
func mayMapAllIDs() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return false
	}
	const need = 1<<unix.CAP_SETUID | 1<<unix.CAP_SETGID
	return data[0].Effective&need == need
}

// startHidden starts cmd through the helper with the paths in hide
// hidden; the caller holds no lock and runs on a locked thread (see
// startConfined). The ruleset is built here and handed to the helper.
func startHidden(cmd *exec.Cmd, c confinement, hide []string) error {
	fd, unlock, err := lockedRuleset(c)
	if err != nil {
		return err
	}
	defer unlock()
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	f := os.NewFile(uintptr(dup), "landlock-ruleset")
	defer f.Close()
	net := "0"
	if c.network {
		net = "1"
	}
	path := cmd.Path
	if path == "" && len(cmd.Args) > 0 {
		path = cmd.Args[0]
	}
	args := []string{exe, SandboxHelperArg, "run", strconv.Itoa(3 + len(cmd.ExtraFiles)), net, strconv.Itoa(len(hide))}
	args = append(args, hide...)
	args = append(args, path)
	cmd.Args = append(args, cmd.Args...)
	cmd.Path = exe
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	namespaced(cmd.SysProcAttr)
	return cmd.Start()
}

// RunSandboxHelper is the helper's whole life (args are those after
// SandboxHelperArg): "probe" mounts nothing and exits 0 when it could;
// "run FD NET N PATH… PROGRAM ARGV…" hides the N paths, restricts itself
// with the Landlock ruleset on descriptor FD and the filter (the socket
// part unless NET is 1), lowers its capabilities, and execs PROGRAM with
// ARGV. It returns only on failure, with
// the error to print; the caller exits 126 then.
func RunSandboxHelper(args []string) error {
	runtime.LockOSThread() // Landlock and seccomp apply to this thread, which execs
	// No need to make the mounts private: in a mount namespace owned by a
	// new user namespace, shared mounts are already reduced to slaves, so
	// nothing mounted here propagates back (mount_namespaces(7)).
	if len(args) == 1 && args[0] == "probe" {
		// The namespace exists (the probe was started in it); a mount
		// must work in it too.
		if err := unix.Mount("tmpfs", os.TempDir(), "tmpfs", unix.MS_RDONLY, "size=4k"); err != nil {
			return fmt.Errorf("sandbox helper: mount: %w", err)
		}
		os.Exit(0)
	}
	if len(args) < 4 || args[0] != "run" {
		return errors.New("sandbox helper: bad arguments")
	}
	fd, err1 := strconv.Atoi(args[1])
	n, err2 := strconv.Atoi(args[3])
	network := args[2] == "1"
	if err1 != nil || err2 != nil || n < 0 || len(args) < 4+n+2 {
		return errors.New("sandbox helper: bad arguments")
	}
	hide, prog, argv := args[4:4+n], args[4+n], args[4+n+1:]
	for _, p := range hide {
		if err := hidePath(p); err != nil {
			return err
		}
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("sandbox helper: prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, uintptr(fd), 0, 0); errno != 0 {
		return fmt.Errorf("sandbox helper: landlock_restrict_self: %w", errno)
	}
	syscall.Close(fd)
	if err := installFilter(network); err != nil {
		return err
	}
	// Last: mounting needed CAP_SYS_ADMIN in the namespace.
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := syscall.Exec(prog, argv, os.Environ()); err != nil {
		return fmt.Errorf("sandbox helper: exec %s: %w", prog, err)
	}
	return nil
}

// hidePath mounts an empty read-only file over a file and an empty
// read-only tmpfs over a folder. A path gone since it was listed is skipped.
func hidePath(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0500"); err != nil {
			return fmt.Errorf("sandbox helper: hide %s: %w", p, err)
		}
		return nil
	}
	// An empty file of our own, read-only, so a write fails aloud (a
	// device such as /dev/null takes writes even on a read-only mount).
	// The mount keeps it alive once its name is gone.
	empty, err := os.CreateTemp("", "reasonix-hidden-")
	if err != nil {
		return fmt.Errorf("sandbox helper: hide %s: %w", p, err)
	}
	empty.Close()
	defer os.Remove(empty.Name())
	if err := unix.Mount(empty.Name(), p, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("sandbox helper: hide %s: %w", p, err)
	}
	if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("sandbox helper: hide %s: %w", p, err)
	}
	return nil
}
