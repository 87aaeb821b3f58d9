//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxHideWatches bounds the inotify watches one Hidden takes: the
// user's limit (fs.inotify.max_user_watches, 8192 on older kernels) is
// shared with their editors and dev servers. Directories past it are
// compared by stamp at each call instead. A variable so tests can lower
// it.
var maxHideWatches = 2048

// hiddenState is the Linux part of Hidden: the files found, followed by
// descriptor, and what says when the walk is out of date.
type hiddenState struct {
	tracked []trackedFile
	walked  bool
	walks   int // for tests
	// notify is the inotify descriptor of the last walk's watches (-1
	// when there is none); watched names each watch's directory as it
	// was walked.
	notify  int
	watched map[int32]string
	// unwatched are the directories walked without a watch, each with
	// its stamp before it was listed and whether that stamp may be
	// trusted (see dirStamp.trustedAt).
	unwatched map[string]stampedDir
}

// trackedFile is a file or folder found hidden, held open (O_PATH, which
// reads nothing) so that its current path can be asked of the kernel.
type trackedFile struct {
	fd       int
	dev, ino uint64
}

type stampedDir struct {
	stamp   dirStamp
	trusted bool
}

func newHiddenState(h *Hidden) *hiddenState {
	st := &hiddenState{notify: -1}
	// The descriptors live as long as the Hidden.
	runtime.AddCleanup(h, (*hiddenState).close, st)
	return st
}

func (st *hiddenState) close() {
	for _, t := range st.tracked {
		syscall.Close(t.fd)
	}
	st.tracked = nil
	st.unwatch()
}

func (st *hiddenState) unwatch() {
	if st.notify >= 0 {
		syscall.Close(st.notify)
	}
	st.notify, st.watched, st.unwatched = -1, nil, nil
}

// files lists what is hidden now: each one-path rule's file when it
// exists, and each file found so far where it is now (walking again
// first when the last walk is out of date).
func (h *Hidden) files() []hiddenFile {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.st
	for _, p := range h.fixed {
		st.track(p)
	}
	if len(h.globs) > 0 && (!st.walked || st.changed(h)) {
		st.walk(h)
	}
	return st.current()
}

// track starts following the file at p (symlinks followed: what a read
// of p would reach) unless it is followed already.
func (st *hiddenState) track(p string) {
	var s syscall.Stat_t
	if syscall.Stat(p, &s) != nil || st.tracks(uint64(s.Dev), uint64(s.Ino)) {
		return
	}
	fd, err := syscall.Open(p, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	if syscall.Fstat(fd, &s) != nil || st.tracks(uint64(s.Dev), uint64(s.Ino)) {
		syscall.Close(fd)
		return
	}
	st.tracked = append(st.tracked, trackedFile{fd: fd, dev: uint64(s.Dev), ino: uint64(s.Ino)})
}

func (st *hiddenState) tracks(dev, ino uint64) bool {
	return slices.ContainsFunc(st.tracked, func(t trackedFile) bool { return t.dev == dev && t.ino == ino })
}

// current returns the tracked files' present paths, forgetting those
// that are gone (no name left where the descriptor's was).
func (st *hiddenState) current() []hiddenFile {
	out := make([]hiddenFile, 0, len(st.tracked))
	kept := st.tracked[:0]
	buf := make([]byte, unix.PathMax)
	for _, t := range st.tracked {
		n, err := syscall.Readlink("/proc/self/fd/"+strconv.Itoa(t.fd), buf)
		var s syscall.Stat_t
		if err != nil || n <= 0 || buf[0] != '/' || syscall.Lstat(string(buf[:n]), &s) != nil ||
			uint64(s.Dev) != t.dev || uint64(s.Ino) != t.ino {
			// Removed (the link reads "PATH (deleted)"), or no longer
			// reachable by the name the kernel gives.
			syscall.Close(t.fd)
			continue
		}
		kept = append(kept, t)
		p := string(buf[:n])
		if !slices.ContainsFunc(out, func(f hiddenFile) bool { return f.path == p }) {
			out = append(out, hiddenFile{path: p, dev: t.dev, ino: t.ino})
		}
	}
	clear(st.tracked[len(kept):])
	st.tracked = kept
	return out
}

// walk walks the workspace again: every directory listed is watched (or
// stamped) before it is listed, so nothing made in it afterwards goes
// unseen, and every match is tracked.
func (st *hiddenState) walk(h *Hidden) {
	st.unwatch()
	st.walked = true
	st.walks++
	if fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC); err == nil {
		st.notify = fd
	}
	st.watched = map[int32]string{}
	st.unwatched = map[string]stampedDir{}
	h.walk(func(dir string) {
		if st.notify >= 0 && len(st.watched) < maxHideWatches {
			// Entries made, moved in or moved out; the directory itself
			// moved or removed.
			const mask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE_SELF |
				unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK
			if wd, err := unix.InotifyAddWatch(st.notify, dir, mask); err == nil {
				st.watched[int32(wd)] = dir
				return
			}
		}
		var s syscall.Stat_t
		if syscall.Lstat(dir, &s) == nil {
			stamp := stampOf(&s)
			st.unwatched[dir] = stampedDir{stamp: stamp, trusted: stamp.trustedAt(time.Now())}
		}
	}, st.track)
}

// changed reports whether the last walk may have missed something: a
// directory made, moved or removed beneath the workspace, a file whose
// name a rule matches made or moved in, events lost, or an unwatched
// directory whose stamp moved (or was too fresh to trust).
func (st *hiddenState) changed(h *Hidden) bool {
	changed := false
	if st.notify >= 0 {
		var buf [4096]byte
		for {
			n, err := syscall.Read(st.notify, buf[:])
			if err == syscall.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				break // EAGAIN: nothing more queued
			}
			for b := buf[:n]; len(b) >= unix.SizeofInotifyEvent; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
				end := unix.SizeofInotifyEvent + int(ev.Len)
				if end > len(b) {
					break
				}
				name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:end]), "\x00")
				b = b[end:]
				switch {
				case ev.Mask&unix.IN_IGNORED != 0:
					// The watch is gone with its directory, which the
					// event before said.
				case ev.Mask&(unix.IN_Q_OVERFLOW|unix.IN_ISDIR|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0:
					changed = true
				case ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
					if dir, ok := st.watched[ev.Wd]; ok && h.matches(dir+"/"+name) {
						changed = true
					}
				}
			}
		}
	}
	if changed {
		return true
	}
	var s syscall.Stat_t
	for dir, d := range st.unwatched {
		if !d.trusted || syscall.Lstat(dir, &s) != nil || stampOf(&s) != d.stamp {
			return true
		}
	}
	return false
}
