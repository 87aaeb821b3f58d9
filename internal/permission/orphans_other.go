//go:build !linux

package permission

import "os/exec"

// becomeSubreaper does nothing here: without a subreaper a leftover's
// parent is init, and without Landlock nothing is confined to begin with.
func becomeSubreaper() int { return -1 }

func startTime(int) uint64 { return 0 }

func sweep(map[int]uint64, int) int { return 0 }

// endsWithParent is false here: no parent-death signal to count on.
func endsWithParent(*exec.Cmd) bool { return false }
