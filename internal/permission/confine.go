package permission

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Confiner keeps file tools inside the workspace, the configured extra
// directories and Reasonix's home. It implements tools.PathGuard.
type Confiner struct {
	workspace  string
	allowWrite []string
	home       string

	// reads are the read-only roots; they grow when a skill outside the
	// workspace is loaded (AllowRead), and confiners made by
	// WithWorkspace share them.
	reads *readRoots
	// denyRead returns the sandbox's read deny list and its exceptions
	// (see DenyReadPaths), symlinks resolved; file tools refuse the same.
	// nil when there is none.
	denyRead func() (deny, except []string)
}

// DenyRead makes the confiner refuse paths in deny (less except), for
// reading and writing, as the bash sandbox does. The paths' symlinks are
// resolved when the first path is checked, before any tool touches the
// disk: resolving walks every component of each path, work the first
// request does not wait for.
func (c *Confiner) DenyRead(deny, except []string) {
	res := func(in []string) []string {
		var out []string
		known := map[string]bool{}
		for _, p := range in {
			out = append(out, filepath.Clean(p))
			if r, err := realPathKnown(p, known); err == nil && r != filepath.Clean(p) {
				out = append(out, r)
			}
		}
		return out
	}
	deny, except = slices.Clone(deny), slices.Clone(except)
	c.denyRead = sync.OnceValues(func() ([]string, []string) { return res(deny), res(except) })
}

// readRoots is a list of roots safe for concurrent use.
type readRoots struct {
	mu    sync.RWMutex
	roots []string
}

// maxSymlinks bounds symlink chains, as the kernel does (ELOOP).
const maxSymlinks = 40

