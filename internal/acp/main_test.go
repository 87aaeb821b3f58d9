package acp

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine they started is
// still running when they end: every request to the editor has an owner
// that waits for it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
