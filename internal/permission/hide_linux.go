//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/reasonix/reasonix/internal/lazy"
)

// Hiding files from a command inside the workspace, where Landlock cannot
// deny a read (a writable tree's rule grants reading all of it): the
// command starts through the Reasonix binary as a helper, in a user and
// mount namespace of its own, where the helper mounts an empty read-only
// file over each hidden file and an empty read-only folder over each
// hidden folder, then restricts itself with the run's Landlock ruleset
// (which also forbids unmounting them again) and the seccomp filter
// (which refuses the whole mount API, open_tree's clone of a mount
// without them included), lowers its capabilities (dropCapabilities) and
// execs the command. The command sees the rest of the file system as it
// is, under the same user; only the hidden paths read as empty.
//
// Each path comes with the device and inode number of the file it named
// when Reasonix listed it, and the helper mounts over the file it opens
// only when it is that file: the mount then holds to it wherever it is
// renamed. A path that names another file by then (a background command
// renamed a folder and put a decoy in its place), or none, fails the
// command rather than leave the file it named unhidden.

// HidingAvailable reports whether the sandbox can hide paths from
// commands here (SandboxOptions.Hide), and why not; the first call probes.
func HidingAvailable() (bool, string) { return hideAvailable() }

// hideAvailable reports, once per process, whether a user and mount
// namespace can be made here and mounted in as commands' are (a probe
// start of the helper), and why not.
func hideAvailable() (bool, string) { return hideProbe.Get() }

var hideProbe = lazy.Values[bool, string]{Build: func() (bool, string) {
	exe, err := os.Executable()
	if err != nil {
		return false, "cannot find the Reasonix binary: " + err.Error()
	}
	cmd := exec.Command(exe, SandboxHelperArg, "probe")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	cmd.Args = append(cmd.Args, namespaced(cmd.SysProcAttr))
	if out, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Sprintf("user namespaces are not available (%v %s)", err, strings.TrimSpace(string(out)))
	}
	return true, ""
}}

// namespaced makes a child start in a new user and mount namespace, as
// the same user, and returns the helper's MAP argument: "-" when the ids
// are mapped from here, else "UID:GID" for the helper to map itself.
//
// Reasonix is not dumpable (cmd/reasonix), so neither is a child until it
// execs, and its /proc files belong to root: a parent other than root
// cannot write the child's id maps, as os/exec would. And a process whose
// user is not root in its namespace loses its capabilities there when it
// execs. So the child raises the capabilities the helper needs into its
// ambient set before it execs the helper (which keeps them), and the
// helper, dumpable once it runs, maps its own user and group, as a
// process may do for itself. Root writes the maps from here, and maps every id
// to itself when it may (CAP_SETUID and CAP_SETGID): files owned by
// other users keep their owners inside, and root's file capabilities
// apply to them as outside (a root shell in a container over a checkout
// owned by uid 1000 must still write to it). Capabilities held in the
// new namespace never count outside it.
func namespaced(a *syscall.SysProcAttr) string {
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	uid, gid := os.Getuid(), os.Getgid()
	if uid != 0 {
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID}
		return strconv.Itoa(uid) + ":" + strconv.Itoa(gid)
	}
	if gid == 0 && mayMapAllIDs() {
		// 4294967295 ids from 0: every valid id ((uid_t)-1 is not one).
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.GidMappingsEnableSetgroups = true
		return "-"
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	return "-"
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

// mapOwnIDs maps, from inside a new user namespace, the user and group
// it was made by (MAP "UID:GID"), with setgroups denied as the kernel
// requires of an unprivileged map.
func mapOwnIDs(m string) error {
	if m == "-" {
		return nil
	}
	uid, gid, ok := strings.Cut(m, ":")
	if !ok {
		return errors.New("sandbox helper: bad arguments")
	}
	// The binary's init made the helper not dumpable too, which gives
	// its /proc files to root. It holds nothing to keep: its environment
	// is the command's, which it is about to become.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 1, 0); errno != 0 {
		return fmt.Errorf("sandbox helper: prctl(PR_SET_DUMPABLE): %w", errno)
	}
	for _, w := range []struct{ file, data string }{
		{"/proc/self/setgroups", "deny"},
		{"/proc/self/uid_map", uid + " " + uid + " 1"},
		{"/proc/self/gid_map", gid + " " + gid + " 1"},
	} {
		if err := os.WriteFile(w.file, []byte(w.data), 0); err != nil {
			return fmt.Errorf("sandbox helper: %w", err)
		}
	}
	return nil
}

