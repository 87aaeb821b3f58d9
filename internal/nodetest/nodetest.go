// Package nodetest finds the npm packages end-to-end tests drive Reasonix
// with (MCP servers, the ACP client SDK, a browser driver). `.ci/run`
// installs them into one cache folder with `npm install --prefix`; a test
// that needs a package which is not there skips with the reason and the
// command that installs it, so `make test` says why it did not run.
package nodetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// DirEnv names the folder `.ci/run` installs npm packages into; without
// it, [Dir] is used.
const DirEnv = "REASONIX_NPM_DIR"

// Dir returns the npm prefix folder: $REASONIX_NPM_DIR, else
// <user cache dir>/reasonix-ci/npm.
func Dir() string {
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	c, err := os.UserCacheDir()
	if err != nil {
		c = os.TempDir()
	}
	return filepath.Join(c, "reasonix-ci", "npm")
}

// Node returns the path of the node binary, or skips t with the reason.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not installed (install Node.js, then run .ci/run)")
	}
	return p
}

// Module returns the node_modules folder holding pkg (for NODE_PATH or a
// script's working directory), or skips t naming the install command.
func Module(t testing.TB, pkg string) string {
	t.Helper()
	Node(t)
	mods := filepath.Join(Dir(), "node_modules")
	if _, err := os.Stat(filepath.Join(mods, filepath.FromSlash(pkg), "package.json")); err != nil {
		t.Skipf("skipped: npm package %s is not installed in %s (run .ci/run, or: npm install --prefix %s %s)",
			pkg, Dir(), Dir(), pkg)
	}
	return mods
}
