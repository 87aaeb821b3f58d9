//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package tui

import "time"

// probeBackground cannot ask this system's console; the theme falls back
// to COLORFGBG or dark.
func probeBackground(time.Duration) (light, ok bool) { return false, false }
