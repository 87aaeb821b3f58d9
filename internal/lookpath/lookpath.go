// Package lookpath finds the programs Reasonix runs itself, outside the
// sandbox (git, ripgrep, secret-tool, the hooks' shell), on PATH.
//
// A person's PATH often names a folder inside the workspace: an
// activated virtual environment's .venv/bin, a direnv `PATH_add bin`, the
// home's ~/.local/bin when the workspace is the home. Confined commands
// may write there (`pip install` does), so a program found there is one a
// hostile model could have written; run by Reasonix it would run outside
// the sandbox. Outside leaves such folders out.
package lookpath

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Outside is exec.LookPath(name) leaving out each PATH folder inside one
// of roots (absolute; "" is skipped), and each program whose file, its
// symlinks followed, lies inside one. A name with a path separator is
// looked up as it is: whoever wrote it chose that file.
func Outside(name string, roots ...string) (string, error) {
	if strings.ContainsAny(name, `/\`) {
		return exec.LookPath(name)
	}
	var rs []string
	for _, r := range roots {
		if r == "" {
			continue
		}
		r = filepath.Clean(r)
		rs = append(rs, r)
		if real, err := filepath.EvalSymlinks(r); err == nil && real != r {
			rs = append(rs, real)
		}
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) || inside(filepath.Clean(dir), rs) {
			continue
		}
		p, err := exec.LookPath(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || inside(real, rs) {
			continue
		}
		return p, nil
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// inside reports whether p is one of roots or below one.
func inside(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
