package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Plan isolation modes (agent.plan_isolation).
const (
	// IsolationWorktree runs each plan worker in its own git worktree on
	// a temporary branch and merges finished steps back; outside a git
	// repository it falls back to IsolationFiles.
	IsolationWorktree = "worktree"
	// IsolationFiles runs every worker in the workspace but never runs
	// two steps whose declared files overlap at the same time.
	IsolationFiles = "files"
	// IsolationNone runs workers in the workspace bounded only by
	// depends_on.
	IsolationNone = "none"
)

// diffLimit bounds the diff a StepResult carries (and so the brief of a
// step that depends on it).
const diffLimit = 16 << 10

// gitTree is a plan run's git side: the repository, an integration
// worktree that finished steps merge into, and one worktree per running
// step, all under <home>/worktrees/<run>. Only the scheduler goroutine
// calls it, so git never races itself on the repository's locks.
type gitTree struct {
	top   string // the repository's top level (symlink-free)
	sub   string // the workspace relative to top ("" at the top)
	dir   string // <home>/worktrees/<run>
	run   string // branch namespace: reasonix/<run>/...
	merge string // the integration worktree
	// at is the integration worktree's head, kept so landing a step
	// needs no extra git process to ask.
	at string
	// kept are branches left for a person (an unresolved conflict).
	kept []string
}

// gitEnv makes git's output stable and its commits independent of the
// user's identity and hooks.
var gitEnv = []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_AUTHOR_NAME=Reasonix", "GIT_AUTHOR_EMAIL=reasonix@localhost",
	"GIT_COMMITTER_NAME=Reasonix", "GIT_COMMITTER_EMAIL=reasonix@localhost"}

// runGit runs git in dir and returns its standard output.
func runGit(ctx context.Context, dir string, stdin []byte, args ...string) (string, error) {
	return runGitEnv(ctx, dir, nil, stdin, args...)
}

// runGitEnv is runGit with more environment variables.
func runGitEnv(ctx context.Context, dir string, env []string, stdin []byte, args ...string) (string, error) {
	full := append([]string{"-C", dir, "-c", "core.hooksPath=" + os.DevNull, "-c", "commit.gpgsign=false"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(append(os.Environ(), gitEnv...), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return out.String(), fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, msg)
	}
	return out.String(), nil
}

var unsafeRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// refName turns a step id into a safe branch and directory name.
func refName(id string) string {
	s := strings.Trim(unsafeRef().ReplaceAllString(id, "-"), ".-")
	if s == "" {
		s = "step"
	}
	return s
}

// openGitTree prepares the git side of a run in workspace, or returns
// nil and the reason when the workspace cannot use worktrees (not a
// repository, no commit yet, no git binary).
func openGitTree(ctx context.Context, workspace, home, run string) (*gitTree, string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, "git is not installed", nil
	}
	top, err := runGit(ctx, workspace, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, "the workspace is not in a git repository", nil
	}
	top = strings.TrimSpace(top)
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	ws := workspace
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	sub, err := filepath.Rel(top, ws)
	if err != nil || strings.HasPrefix(sub, "..") {
		return nil, "the workspace is outside its repository's top level", nil
	}
	if sub == "." {
		sub = ""
	}
	if _, err := runGit(ctx, top, nil, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return nil, "the repository has no commit yet", nil
	}
	g := &gitTree{top: top, sub: sub, dir: filepath.Join(home, "worktrees", refName(run)), run: "reasonix/" + refName(run)}
	g.cleanup(ctx)
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("worktrees: %w", err)
	}
	base, err := workspaceCommit(ctx, top, filepath.Join(g.dir, "base.index"))
	if err != nil {
		return nil, "", err
	}
	g.merge = filepath.Join(g.dir, "_merge")
	if _, err := runGit(ctx, top, nil, "worktree", "add", "-q", "-b", g.run+"/merged", g.merge, base); err != nil {
		return nil, "", err
	}
	g.at = base
	return g, "", nil
}

// maxUntracked is the largest untracked file a plan's base carries;
// bigger ones (data, build output nobody ignored) stay out of git's
// object store, and workers do not see them.
const maxUntracked = 8 << 20

