//go:build !linux || mips || mipsle || mips64 || mips64le

package permission

import (
	"errors"
	"os/exec"
)

func landlockABI() int { return 0 }

func seccompAvailable() bool { return false }

// startConfined is never reached here: without Landlock, SandboxStatus
// reports the sandbox as not enforced and commands start unconfined.
func startConfined(*exec.Cmd, confinement) error {
	return errors.New("sandbox: Landlock is not supported on this platform")
}

func prepareConfinement(confinement) {}

// rulesetState has nothing to keep without Landlock.
type rulesetState struct{}

func newRulesetCache() *rulesetCache { return &rulesetCache{} }
