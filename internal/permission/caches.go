package permission

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Confined commands keep their toolchain caches apart from the person's.
//
// What a build tool caches, it trusts later without checking it again: a
// Go build cache entry is linked into the next binary, an extracted
// module's sources are compiled as they are, a package npx cached is run
// by the next `npx`, pre-commit runs the hook environments it cached at
// the next commit. A command that could write the person's caches could
// plant a program there that the person's own tools then run outside the
// sandbox. So a confined command writes its own caches, under the
// Reasonix home (privateCaches), named by its environment (cacheEnv);
// the person's stay readable but not writable (WritablePaths).

// privateCacheDir is where confined commands in workspace keep their
// caches: a folder of the Reasonix home's "cache" named for the
// workspace, which no tool of the person's uses. It stays from run to
// run, so builds in the sandbox get warm. One per workspace, because a
// cache is trusted by every build that reads it: shared, a command in a
// hostile repository could plant a build cache entry or an extracted
// module that every later build in the person's other projects linked
// into the binaries the person then runs.
func privateCacheDir(reasonixHome, workspace string) string {
	if reasonixHome == "" || !filepath.IsAbs(reasonixHome) || workspace == "" {
		return ""
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(filepath.Clean(ws)))
	return filepath.Join(filepath.Clean(reasonixHome), "cache", filepath.Base(ws)+"-"+hex.EncodeToString(sum[:6]))
}

// cacheEnv lists the variables that send a confined command's toolchains
// to the private caches under dir, to be appended to its environment
// (the last value of a name wins). getenv reads the person's environment
// and goEnv their Go configuration (`go env -w`, see readGoEnv), which
// say where the person's caches are. It returns nil without a dir.
func cacheEnv(dir string, network bool, getenv, goEnv func(string) string) []string {
	if dir == "" {
		return nil
	}
	env := []string{
		"GOCACHE=" + filepath.Join(dir, "go-build"),
		"GOMODCACHE=" + filepath.Join(dir, "go-mod"),
		// Everything that follows the XDG base directories (pip, uv,
		// pre-commit, deno, playwright's browsers, the default GOCACHE).
		"XDG_CACHE_HOME=" + filepath.Join(dir, "xdg"),
		"npm_config_cache=" + filepath.Join(dir, "npm"),
		"YARN_CACHE_FOLDER=" + filepath.Join(dir, "yarn"),
		"npm_config_store_dir=" + filepath.Join(dir, "pnpm-store"),
	}
	env = append(env, goProxyEnv(network, getenv, goEnv)...)
	// Browsers playwright installed are only run by the tests, never
	// written: point at the person's (read-only for the command) rather
	// than leave every test run without a browser.
	if getenv("PLAYWRIGHT_BROWSERS_PATH") == "" {
		if base := userCacheDir(getenv); base != "" {
			if st, err := os.Stat(filepath.Join(base, "ms-playwright")); err == nil && st.IsDir() {
				env = append(env, "PLAYWRIGHT_BROWSERS_PATH="+filepath.Join(base, "ms-playwright"))
			}
		}
	}
	return env
}

