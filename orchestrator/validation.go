package orchestrator

import (
	"os"
	"path/filepath"
	"regexp"

	"github.com/reasonix/reasonix/internal/lazy"
)

var makeTestTarget = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`(?m)^test\s*:`) }}

// DetectValidation guesses the command that checks a project from the
// files at its root, for a plan that names none: "" when nothing fits.
// It is deliberately small: the test command of the project's own build
// tool, never anything that installs or deploys.
func DetectValidation(workspace string) string {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(workspace, name))
		return err == nil
	}
	if b, err := os.ReadFile(filepath.Join(workspace, "Makefile")); err == nil && makeTestTarget.Get().Match(b) {
		return "make test"
	}
	switch {
	case has("go.mod"):
		return "go test ./..."
	case has("Cargo.toml"):
		return "cargo test"
	case has("package.json"):
		return "npm test"
	case has("pyproject.toml"), has("pytest.ini"), has("setup.py"):
		return "python -m pytest"
	}
	return ""
}
