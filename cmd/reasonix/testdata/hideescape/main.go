//go:build linux

// Command hideescape is a hostile command for the end-to-end tests: run
// as a bash command in a workspace whose hidden files (the sandbox mounts
// an empty file over each) it tries to read by every way around the
// mounts it knows. Its arguments are the paths to read, relative to the
// working directory. For each way it prints "tried WAY: what happened",
// and each file it reads as "read WAY PATH: CONTENT", so a test sees that
// it ran, what was refused, and whether a secret got out. It ends with
// "escape-done".
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

const childEnv = "HIDEESCAPE_CHILD"

func main() {
	paths := os.Args[1:]
	wd, _ := os.Getwd()
	if way := os.Getenv(childEnv); way != "" {
		mountAttacks(way+": ", paths, wd)
		return
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		report("plainly", p, b, err)
	}
	mountAttacks("", paths, wd)
	// The same from namespaces of the command's own: a mount namespace
	// made in the user namespace it runs in (whose mounts are not locked
	// when that namespace is the one the sandbox made them in), and a
	// user namespace of its own, where it holds every capability (but
	// the copied mounts are locked).
	child("own mount namespace", &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}, paths)
	// (No uid map: writing one is a write outside the sandbox.)
	child("own user namespace", &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS}, paths)

	// Another process's view of the file system: each process's root
	// and working directory.
	procs, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	tried := 0
	for _, e := range procs {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == self {
			continue
		}
		for _, p := range paths {
			for _, via := range []string{filepath.Join("/proc", e.Name(), "root", wd, p), filepath.Join("/proc", e.Name(), "cwd", p)} {
				if b, err := os.ReadFile(via); err == nil {
					report("through /proc", via, b, nil)
				}
				tried++
			}
		}
	}
	fmt.Printf("tried /proc/PID/root and /proc/PID/cwd of every process: %d paths\n", tried)

	// The disks themselves (a root command reads every file's blocks
	// there), the kernel log and the consoles' screens. Only devices
	// whose opening for reading does nothing else.
	devs, _ := os.ReadDir("/dev")
	opened := 0
	for _, e := range devs {
		p := filepath.Join("/dev", e.Name())
		if e.Type()&os.ModeDevice == 0 || e.Type()&os.ModeCharDevice != 0 && e.Name() != "kmsg" && !strings.HasPrefix(e.Name(), "vcs") {
			continue
		}
		f, err := os.Open(p)
		if err == nil {
			f.Close()
			fmt.Printf("opened device %s\n", p)
			opened++
		}
	}
	fmt.Printf("tried the disks, the kernel log and the consoles: %d opened\n", opened)
	fmt.Println("escape-done")
}

func report(way, p string, b []byte, err error) {
	if err != nil {
		fmt.Printf("tried %s %s: %v\n", way, p, err)
		return
	}
	fmt.Printf("read %s %s: %q\n", way, p, b)
}

// mountAttacks reads paths through a copy of the working directory's
// mount without the mounts on top of it (open_tree, non-recursive), then
// takes the mounts off and reads them again.
func mountAttacks(prefix string, paths []string, wd string) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, wd, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		fmt.Printf("tried %sopen_tree: %v\n", prefix, err)
	} else {
		for _, p := range paths {
			b, err := readAt(fd, p)
			report(prefix+"open_tree", p, b, err)
		}
		unix.Close(fd)
	}
	for _, p := range paths {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
			fmt.Printf("tried %sumount %s: %v\n", prefix, p, err)
			continue
		}
		b, err := os.ReadFile(p)
		report(prefix+"after umount", p, b, err)
	}
}

// child runs mountAttacks in a new process started with attr.
func child(way string, attr *syscall.SysProcAttr, paths []string) {
	cmd := exec.Command("/proc/self/exe", paths...)
	cmd.Env = append(os.Environ(), childEnv+"="+way)
	cmd.SysProcAttr = attr
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	if err := cmd.Run(); err != nil {
		fmt.Printf("tried %s: %v\n", way, err)
	}
}

func readAt(dirfd int, p string) ([]byte, error) {
	fd, err := unix.Openat(dirfd, p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	return io.ReadAll(f)
}
