//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package tui

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// probeBackground asks the terminal for its background colour (OSC 11)
// and, right behind that, for its device attributes (DA1), which every
// terminal answers. Terminals answer in order, so once the DA1 reply is
// in, the OSC 11 reply is in too or will not come: a terminal that does
// not know OSC 11 costs one round trip, not the timeout. It reports
// whether the background is light, and whether the terminal said.
func probeBackground(timeout time.Duration) (light, ok bool) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return false, false
	}
	defer f.Close()
	fd := int(f.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return false, false
	}
	defer func() { _ = term.Restore(fd, old) }()
	if _, err := unix.Write(fd, []byte(bgQuery)); err != nil {
		return false, false
	}
	deadline := time.Now().Add(timeout)
	var buf []byte
	chunk := make([]byte, 256)
	for !hasDA1Reply(buf) && len(buf) < 4096 {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		var set unix.FdSet
		set.Set(fd)
		tv := unix.NsecToTimeval(left.Nanoseconds())
		n, err := unix.Select(fd+1, &set, nil, nil, &tv)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		m, err := unix.Read(fd, chunk)
		if err != nil || m <= 0 {
			break
		}
		buf = append(buf, chunk[:m]...)
	}
	return parseBackground(buf)
}
