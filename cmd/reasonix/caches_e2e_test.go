//go:build linux

package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// The toolchains the sandbox cannot give a private cache yet (cargo,
// Gradle, Maven) keep their download caches writable, but not the parts
// of them that run later on their own outside the sandbox: a program
// planted in ~/.cargo/bin or ~/go/bin (on people's PATH), a Gradle init
// script, a cargo config's runner. Go's module cache (go/pkg) is not
// writable at all any more: commands have their own.
func TestE2ESandboxKeepsToolchainLaunchPointsReadOnly(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	needPython(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{bashCall(`python3 -c "
import os
for f in ['.cargo/bin/git', 'go/bin/ls', '.gradle/init.d/evil.gradle', '.cargo/config.toml', '.m2/settings.xml', 'go/pkg/mod/evil', '.cargo/registry/ok', '.gradle/caches/ok', '.m2/repository/ok']:
    try:
        open(os.path.expanduser('~/' + f), 'w').write('x')
        print('wrote', f)
    except OSError:
        print('refused', f)
"`)}},
		scripted.Turn{Text: "done"},
	)
	home := filepath.Dir(e.repo) // HOME in these tests
	for _, d := range []string{".cargo/bin", ".cargo/registry", "go/bin", "go/pkg/mod", ".gradle/init.d", ".gradle/caches", ".m2/repository"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.lastMessages("run", "--yolo", "build")
	res := toolResults(t, e.srv.Requests()[1])["call_0_0"]
	for _, f := range []string{".cargo/bin/git", "go/bin/ls", ".gradle/init.d/evil.gradle", ".cargo/config.toml", ".m2/settings.xml", "go/pkg/mod/evil"} {
		if !strings.Contains(res, "refused "+f) {
			t.Errorf("%s was writable:\n%s", f, res)
		}
		if _, err := os.Stat(filepath.Join(home, f)); err == nil {
			t.Errorf("%s exists after the run", f)
		}
	}
	for _, f := range []string{".cargo/registry/ok", ".gradle/caches/ok", ".m2/repository/ok"} {
		if !strings.Contains(res, "wrote "+f) {
			t.Errorf("the cache %s was not writable:\n%s", f, res)
		}
	}
}

