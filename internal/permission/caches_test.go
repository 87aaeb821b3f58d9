package permission

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCacheEnvRedirectsToolchains(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".cache", "ms-playwright"), 0o755); err != nil {
		t.Fatal(err)
	}
	none := func(string) string { return "" }
	person := func(vals map[string]string) func(string) string {
		return func(k string) string { return vals[k] }
	}
	dir := "/rx/cache"
	cases := []struct {
		name          string
		network       bool
		env, goEnvSet map[string]string
		want          []string // entries that must be there
		absent        []string // names that must not be set
	}{
		{name: "offline", env: map[string]string{"HOME": home},
			want: []string{"GOCACHE=/rx/cache/go-build", "GOMODCACHE=/rx/cache/go-mod", "XDG_CACHE_HOME=/rx/cache/xdg",
				"npm_config_cache=/rx/cache/npm", "YARN_CACHE_FOLDER=/rx/cache/yarn", "npm_config_store_dir=/rx/cache/pnpm-store",
				"GOPROXY=file://" + home + "/go/pkg/mod/cache/download,off",
				"PLAYWRIGHT_BROWSERS_PATH=" + home + "/.cache/ms-playwright"},
			absent: []string{"GONOPROXY"}},
		{name: "network keeps the person's proxy", network: true,
			env:  map[string]string{"HOME": home, "GOPROXY": "https://corp.example/proxy,direct", "GOMODCACHE": "/m"},
			want: []string{"GOPROXY=file:///m/cache/download,https://corp.example/proxy,direct"}},
		{name: "network, default proxy", network: true, env: map[string]string{"GOPATH": "/gp1:/gp2"},
			want: []string{"GOPROXY=file:///gp1/pkg/mod/cache/download,https://proxy.golang.org,direct"}},
		{name: "go env file", network: true, env: map[string]string{"HOME": home},
			goEnvSet: map[string]string{"GOPROXY": "https://p.example", "GOMODCACHE": "/fromfile"},
			want:     []string{"GOPROXY=file:///fromfile/cache/download,https://p.example"}},
		{name: "private modules offline", env: map[string]string{"GOPRIVATE": "corp.example", "GOMODCACHE": "/m"},
			want: []string{"GOPROXY=file:///m/cache/download,off", "GONOPROXY=,"}},
		{name: "private modules with the network keep bypassing proxies", network: true,
			env: map[string]string{"GOPRIVATE": "corp.example", "GOMODCACHE": "/m"}, absent: []string{"GONOPROXY"}},
		{name: "a comma would split the list", env: map[string]string{"GOMODCACHE": "/a,b"},
			want: []string{"GOPROXY=off"}},
		{name: "the person's browsers path stays", env: map[string]string{"HOME": home, "PLAYWRIGHT_BROWSERS_PATH": "/b"},
			absent: []string{"PLAYWRIGHT_BROWSERS_PATH"}},
	}
	for _, c := range cases {
		goEnv := none
		if c.goEnvSet != nil {
			goEnv = person(c.goEnvSet)
		}
		got := cacheEnv(dir, c.network, person(c.env), goEnv)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %q missing from %q", c.name, w, got)
			}
		}
		for _, a := range c.absent {
			if slices.ContainsFunc(got, func(e string) bool { return len(e) > len(a) && e[:len(a)+1] == a+"=" }) {
				t.Errorf("%s: %s set: %q", c.name, a, got)
			}
		}
	}
	if got := cacheEnv("", false, none, none); got != nil {
		t.Errorf("no cache folder: %q", got)
	}
}

func TestReadGoEnv(t *testing.T) {
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "go", "env"), []byte("GOPROXY=https://p.example\nGOPRIVATE=corp.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": cfg}
	g := readGoEnv(func(k string) string { return env[k] })
	if g("GOPROXY") != "https://p.example" || g("GOPRIVATE") != "corp.example" || g("GOFLAGS") != "" {
		t.Errorf("read %q %q %q", g("GOPROXY"), g("GOPRIVATE"), g("GOFLAGS"))
	}
	env["GOENV"] = "off"
	if g := readGoEnv(func(k string) string { return env[k] }); g("GOPROXY") != "" {
		t.Errorf("GOENV=off still read the file")
	}
}

func TestWritablePathsLeaveThePersonsCachesOut(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GOCACHE", "/person/gocache")
	t.Setenv("GOMODCACHE", "/person/gomod")
	t.Setenv("XDG_CACHE_HOME", "/person/xdg")
	t.Setenv("npm_config_cache", "/person/npm")
	t.Setenv("GOPATH", "/person/gopath")
	w := WritablePaths(SandboxOptions{Home: "/rx", Workspace: "/src/a"})
	own := privateCacheDir("/rx", "/src/a")
	if !slices.Contains(w, own) || !slices.Contains(w, "/person/gopath/pkg/sumdb") {
		t.Errorf("the private caches (%s) or Go's checksum database state are not writable: %q", own, w)
	}
	// Another project's private caches are not this one's to write: a
	// hostile repository could otherwise plant what the person's other
	// projects build from.
	other := privateCacheDir("/rx", "/src/b")
	if other == own || !strings.HasPrefix(own, "/rx/cache/a-") || !strings.HasPrefix(other, "/rx/cache/b-") {
		t.Errorf("the private caches of /src/a and /src/b are %s and %s", own, other)
	}
	for _, p := range w {
		if p == "/rx/cache" || p == other {
			t.Errorf("%s is writable from /src/a: %q", p, w)
		}
	}
	for _, p := range []string{"/person/gocache", "/person/gomod", "/person/xdg", "/person/npm", "/person/gopath/pkg",
		filepath.Join(home, ".cache"), filepath.Join(home, ".npm"), filepath.Join(home, ".yarn"), filepath.Join(home, ".pnpm-store")} {
		if slices.Contains(w, p) {
			t.Errorf("the person's cache %s is writable", p)
		}
	}
}

func TestSweepCachesRemovesOnlyUnusedOnes(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	fresh, stale := privateCacheDir(home, "/src/fresh"), privateCacheDir(home, "/src/stale")
	for _, d := range []string{fresh, stale} {
		// Go leaves its module cache read-only: the sweep must still
		// remove it.
		mod := filepath.Join(d, "go-mod", "example.test", "dep@v1.0.0")
		if err := os.MkdirAll(mod, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, "dep.go"), []byte("package dep\n"), 0o444); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(mod, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	markUsed(fresh, now.Add(-CacheMaxAge+time.Hour))
	markUsed(stale, now.Add(-CacheMaxAge-time.Hour))
	if n := SweepCaches(home, now); n != 1 {
		t.Errorf("removed %d folders, want 1", n)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("the cache unused for longer than %v is still there", CacheMaxAge)
	}
	if _, err := os.Stat(filepath.Join(fresh, "go-mod", "example.test", "dep@v1.0.0", "dep.go")); err != nil {
		t.Errorf("a cache used within %v was touched: %v", CacheMaxAge, err)
	}
}

func TestPlanWorkerCheckoutUsesItsProjectsCaches(t *testing.T) {
	o := SandboxOptions{Home: "/rx", Workspace: "/rx/worktrees/p1/s1", CacheFor: "/src/a"}
	if got, want := privateCacheDir(o.Home, o.cacheWorkspace()), privateCacheDir("/rx", "/src/a"); got != want {
		t.Errorf("a worker's caches are %s, want its project's %s", got, want)
	}
	if w := WritablePaths(o); !slices.Contains(w, privateCacheDir("/rx", "/src/a")) {
		t.Errorf("the project's caches are not writable from its worker: %q", w)
	}
}
