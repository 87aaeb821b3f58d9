//go:build !linux || mips || mipsle || mips64 || mips64le

package permission

import "fmt"

func landlockABI() int { return 0 }

// RunSandboxed is the body of the hidden __sandbox subcommand. Off Linux
// there is no sandbox and SandboxCommand never rewrites commands, so being
// called is an error.
func RunSandboxed(args []string) error {
	if _, _, _, err := parseSandboxArgs(args); err != nil {
		return err
	}
	return fmt.Errorf("sandbox: Landlock is not supported on this platform")
}