// workspaceCommit records the working tree as the person sees it (HEAD,
// uncommitted changes to tracked files, and untracked files that are
// not ignored, less Reasonix's own state folder) as a commit on top of HEAD, so every worker starts from
// it. It goes through its own index file: the person's index, stash
// and branches are not touched. It returns HEAD when nothing differs.
func workspaceCommit(ctx context.Context, top, index string) (string, error) {
	defer os.Remove(index)
	head, err := runGit(ctx, top, nil, "rev-parse", "HEAD")
	if err != nil {
		return "", err
	}
	head = strings.TrimSpace(head)
	git := func(stdin []byte, args ...string) (string, error) {
		return runGitEnv(ctx, top, []string{"GIT_INDEX_FILE=" + index}, stdin, args...)
	}
	if _, err := git(nil, "read-tree", "HEAD"); err != nil {
		return "", err
	}
	if _, err := git(nil, "add", "-u", "--", "."); err != nil {
		return "", err
	}
	others, err := git(nil, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return "", err
	}
	var add bytes.Buffer
	for _, f := range strings.Split(others, "\x00") {
		if f == "" || strings.HasPrefix(f, ".reasonix/") || strings.Contains(f, "/.reasonix/") {
			continue // Reasonix's own state: sessions, plans, checkpoints
		}
		if fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(f))); err != nil || fi.Size() > maxUntracked {
			continue
		}
		add.WriteString(f)
		add.WriteByte(0)
	}
	if add.Len() > 0 {
		if _, err := git(add.Bytes(), "add", "--pathspec-from-file=-", "--pathspec-file-nul", "--"); err != nil {
			return "", err
		}
	}
	tree, err := git(nil, "write-tree")
	if err != nil {
		return "", err
	}
	tree = strings.TrimSpace(tree)
	if headTree, err := runGit(ctx, top, nil, "rev-parse", "HEAD^{tree}"); err == nil && strings.TrimSpace(headTree) == tree {
		return head, nil
	}
	c, err := git(nil, "commit-tree", tree, "-p", head, "-m", "reasonix: the workspace as the plan started")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(c), nil
}

// cleanup removes what an earlier run of the same id left (a crash, a
// kill): its worktrees and its branches.
func (g *gitTree) cleanup(ctx context.Context) {
	if entries, err := os.ReadDir(g.dir); err == nil {
		for _, e := range entries {
			_, _ = runGit(ctx, g.top, nil, "worktree", "remove", "--force", filepath.Join(g.dir, e.Name()))
		}
	}
	_ = os.RemoveAll(g.dir)
	_, _ = runGit(ctx, g.top, nil, "worktree", "prune")
	refs, _ := runGit(ctx, g.top, nil, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+g.run+"/")
	for _, r := range strings.Fields(refs) {
		_, _ = runGit(ctx, g.top, nil, "branch", "-D", r)
	}
}

// root is the directory a worker of worktree wt works in: the workspace's
// place inside it.
func (g *gitTree) root(wt string) string { return filepath.Join(wt, g.sub) }

func (g *gitTree) branch(id string) string { return g.run + "/" + refName(id) }

// head reads the integration worktree's current commit.
func (g *gitTree) head(ctx context.Context) (string, error) {
	out, err := runGit(ctx, g.merge, nil, "rev-parse", "HEAD")
	if err == nil {
		g.at = strings.TrimSpace(out)
	}
	return g.at, err
}

// add creates the worktree of job id on a fresh branch at the
// integration head and returns it and its start commit.
func (g *gitTree) add(ctx context.Context, id string) (wt, start string, err error) {
	// Job ids are unique within a run, and openGitTree removed what an
	// earlier run of the plan left.
	start = g.at
	wt = filepath.Join(g.dir, refName(id))
	if _, err := runGit(ctx, g.top, nil, "worktree", "add", "-q", "-b", g.branch(id), wt, start); err != nil {
		return "", "", err
	}
	return wt, start, nil
}

// commit records everything the worker changed in wt on its branch and
// returns the changed files (workspace-relative) and the diff since start.
func (g *gitTree) commit(ctx context.Context, wt, start, msg string) ([]string, string, error) {
	if _, err := runGit(ctx, wt, nil, "add", "-A"); err != nil {
		return nil, "", err
	}
	_, staged := runGit(ctx, wt, nil, "diff", "--cached", "--quiet")
	merging := false
	if staged == nil {
		// Nothing staged may still be a resolved merge to conclude.
		_, err := runGit(ctx, wt, nil, "rev-parse", "-q", "--verify", "MERGE_HEAD")
		merging = err == nil
	}
	if staged != nil || merging {
		if _, err := runGit(ctx, wt, nil, "commit", "-q", "--no-verify", "-m", msg); err != nil {
			return nil, "", err
		}
	}
	names, err := runGit(ctx, wt, nil, "diff", "--name-only", start, "HEAD")
	if err != nil {
		return nil, "", err
	}
	var files []string
	for _, n := range strings.Split(strings.TrimSpace(names), "\n") {
		if n == "" {
			continue
		}
		if g.sub != "" {
			rel, err := filepath.Rel(g.sub, filepath.FromSlash(n))
			if err == nil && !strings.HasPrefix(rel, "..") {
				n = filepath.ToSlash(rel)
			}
		}
		files = append(files, n)
	}
	diff, err := runGit(ctx, wt, nil, "diff", start, "HEAD")
	if err != nil {
		return nil, "", err
	}
	if len(diff) > diffLimit {
		diff = diff[:diffLimit] + "\n[diff clipped]\n"
	}
	return files, diff, nil
}