// What a toolchain cached, the person's own programs run later outside
// the sandbox: a Go build cache entry is linked into their next binary, a
// package under ~/.npm/_npx is their next `npx`, pre-commit's cache holds
// the hooks of their next commit. A confined command can write none of
// those; its toolchains use private caches under the Reasonix home
// instead, and Go still builds offline from what the person's module
// cache holds, checked against go.sum.
func TestE2ESandboxGivesCommandsPrivateCaches(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	needPython(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH")
	}
	root := t.TempDir()
	personGoCache := filepath.Join(root, "person-gocache")
	personModCache := filepath.Join(root, "person-gomod")
	// The person's module cache holds a module nothing else can serve:
	// no network, and the person's GOPROXY is off.
	depZip, depMod := fakeModule(t, personModCache)
	planted := []string{
		filepath.Join(personGoCache, "ab", "planted-a"),
		"~/.cache/go-build/ab/planted-a",
		"~/.npm/_npx/0123abcd/node_modules/evil/index.js",
		"~/.cache/pre-commit/repo0/planted",
		"~/.cache/ms-playwright/chromium-1/planted",
		filepath.Join(personModCache, "example.test", "dep@v1.0.0", "planted.go"),
	}
	quoted := make([]string, len(planted))
	for i, f := range planted {
		quoted[i] = "'" + f + "'"
	}
	plant := `python3 -c "
import os
for f in [` + strings.Join(quoted, ", ") + `]:
    p = os.path.expanduser(f)
    try:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, 'w').write('x')
        print('wrote', f)
    except OSError:
        print('refused', f)
"`
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			// A background job is a confined command too (first: it has
			// the builds' time to finish before the run ends it).
			call("bash", map[string]any{"command": `echo "$GOCACHE" > job-gocache.txt`, "run_in_background": true}),
			bashCall(plant),
			bashCall(`go env GOCACHE GOMODCACHE GOPROXY; echo "$XDG_CACHE_HOME $npm_config_cache $PLAYWRIGHT_BROWSERS_PATH"`),
			bashCall("cd bad && go build -o app . ; echo bad-exit=$?"),
			bashCall("cd good && go build -o app . && ./app"),
		}},
		scripted.Turn{Text: "done"},
	)
	home := filepath.Dir(e.repo) // HOME in these tests
	for _, d := range []string{personGoCache, ".cache/go-build", ".npm/_npx", ".cache/pre-commit", ".cache/ms-playwright"} {
		if !filepath.IsAbs(d) {
			d = filepath.Join(home, d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	goSum := "example.test/dep v1.0.0 " + depZip + "\nexample.test/dep v1.0.0/go.mod " + depMod + "\n"
	for _, m := range []struct{ dir, sum string }{
		{"good", goSum},
		// Checksums still count: a go.sum that disagrees with what the
		// person's cache holds stops the build.
		{"bad", strings.Replace(goSum, depZip, "h1:"+base64.StdEncoding.EncodeToString(make([]byte, 32)), 1)},
	} {
		e.write(m.dir+"/go.mod", "module example.test/"+m.dir+"\n\ngo 1.22\n\nrequire example.test/dep v1.0.0\n")
		e.write(m.dir+"/go.sum", m.sum)
		e.write(m.dir+"/main.go", "package main\n\nimport \"example.test/dep\"\n\nfunc main() { println(dep.Hello()) }\n")
	}
	e.env = append(e.env, "GOCACHE="+personGoCache, "GOMODCACHE="+personModCache, "GOPROXY=off",
		"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	e.lastMessages("run", "--yolo", "build")
	res := toolResults(t, e.srv.Requests()[1])
	t.Logf("the hostile command's report:\n%s", res["call_0_1"])

	for _, f := range planted {
		if !strings.Contains(res["call_0_1"], "refused "+f) {
			t.Errorf("a command could write %s:\n%s", f, res["call_0_1"])
		}
		if rest, ok := strings.CutPrefix(f, "~/"); ok {
			f = filepath.Join(home, rest)
		}
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s exists after the run", f)
		}
	}

	// One private cache folder, this workspace's, named for it.
	mine, _ := filepath.Glob(filepath.Join(e.home, "cache", "*"))
	if len(mine) != 1 || !strings.HasPrefix(filepath.Base(mine[0]), filepath.Base(e.repo)+"-") {
		t.Fatalf("private cache folders %q, want one named for %s", mine, e.repo)
	}
	private := mine[0]
	want := []string{filepath.Join(private, "go-build"), filepath.Join(private, "go-mod"),
		"file://" + filepath.Join(personModCache, "cache", "download") + ",off",
		filepath.Join(private, "xdg"), filepath.Join(private, "npm"), filepath.Join(home, ".cache", "ms-playwright")}
	if got := strings.Fields(res["call_0_2"]); !slices.Equal(got[:min(len(got), len(want))], want) {
		t.Errorf("go env in a command = %q, want %q", got, want)
	}

	if bad := res["call_0_3"]; !strings.Contains(bad, "SECURITY ERROR") || strings.Contains(bad, "bad-exit=0") {
		t.Errorf("a go.sum that does not match the module did not stop the build:\n%s", bad)
	}
	if good := res["call_0_4"]; !strings.Contains(good, "hello from dep") {
		t.Errorf("go build with the dependency from the person's module cache failed confined:\n%s", good)
	}
	if _, err := os.Stat(filepath.Join(private, "go-mod", "example.test", "dep@v1.0.0", "dep.go")); err != nil {
		t.Errorf("the module was not extracted into the private module cache: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(e.repo, "job-gocache.txt")); err != nil || strings.TrimSpace(string(b)) != filepath.Join(private, "go-build") {
		t.Errorf("a background job's GOCACHE = %q (%v), want the private one", b, err)
	}
	if entries, _ := os.ReadDir(personGoCache); len(entries) > 0 {
		t.Errorf("the person's GOCACHE was written: %d entries", len(entries))
	}
}

// With the sandbox off, commands run as the person set them up, their
// caches included: nothing is redirected.
func TestE2ESandboxOffKeepsThePersonsCaches(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{bashCall(`echo "gocache=$GOCACHE xdg=$XDG_CACHE_HOME npm=$npm_config_cache"`)}},
		scripted.Turn{Text: "done"},
	)
	e.writeUserConfig("[sandbox]\nbash = \"off\"\n")
	e.env = append(e.env, "GOCACHE=/person/gocache", "XDG_CACHE_HOME=/person/xdg", "npm_config_cache=/person/npm")
	e.lastMessages("run", "--yolo", "build")
	res := toolResults(t, e.srv.Requests()[1])["call_0_0"]
	if !strings.Contains(res, "gocache=/person/gocache xdg=/person/xdg npm=/person/npm") {
		t.Errorf("an unconfined command did not keep the person's caches:\n%s", res)
	}
}

// fakeModule puts example.test/dep v1.0.0 into the download cache of the
// module cache modCache, as `go mod download` leaves it, and returns the
// go.sum hashes of its zip and its go.mod.
func fakeModule(t *testing.T, modCache string) (zipSum, modSum string) {
	t.Helper()
	dir := filepath.Join(modCache, "cache", "download", "example.test", "dep", "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	goMod := "module example.test/dep\n\ngo 1.22\n"
	files := map[string]string{
		"example.test/dep@v1.0.0/go.mod": goMod,
		"example.test/dep@v1.0.0/dep.go": "package dep\n\nfunc Hello() string { return \"hello from dep\" }\n",
	}
	f, err := os.Create(filepath.Join(dir, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"list":        "v1.0.0\n",
		"v1.0.0.info": `{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}`,
		"v1.0.0.mod":  goMod,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return hash1(files), hash1(map[string]string{"go.mod": goMod})
}

// hash1 is go.sum's "h1:" hash of files (name to content): the SHA-256
// of the lines "<SHA-256 of the content, hex>  <name>\n", names sorted,
// in base64.
func hash1(files map[string]string) string {
	h := sha256.New()
	for _, n := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%x  %s\n", sha256.Sum256([]byte(files[n])), n)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}