// startHidden starts cmd through the helper with hide hidden; the caller
// holds no lock and runs on a locked thread (see startConfined). The
// ruleset is built here and handed to the helper.
func startHidden(cmd *exec.Cmd, c confinement, hide []hiddenFile) error {
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
	net := strconv.Itoa(int(c.sockets()))
	path := cmd.Path
	if path == "" && len(cmd.Args) > 0 {
		path = cmd.Args[0]
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	idMap := namespaced(cmd.SysProcAttr)
	args := make([]string, 0, 7+4*len(hide)+len(cmd.Args))
	args = append(args, exe, SandboxHelperArg, "run", idMap, strconv.Itoa(3+len(cmd.ExtraFiles)), net, strconv.Itoa(len(hide)))
	for _, h := range hide {
		how := "hide"
		switch {
		case h.readOnly:
			how = "ro"
		case len(h.redact) > 0:
			how = "redact:" + strings.Join(h.redact, ",")
		}
		args = append(args, how, h.path, strconv.FormatUint(h.dev, 10), strconv.FormatUint(h.ino, 10))
	}
	args = append(args, path)
	cmd.Args = append(args, cmd.Args...)
	cmd.Path = exe
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	return c.orphans.start(cmd)
}

// RunSandboxHelper is the helper's whole life (args are those after
// SandboxHelperArg), in the namespaces startHidden made, after mapping
// its ids (MAP, see namespaced): "probe MAP" makes a folder read-only
// and hides it as a command would and exits 0 when it could; "run MAP FD
// NET N (HOW PATH DEV INO)… PROGRAM ARGV…" hides (HOW "hide") or makes
// read-only (HOW "ro") the N paths, each only if it is still the file
// DEV and INO say, restricts itself with the Landlock ruleset on
// descriptor FD and the filter (its socket part as the socketRule NET
// says), lowers its capabilities, and execs PROGRAM with ARGV. It returns
// only on failure, with the error to print; the caller exits 126 then.
func RunSandboxHelper(args []string) error {
	runtime.LockOSThread() // Landlock and seccomp apply to this thread, which execs
	// No need to make the mounts private: in a mount namespace owned by a
	// new user namespace, shared mounts are already reduced to slaves, so
	// nothing mounted here propagates back (mount_namespaces(7)).
	if len(args) == 2 && args[0] == "probe" {
		if err := mapOwnIDs(args[1]); err != nil {
			return err
		}
		var s syscall.Stat_t
		if err := syscall.Stat(os.TempDir(), &s); err != nil {
			return fmt.Errorf("sandbox helper: %w", err)
		}
		tmp := hiddenFile{path: os.TempDir(), dev: uint64(s.Dev), ino: uint64(s.Ino)}
		ro := tmp
		ro.readOnly = true
		if err := hideAll([]hiddenFile{tmp, ro}); err != nil {
			return err
		}
		os.Exit(0)
	}
	if len(args) < 5 || args[0] != "run" {
		return errors.New("sandbox helper: bad arguments")
	}
	fd, err1 := strconv.Atoi(args[2])
	n, err2 := strconv.Atoi(args[4])
	sockets, err3 := strconv.Atoi(args[3])
	if err1 != nil || err2 != nil || err3 != nil || n < 0 || len(args) < 5+4*n+1 {
		return errors.New("sandbox helper: bad arguments")
	}
	if err := mapOwnIDs(args[1]); err != nil {
		return err
	}
	hide := make([]hiddenFile, n)
	for i := range hide {
		a := args[5+4*i:]
		dev, err1 := strconv.ParseUint(a[2], 10, 64)
		ino, err2 := strconv.ParseUint(a[3], 10, 64)
		names, redact := strings.CutPrefix(a[0], "redact:")
		if err1 != nil || err2 != nil || (a[0] != "hide" && a[0] != "ro" && !redact) {
			return errors.New("sandbox helper: bad arguments")
		}
		hide[i] = hiddenFile{path: a[1], dev: dev, ino: ino, readOnly: a[0] == "ro"}
		if redact {
			hide[i].redact = strings.Split(names, ",")
		}
	}
	prog, argv := args[5+4*n], args[5+4*n+1:]
	if err := hideAll(hide); err != nil {
		return err
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("sandbox helper: prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, uintptr(fd), 0, 0); errno != 0 {
		return fmt.Errorf("sandbox helper: landlock_restrict_self: %w", errno)
	}
	syscall.Close(fd)
	if err := installFilter(socketRule(sockets)); err != nil {
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

// hideAll makes each read-only entry of hide read-only, then mounts an
// empty read-only file over each file to hide and an empty read-only
// folder over each folder. The read-only ones come first: a folder
// bound over itself after a file in it was hidden would bring the file
// back. The empty ones come from one small tmpfs made for the purpose,
// never attached anywhere: a copy of its file or its folder (already
// read-only, no set-id, no devices, no execution) is moved onto the
// descriptor of the file to hide, opened by its path and checked to be
// the file listed, so no rename between the check and the mount can put
// the mount elsewhere.
func hideAll(hide []hiddenFile) error {
	toHide, redact := 0, 0
	for _, h := range hide {
		switch {
		case len(h.redact) > 0:
			redact++
		case !h.readOnly:
			toHide++
		default:
			if err := protectOne(h); err != nil {
				return err
			}
		}
	}
	if toHide+redact == 0 {
		return nil
	}
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("sandbox helper: fsopen: %w", err)
	}
	defer unix.Close(fsfd)
	size := "4k"
	if redact > 0 {
		size = strconv.Itoa(4+redact*(maxRedacted>>10)) + "k"
	}
	for _, o := range [][2]string{{"size", size}, {"mode", "0700"}} {
		if err := unix.FsconfigSetString(fsfd, o[0], o[1]); err != nil {
			return fmt.Errorf("sandbox helper: fsconfig %s: %w", o[0], err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return fmt.Errorf("sandbox helper: fsconfig: %w", err)
	}
	mnt, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return fmt.Errorf("sandbox helper: fsmount: %w", err)
	}
	defer unix.Close(mnt)
	empty, err := unix.Openat(mnt, "f", unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o400)
	if err != nil {
		return fmt.Errorf("sandbox helper: %w", err)
	}
	unix.Close(empty)
	if err := unix.Mkdirat(mnt, "d", 0o500); err != nil {
		return fmt.Errorf("sandbox helper: %w", err)
	}
	// The redacted copies are written before the tmpfs turns read-only.
	for i, h := range hide {
		if len(h.redact) > 0 {
			if err := writeRedacted(mnt, "r"+strconv.Itoa(i), h); err != nil {
				return err
			}
		}
	}
	if err := unix.MountSetattr(mnt, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("sandbox helper: mount_setattr: %w", err)
	}
	for i, h := range hide {
		if h.readOnly && len(h.redact) == 0 {
			continue
		}
		src := ""
		if len(h.redact) > 0 {
			src = "r" + strconv.Itoa(i)
		}
		if err := hideOne(mnt, h, src); err != nil {
			return err
		}
	}
	return nil
}

// maxRedacted is the largest dotenv file the helper copies without its
// secret lines; a larger one is hidden whole.
const maxRedacted = 256 << 10

// writeRedacted writes to name in the tmpfs mnt the content of h's file
// less the lines that set one of h.redact (KEY=VALUE, with or without
// "export "), read from the file h lists (checked like a file to hide).
// A file over maxRedacted leaves the copy empty: hidden whole.
func writeRedacted(mnt int, name string, h hiddenFile) error {
	fd, err := unix.Open(h.path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("sandbox helper: redact %s: %w (it moved as the command started; run it again)", h.path, err)
	}
	f := os.NewFile(uintptr(fd), h.path)
	defer f.Close()
	var s unix.Stat_t
	if err := unix.Fstat(fd, &s); err != nil || uint64(s.Dev) != h.dev || uint64(s.Ino) != h.ino || s.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("sandbox helper: redact %s: another file is there now (it moved as the command started; run it again)", h.path)
	}
	var out []byte
	if s.Size <= maxRedacted {
		b, err := io.ReadAll(io.LimitReader(f, maxRedacted+1))
		if err != nil {
			return fmt.Errorf("sandbox helper: redact %s: %w", h.path, err)
		}
		if len(b) <= maxRedacted {
			out = redactDotEnv(b, h.redact)
		}
	}
	w, err := unix.Openat(mnt, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return fmt.Errorf("sandbox helper: %w", err)
	}
	defer unix.Close(w)
	for len(out) > 0 {
		n, err := unix.Write(w, out)
		if err != nil {
			return fmt.Errorf("sandbox helper: redact %s: %w", h.path, err)
		}
		out = out[n:]
	}
	return nil
}

// openListed opens h's path (O_PATH, the last component not followed)
// and checks that it is still the file it was listed as; verb names
// what is done to it, for errors.
func openListed(h hiddenFile, verb string) (int, *unix.Stat_t, error) {
	target, err := unix.Open(h.path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, fmt.Errorf("sandbox helper: %s %s: %w (it moved as the command started; run it again)", verb, h.path, err)
	}
	var s unix.Stat_t
	if err := unix.Fstat(target, &s); err != nil {
		unix.Close(target)
		return -1, nil, fmt.Errorf("sandbox helper: %s %s: %w", verb, h.path, err)
	}
	if uint64(s.Dev) != h.dev || uint64(s.Ino) != h.ino {
		unix.Close(target)
		return -1, nil, fmt.Errorf("sandbox helper: %s %s: another file is there now (it moved as the command started; run it again)", verb, h.path)
	}
	return target, &s, nil
}

// protectOne binds h, which must still be the file or folder it was
// listed as, read-only over itself: writes to it (or, for a folder,
// anything made, renamed or removed in it) fail with EROFS, and renaming
// or removing it fails with EBUSY, as a mount point. The copy is of the
// whole tree beneath it, mounts included (the hidden ones too), made
// read-only throughout before it is attached, onto the descriptor
// checked, so there is no moment where it is writable or elsewhere.
func protectOne(h hiddenFile) error {
	target, _, err := openListed(h, "protect")
	if err != nil {
		return err
	}
	defer unix.Close(target)
	clone, err := unix.OpenTree(target, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("sandbox helper: protect %s: open_tree: %w", h.path, err)
	}
	defer unix.Close(clone)
	if err := unix.MountSetattr(clone, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("sandbox helper: protect %s: mount_setattr: %w", h.path, err)
	}
	if err := unix.MoveMount(clone, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("sandbox helper: protect %s: %w", h.path, err)
	}
	return nil
}

// hideOne mounts a copy of the empty file or folder of the tmpfs mnt over
// h, which must still be the file it was listed as.
func hideOne(mnt int, h hiddenFile, src string) error {
	target, s, err := openListed(h, "hide")
	if err != nil {
		return err
	}
	defer unix.Close(target)
	switch {
	case src != "": // a redacted copy
	case s.Mode&unix.S_IFMT == unix.S_IFDIR:
		src = "d"
	default:
		src = "f"
	}
	clone, err := unix.OpenTree(mnt, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("sandbox helper: open_tree: %w", err)
	}
	defer unix.Close(clone)
	if err := unix.MoveMount(clone, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("sandbox helper: hide %s: %w", h.path, err)
	}
	return nil
}
