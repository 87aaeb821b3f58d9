package config

import (
	"strings"
	"testing"
)

// A server whose name holds "__" would have its tools read as another
// server's (mcp__github__x__tool under server github's rules).
func TestPluginNameWithDoubleUnderscore(t *testing.T) {
	t.Parallel()
	if msg := (Plugin{Name: "github__x", Command: "srv"}).Problem(); !strings.Contains(msg, `"__"`) {
		t.Errorf("Problem() = %q", msg)
	}
	if msg := (Plugin{Name: "git_hub-x.y", Command: "srv"}).Problem(); msg != "" {
		t.Errorf("Problem() = %q", msg)
	}
}
