//go:build !linux || mips || mipsle || mips64 || mips64le

package permission

import "errors"

// HidingAvailable reports whether the sandbox can hide paths from
// commands here (SandboxOptions.Hide), and why not.
func HidingAvailable() (bool, string) { return hideAvailable() }

func hideAvailable() (bool, string) {
	return false, "hiding needs Linux mount namespaces"
}

// RunSandboxHelper is Linux-only; elsewhere the helper is never started.
func RunSandboxHelper([]string) error {
	return errors.New("sandbox helper: not supported on this platform")
}
