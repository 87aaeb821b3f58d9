//go:build unix && !linux && !darwin

package nofollow

import "golang.org/x/sys/unix"

const pathFlags = unix.O_RDONLY

// openNoLinks has no one-call form here: done is always false.
func openNoLinks(string, int, uint32) (int, error, bool) { return -1, nil, false }
