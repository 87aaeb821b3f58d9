//go:build linux && !amd64 && !arm64 && !mips && !mipsle && !mips64 && !mips64le

package permission

// No socket filter on this architecture: network = false closes TCP
// (Landlock) but not UDP or unix sockets; doctor says so.

func seccompAvailable() bool { return false }

func installSocketFilter() error { return nil }
