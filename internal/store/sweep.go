package store

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/reasonix/reasonix/internal/runtmp"
)

// A temporary file of renameInto lives for the milliseconds between its
// create and its rename, unless its process was killed in between. One
// whose process is gone is removed once it is a minute old (a process in
// another pid namespace, sharing the project, looks gone; its file is
// renamed long before that). Past a day one is removed whatever its name
// says: files of versions whose names carry no process id, and of a
// process id that lives on in another process or namespace.
const (
	tempDeadAge = time.Minute
	tempMaxAge  = 24 * time.Hour
)

// tempPattern is the os.CreateTemp pattern of the temporary file beside
// base: hidden, the target's name, ".tmp", this process's id and a dash
// before CreateTemp's random digits (".s1.jsonl.tmp4242-1234567").
func tempPattern(base string) string {
	return "." + base + ".tmp" + strconv.Itoa(os.Getpid()) + "-*"
}

// tempPID reads a temporary file's name: whether it is one renameInto
// makes (or made before names carried a process id, ".s1.jsonl.tmp123"),
// and the process id it carries, 0 when none.
func tempPID(name string) (pid int, ok bool) {
	if !strings.HasPrefix(name, ".") {
		return 0, false
	}
	i := strings.LastIndex(name, ".tmp")
	if i <= 1 {
		return 0, false
	}
	id, random, found := strings.Cut(name[i+len(".tmp"):], "-")
	if !found {
		id, random = "", id
	}
	if !digits(random) || found && !digits(id) {
		return 0, false
	}
	if !found {
		return 0, true
	}
	pid, err := strconv.Atoi(id)
	return pid, err == nil && pid > 0
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// SweepTemps removes from dir the temporary files that processes killed
// between a temporary file's create and its rename (Create,
// WriteFileAtomic) left behind: those whose process is gone and which
// are older than a minute, and any older than a day. A file a running
// process may still be writing is kept. It returns how many it removed;
// a missing directory, or a file it cannot remove, is no error: the next
// sweep tries again.
func SweepTemps(dir string, now time.Time) int {
	return runtmp.SweepDir(dir, tempPID, func(pid int, info fs.FileInfo) bool {
		age := now.Sub(info.ModTime())
		gone := pid != 0 && pid != os.Getpid() && !runtmp.Alive(pid)
		return info.Mode().IsRegular() && (age >= tempMaxAge || gone && age >= tempDeadAge)
	}, os.Remove)
}
