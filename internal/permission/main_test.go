package permission

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == SandboxHelperArg {
		// The test binary is the sandbox's helper when a test starts a
		// command with files hidden (os.Executable names it).
		err := RunSandboxHelper(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(126)
	}
	os.Exit(m.Run())
}