// errConflict is a merge that git could not do on its own.
type errConflict struct{ files []string }

func (e *errConflict) Error() string {
	return "merge conflict in " + strings.Join(e.files, ", ")
}

// land merges job id's branch into the integration worktree and applies
// what the merge changed to the workspace. A conflict is returned as
// *errConflict with the integration worktree left clean.
func (g *gitTree) land(ctx context.Context, id, title string) error {
	before := g.at
	if _, err := runGit(ctx, g.merge, nil, "merge", "-q", "--no-ff", "--no-edit", "-m", "merge "+id+": "+title, g.branch(id)); err != nil {
		out, _ := runGit(ctx, g.merge, nil, "diff", "--name-only", "--diff-filter=U")
		_, _ = runGit(ctx, g.merge, nil, "merge", "--abort")
		if files := strings.Fields(out); len(files) > 0 {
			return &errConflict{files: files}
		}
		return err
	}
	after, err := g.head(ctx)
	if err != nil {
		return err
	}
	patch, err := runGit(ctx, g.merge, nil, "diff", "--binary", before, after)
	if err != nil {
		return err
	}
	if strings.TrimSpace(patch) == "" {
		return nil
	}
	if _, err := runGit(ctx, g.top, []byte(patch), "apply", "--whitespace=nowarn", "-"); err != nil {
		g.keep(g.run + "/merged")
		return fmt.Errorf("apply step %s to the workspace (was it edited meanwhile?): %w", id, err)
	}
	return nil
}

// startResolve makes the worktree for resolving id's conflict: the
// integration head with id's branch merged in, conflict markers left in
// the files for the worker.
func (g *gitTree) startResolve(ctx context.Context, id, rid string) (wt, start string, err error) {
	if wt, start, err = g.add(ctx, rid); err != nil {
		return "", "", err
	}
	if _, err := runGit(ctx, wt, nil, "merge", "--no-ff", "--no-commit", g.branch(id)); err == nil {
		return wt, start, nil // merged cleanly after all
	}
	if _, err := runGit(ctx, wt, nil, "rev-parse", "-q", "--verify", "MERGE_HEAD"); err != nil {
		return "", "", fmt.Errorf("prepare the resolution of %s: the merge did not start", id)
	}
	return wt, start, nil
}

var conflictMarker = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(<<<<<<<|>>>>>>>)( |$)`) })

// unresolved lists files of wt that still hold conflict markers.
func unresolved(wt string, files []string) []string {
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(wt, filepath.FromSlash(f)))
		if err == nil && conflictMarker().Match(b) {
			out = append(out, f)
		}
	}
	return out
}

// drop removes job id's worktree and branch.
func (g *gitTree) drop(ctx context.Context, id string) {
	_, _ = runGit(ctx, g.top, nil, "worktree", "remove", "--force", filepath.Join(g.dir, refName(id)))
	_, _ = runGit(ctx, g.top, nil, "branch", "-D", g.branch(id))
}

// keep records a branch left for a person.
func (g *gitTree) keep(branch string) {
	for _, b := range g.kept {
		if b == branch {
			return
		}
	}
	g.kept = append(g.kept, branch)
}

// close removes the run's worktrees, and its branches unless some were
// kept; kept branches stay with their worktrees pruned.
func (g *gitTree) close(ctx context.Context) {
	// Cleaning up must happen after Ctrl-C too.
	ctx = context.WithoutCancel(ctx)
	if len(g.kept) == 0 {
		g.cleanup(ctx)
		return
	}
	if entries, err := os.ReadDir(g.dir); err == nil {
		for _, e := range entries {
			_, _ = runGit(ctx, g.top, nil, "worktree", "remove", "--force", filepath.Join(g.dir, e.Name()))
		}
	}
	_ = os.RemoveAll(g.dir)
	_, _ = runGit(ctx, g.top, nil, "worktree", "prune")
	refs, _ := runGit(ctx, g.top, nil, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+g.run+"/")
	for _, r := range strings.Fields(refs) {
		kept := false
		for _, k := range g.kept {
			kept = kept || k == r
		}
		if !kept {
			_, _ = runGit(ctx, g.top, nil, "branch", "-D", r)
		}
	}
}

// isConflict reports whether err is a merge conflict and its files.
func isConflict(err error) ([]string, bool) {
	var c *errConflict
	if errors.As(err, &c) {
		return c.files, true
	}
	return nil, false
}
