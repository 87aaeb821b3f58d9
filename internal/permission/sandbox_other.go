//go:build !linux || mips || mipsle || mips64 || mips64le

package permission

import (
	"errors"
	"os/exec"
)

func landlockABI() int { return 0 }

// startConfined is never reached here: without Landlock, SandboxStatus
// reports the sandbox as not enforced and commands start unconfined.
func startConfined(*exec.Cmd, []string, bool) error {
	return errors.New("sandbox: Landlock is not supported on this platform")
}