// goProxyEnv lets Go find, in the person's module cache, the modules a
// confined command's empty private one lacks: that cache's download
// folder is a module proxy (the same files at the same paths), read
// through file:// first. Go checks what it fetches from any proxy against
// go.sum, and a module go.sum does not list against the checksum
// database, as for the network proxy: nothing read there is trusted more
// than a download, so GOFLAGS, GONOSUMDB and GOSUMDB are left as the
// person set them. With the network the person's own GOPROXY follows;
// without it, "off" (a clear "lookup disabled" error in place of a
// connection refused).
func goProxyEnv(network bool, getenv, goEnv func(string) string) []string {
	goVar := func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return goEnv(name)
	}
	next := "off"
	if network {
		next = goVar("GOPROXY")
		if next == "" {
			next = "https://proxy.golang.org,direct"
		}
	}
	modCache := goVar("GOMODCACHE")
	if modCache == "" {
		gopath := goVar("GOPATH")
		if gopath == "" {
			if home := getenv("HOME"); home != "" {
				gopath = filepath.Join(home, "go")
			}
		}
		if first := filepath.SplitList(gopath); len(first) > 0 && first[0] != "" {
			modCache = filepath.Join(first[0], "pkg", "mod")
		}
	}
	proxy := next
	// A comma or bar would split the proxy list; such a cache is left out.
	if filepath.IsAbs(modCache) && !strings.ContainsAny(modCache, ",|") {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(modCache, "cache", "download"))}
		proxy = u.String() + "," + next
	}
	env := []string{"GOPROXY=" + proxy}
	// Modules matching GOPRIVATE (or GONOPROXY) skip every proxy and are
	// fetched from their repositories, which without the network fails
	// though the person's cache holds them. Without the network nothing
	// can leak by asking a proxy about them, so none is exempt: a list
	// of no patterns ("," — an empty value would mean GOPRIVATE again).
	// Their checksums are still checked against go.sum (GONOSUMDB is
	// untouched).
	if !network && (goVar("GOPRIVATE") != "" || goVar("GONOPROXY") != "") {
		env = append(env, "GONOPROXY=,")
	}
	return env
}

// userCacheDir is the person's XDG cache folder, as getenv says.
func userCacheDir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache")
	}
	return ""
}

// readGoEnv reads the person's Go configuration file (what `go env -w`
// writes: $GOENV, else go/env in the user's configuration folder) into
// a lookup; a missing or unreadable file is an empty one, as for go.
func readGoEnv(getenv func(string) string) func(string) string {
	file := getenv("GOENV")
	if file == "off" {
		return func(string) string { return "" }
	}
	if file == "" {
		dir := getenv("XDG_CONFIG_HOME")
		if !filepath.IsAbs(dir) {
			home := getenv("HOME")
			if home == "" {
				return func(string) string { return "" }
			}
			dir = filepath.Join(home, ".config")
		}
		file = filepath.Join(dir, "go", "env")
	}
	vals := map[string]string{}
	if b, err := os.ReadFile(file); err == nil {
		for line := range strings.Lines(string(b)) {
			k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
			if ok && k != "" && !strings.HasPrefix(k, "#") {
				vals[k] = v
			}
		}
	}
	return func(name string) string { return vals[name] }
}

// cacheWorkspace is the workspace whose private caches commands use.
func (o SandboxOptions) cacheWorkspace() string {
	if o.CacheFor != "" {
		return o.CacheFor
	}
	return o.Workspace
}

// usedStamp, in a private cache folder, has the time of the last run
// whose commands used it: SweepCaches removes a folder unused for
// CacheMaxAge. (The folder's own time moves only when an entry of its
// own is added or removed.)
const usedStamp = ".last-used"

// CacheMaxAge is how long the private caches of a workspace no command
// has used are kept: one per project would otherwise pile up forever.
const CacheMaxAge = 30 * 24 * time.Hour

// markUsed stamps the private cache folder dir as used at now.
func markUsed(dir string, now time.Time) {
	p := filepath.Join(dir, usedStamp)
	if err := os.Chtimes(p, now, now); err != nil {
		if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_ = f.Close()
			_ = os.Chtimes(p, now, now)
		}
	}
}

// SweepCaches removes, from the Reasonix home's cache folder, the
// private caches of workspaces no command has used for CacheMaxAge, and
// returns how many it removed. It belongs on the way out of a run (a
// large cache takes a while to remove), never at start-up.
func SweepCaches(reasonixHome string, now time.Time) int {
	if reasonixHome == "" || !filepath.IsAbs(reasonixHome) {
		return 0
	}
	root := filepath.Join(filepath.Clean(reasonixHome), "cache")
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		st, err := os.Stat(filepath.Join(dir, usedStamp))
		if err != nil {
			// Without a stamp, the folder's own time.
			if st, err = os.Stat(dir); err != nil {
				continue
			}
		}
		if now.Sub(st.ModTime()) < CacheMaxAge {
			continue
		}
		// Go makes its module cache read-only; make each folder
		// writable again so its entries can go.
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o700)
			}
			return nil
		})
		if os.RemoveAll(dir) == nil {
			n++
		}
	}
	return n
}