// NewConfiner resolves the roots once. workspace must exist; allowRead,
// allowWrite and home may name directories that do not exist yet; home may
// be empty.
func NewConfiner(workspace string, allowRead, allowWrite []string, home string) (*Confiner, error) {
	if workspace == "" {
		return nil, errors.New("confiner: workspace root is empty")
	}
	ws, err := resolveRoot(workspace)
	if err != nil {
		return nil, fmt.Errorf("confiner: workspace root: %w", err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("confiner: workspace root %s is not a directory", workspace)
	}
	c := &Confiner{workspace: ws, reads: &readRoots{}}
	for _, r := range allowRead {
		p, err := resolveRoot(r)
		if err != nil {
			return nil, fmt.Errorf("confiner: [sandbox] allow_read %q: %w", r, err)
		}
		c.reads.roots = append(c.reads.roots, p)
	}
	for _, r := range allowWrite {
		p, err := resolveRoot(r)
		if err != nil {
			return nil, fmt.Errorf("confiner: [sandbox] allow_write %q: %w", r, err)
		}
		c.allowWrite = append(c.allowWrite, p)
	}
	if home != "" {
		if c.home, err = resolveRoot(home); err != nil {
			return nil, fmt.Errorf("confiner: Reasonix home: %w", err)
		}
	}
	return c, nil
}

// Workspace returns the resolved workspace root.
func (c *Confiner) Workspace() string { return c.workspace }

// ReadDenied reports whether the absolute path abs, or the file its
// symlinks lead to, lies on the read deny list (see DenyRead), wherever
// it is, and names the denied root. It is for readers outside the tools,
// such as the rules files' @imports.
func (c *Confiner) ReadDenied(abs string) (string, bool) {
	if c.denyRead == nil {
		return "", false
	}
	deny, except := c.denyRead()
	abs = filepath.Clean(abs)
	if d, ok := denied(abs, deny, except); ok {
		return d, true
	}
	if real, err := realPath(abs); err == nil && real != abs {
		return denied(real, deny, except)
	}
	return "", false
}

func resolveRoot(p string) (string, error) {
	if strings.HasPrefix(p, "~") {
		return "", fmt.Errorf("%q: ~ is not expanded; use an absolute path", p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	return realPath(abs)
}

// Resolve turns a path argument into an absolute, symlink-free path and
// refuses it unless it lies in an allowed root: the workspace, allow_write
// and home for writes, plus allow_read for reads.
func (c *Confiner) Resolve(p string, write bool) (string, error) {
	if p == "" {
		return "", errors.New("path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	if strings.HasPrefix(p, "~") {
		return "", fmt.Errorf("path %q starts with ~, which is not expanded: give a path relative to the workspace %s or an absolute path", p, c.workspace)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = c.workspace + string(filepath.Separator) + p
	}
	real, err := realPath(abs)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	var deny, except []string
	if c.denyRead != nil {
		deny, except = c.denyRead()
	}
	if d, ok := denied(real, deny, except); ok && !within(real, c.workspace) {
		return "", fmt.Errorf("path %q resolves to %s, inside %s, which [sandbox] deny_read keeps out of reach (credentials); it may not be read or written", p, real, d)
	}
	if c.allowed(real, write) {
		// A regular file with more than one name may be the same file as
		// one outside every allowed root (a hard link made before the
		// run, or where the sandbox is off): it counts as outside.
		if fi, err := os.Lstat(real); err == nil && fi.Mode().IsRegular() && linkCount(fi) > 1 {
			return "", fmt.Errorf("path %q is a hard link (%d names for one file), which may share its content with a file outside the workspace %s; it is treated as outside and refused (use bash, which the sandbox confines, or copy the file)", p, linkCount(fi), c.workspace)
		}
		return real, nil
	}
	via := ""
	if lex := filepath.Clean(abs); lex != real {
		via = " (following symlinks)"
		if c.allowed(lex, write) {
			via = " through a symlink"
		}
	}
	if write && c.readable(real) {
		return "", fmt.Errorf("path %q resolves to %s%s, which [sandbox] allow_read permits for reading only; writes are allowed in the workspace %s, [sandbox] allow_write and the Reasonix home", p, real, via, c.workspace)
	}
	allowed := "workspace, [sandbox] allow_read, [sandbox] allow_write, Reasonix home"
	if write {
		allowed = "workspace, [sandbox] allow_write, Reasonix home"
	}
	return "", fmt.Errorf("path %q resolves to %s%s, outside the workspace %s (allowed: %s)", p, real, via, c.workspace, allowed)
}

func (c *Confiner) allowed(p string, write bool) bool {
	if within(p, c.workspace) || within(p, c.home) || c.within(p, c.allowWrite) {
		return true
	}
	return !write && c.readable(p)
}

func (c *Confiner) readable(p string) bool {
	c.reads.mu.RLock()
	defer c.reads.mu.RUnlock()
	return c.within(p, c.reads.roots)
}

// AllowRead adds dir to the roots read tools may use for the rest of the
// run: a loaded skill's folder, so the files it bundles can be read even
// when the skill lives in the user's home. It implements tools.ReadRooter.
func (c *Confiner) AllowRead(dir string) error {
	p, err := resolveRoot(dir)
	if err != nil {
		return fmt.Errorf("confiner: read root %q: %w", dir, err)
	}
	c.reads.mu.Lock()
	defer c.reads.mu.Unlock()
	if !c.within(p, c.reads.roots) {
		c.reads.roots = append(c.reads.roots, p)
	}
	return nil
}

func (c *Confiner) within(p string, roots []string) bool {
	for _, r := range roots {
		if within(p, r) {
			return true
		}
	}
	return false
}

// within reports whether p is root or below it; both are clean and absolute.
func within(p, root string) bool {
	if root == "" {
		return false
	}
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// realPath resolves every symlink in an absolute path, like realpath(3),
// but tolerates a tail that does not exist yet (a file about to be
// created). ".." is applied after the symlink before it is resolved, as the
// kernel does, so link/.. means the parent of the link's target.
func realPath(abs string) (string, error) { return realPathKnown(abs, nil) }

// realPathKnown is realPath for one of several paths resolved together:
// known holds the plain directories (no symlink) that earlier paths went
// through, so a shared start (the home, the workspace) is looked at once
// and not once per path. nil looks at every component.
func realPathKnown(abs string, known map[string]bool) (string, error) {
	vol := filepath.VolumeName(abs)
	rest := abs[len(vol):]
	sep := string(filepath.Separator)
	resolved := vol + sep
	pending := splitPath(rest)
	hops := 0
	// plain: every component so far was an existing entry and no symlink,
	// so resolved is the path as written, and known applies.
	plain := true
	for len(pending) > 0 {
		comp := pending[0]
		pending = pending[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			plain = false
			continue
		}
		next := filepath.Join(resolved, comp)
		if plain && known[next] {
			resolved = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// Not there yet: the rest is created by the tool, and a
				// later ".." may climb back to existing (checked) parts.
				resolved = next
				plain = false
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			if plain && known != nil && fi.IsDir() {
				known[next] = true
			}
			continue
		}
		plain = false
		hops++
		if hops > maxSymlinks {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			resolved = v + sep
			target = target[len(v):]
		}
		pending = append(splitPath(target), pending...)
	}
	return filepath.Clean(resolved), nil
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator })
}

// WithWorkspace returns a confiner with the same extra roots and home
// whose workspace is root (a plan worker's worktree).
func (c *Confiner) WithWorkspace(root string) (*Confiner, error) {
	ws, err := resolveRoot(root)
	if err != nil {
		return nil, fmt.Errorf("confiner: workspace root: %w", err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("confiner: workspace root %s is not a directory", root)
	}
	n := *c
	n.workspace = ws
	return &n, nil
}
