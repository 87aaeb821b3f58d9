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
	"slices"
	"strings"

	"github.com/reasonix/reasonix/internal/lazy"
	"github.com/reasonix/reasonix/internal/lookpath"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/tools"
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
	// bin is the git program: never one found on PATH inside the
	// workspace or the repository, where a confined command may have
	// written one (internal/lookpath).
	bin   string
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
	// heads name each job's worktree HEAD as a ref any worktree of the
	// repository reads ("worktrees/<its id in git>/HEAD"): the step's
	// commit, merged by that name, so a step needs no branch.
	heads map[string]string
	// environ is the environment every git process gets (os.Environ
	// form): Reasonix's own, less the run's secrets. The repository's
	// configuration can name programs git runs (filters, diff and merge
	// drivers, core.sshCommand, credential helpers), and those must not
	// see the provider keys.
	environ []string
}

// gitEnv makes git's output stable and its commits independent of the
// user's identity and hooks.
var gitEnv = []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_AUTHOR_NAME=Reasonix", "GIT_AUTHOR_EMAIL=reasonix@localhost",
	"GIT_COMMITTER_NAME=Reasonix", "GIT_COMMITTER_EMAIL=reasonix@localhost"}

// git runs git in dir and returns its standard output.
func (g *gitTree) git(ctx context.Context, dir string, stdin []byte, args ...string) (string, error) {
	return g.gitEnv(ctx, dir, nil, stdin, args...)
}

// gitEnv is git with more environment variables.
func (g *gitTree) gitEnv(ctx context.Context, dir string, env []string, stdin []byte, args ...string) (string, error) {
	// No hooks, no file-system monitor program, no signing, and no
	// automatic maintenance: commit and merge would otherwise start `git
	// maintenance run --auto` (gc --auto before git 2.29) as one more
	// process each time.
	full := append([]string{"-C", dir, "-c", "core.hooksPath=" + os.DevNull, "-c", "core.fsmonitor=false", "-c", "commit.gpgsign=false",
		"-c", "maintenance.auto=false", "-c", "gc.auto=0"}, args...)
	cmd := exec.CommandContext(ctx, g.bin, full...)
	cmd.Env = append(append(slices.Clip(g.environ), gitEnv...), env...)
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

var unsafeRef = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) }}

// refName turns a step id into a safe branch and directory name.
func refName(id string) string {
	s := strings.Trim(unsafeRef.Get().ReplaceAllString(id, "-"), ".-")
	if s == "" {
		s = "step"
	}
	return s
}

// openGitTree prepares the git side of a run in workspace, or returns
// nil and the reason when the workspace cannot use worktrees (not a
// repository, no commit yet, no git binary). Git runs without the
// variables and values secrets withholds.
func openGitTree(ctx context.Context, workspace, home, run string, secrets *tools.Secrets) (*gitTree, string, error) {
	bin, err := lookpath.Outside("git", workspace)
	if err != nil {
		return nil, "git is not installed outside the workspace", nil
	}
	g := &gitTree{bin: bin, environ: secrets.Environ(os.Environ())}
	// One process for the top level, HEAD and HEAD's tree; only when it
	// fails is git asked again, to say why.
	out, err := g.git(ctx, workspace, nil, "rev-parse", "--show-toplevel", "HEAD", "HEAD^{tree}")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if err != nil || len(lines) != 3 {
		if _, err := g.git(ctx, workspace, nil, "rev-parse", "--show-toplevel"); err != nil {
			return nil, "the workspace is not in a git repository", nil
		}
		return nil, "the repository has no commit yet", nil
	}
	top, head, headTree := lines[0], lines[1], lines[2]
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
	if sub != "" {
		// The repository holds more than the workspace: its other
		// folders are no place for git either.
		if g.bin, err = lookpath.Outside("git", top, ws); err != nil {
			return nil, "git is not installed outside the repository", nil
		}
	}
	g.top, g.sub, g.dir, g.run = top, sub, filepath.Join(home, "worktrees", refName(run)), "reasonix/"+refName(run)
	g.cleanup(ctx)
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("worktrees: %w", err)
	}
	base, err := g.workspaceCommit(ctx, head, headTree, filepath.Join(g.dir, "base.index"))
	if err != nil {
		return nil, "", err
	}
	g.merge = filepath.Join(g.dir, "_merge")
	// -f: a folder of this path deleted by a crash before git's record
	// of it was pruned does not block the run (-b still refuses a branch
	// that exists).
	if _, err := g.git(ctx, top, nil, "worktree", "add", "-q", "-f", "-b", g.run+"/merged", g.merge, base); err != nil {
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
// and branches are not touched. head is HEAD's commit and headTree its
// tree; it returns head when nothing differs.
func (g *gitTree) workspaceCommit(ctx context.Context, head, headTree, index string) (string, error) {
	defer os.Remove(index)
	top := g.top
	git := func(stdin []byte, args ...string) (string, error) {
		return g.gitEnv(ctx, top, []string{"GIT_INDEX_FILE=" + index}, stdin, args...)
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
	if tree == headTree {
		return head, nil
	}
	c, err := git(nil, "commit-tree", tree, "-p", head, "-m", "reasonix: the workspace as the plan started")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(c), nil
}

// cleanup removes what an earlier run of the same id left (a crash, a
// kill): its worktrees and its branches. When there is neither it runs
// one git process (the list of branches).
func (g *gitTree) cleanup(ctx context.Context) {
	g.removeExcept(ctx, nil)
}

// removeExcept deletes the run's worktree folders, prunes git's record
// of them, and deletes the run's branches but those in keep. A worktree
// is its folder plus git's record of it (pruned once the folder is
// gone), so deleting the folder is what `git worktree remove` does.
func (g *gitTree) removeExcept(ctx context.Context, keep []string) {
	_, err := os.Lstat(g.dir)
	folders := err == nil
	refs, _ := g.git(ctx, g.top, nil, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+g.run+"/")
	var drop []string
	for _, r := range strings.Fields(refs) {
		kept := false
		for _, k := range keep {
			kept = kept || k == r
		}
		if !kept {
			drop = append(drop, r)
		}
	}
	if folders {
		_ = os.RemoveAll(g.dir)
	}
	if folders || len(refs) > 0 {
		// Before the branches: git will not delete a branch a worktree
		// it still records has checked out.
		_, _ = g.git(ctx, g.top, nil, "worktree", "prune")
	}
	if len(drop) > 0 {
		_, _ = g.git(ctx, g.top, nil, append([]string{"branch", "-D"}, drop...)...)
	}
}

// root is the directory a worker of worktree wt works in: the workspace's
// place inside it.
func (g *gitTree) root(wt string) string { return filepath.Join(wt, g.sub) }

// branch is the name job id's branch gets when it is kept for a person.
func (g *gitTree) branch(id string) string { return g.run + "/" + refName(id) }

// ref names job id's commit (its worktree's HEAD).
func (g *gitTree) ref(id string) string { return g.heads[id] }

// add creates the worktree of job id, detached at the integration head
// (a branch would cost git two more processes to make and one to
// delete), and returns it and its start commit.
func (g *gitTree) add(ctx context.Context, id string) (wt, start string, err error) {
	// Job ids are unique within a run, and openGitTree removed what an
	// earlier run of the plan left.
	start = g.at
	wt = filepath.Join(g.dir, refName(id))
	if _, err := g.git(ctx, g.top, nil, "worktree", "add", "-q", "--detach", wt, start); err != nil {
		return "", "", err
	}
	// git names the worktree after its folder unless that name is taken
	// (by a worktree whose folder is gone and not yet pruned): its .git
	// file says which name it got.
	b, err := os.ReadFile(filepath.Join(wt, ".git"))
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if err != nil || !ok {
		return "", "", fmt.Errorf("worktree %s: no gitdir in its .git file (%v)", wt, err)
	}
	if g.heads == nil {
		g.heads = map[string]string{}
	}
	g.heads[id] = "worktrees/" + filepath.Base(dir) + "/HEAD"
	return wt, start, nil
}

// commit records everything the worker changed in wt on its branch: a
// commit even when nothing changed (an empty one), so no process is spent
// asking first, and it concludes a resolved merge.
func (g *gitTree) commit(ctx context.Context, wt, msg string) error {
	if _, err := g.git(ctx, wt, nil, "add", "-A"); err != nil {
		return err
	}
	_, err := g.git(ctx, wt, nil, "commit", "-q", "--no-verify", "--allow-empty", "-m", msg)
	return err
}

// diffArgs make a diff git can apply and this file can parse whatever the
// person's configuration says (colour, prefixes, external diff tools),
// with each changed path listed first (--raw -z) and renames as a
// deletion and an addition (one path per record).
var diffArgs = []string{"--no-color", "--no-ext-diff", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/", "--raw", "-z", "-p"}

// changes is what a step changed: the files (workspace-relative) and the
// diff, clipped, binary files named but not spelled out.
type changes struct {
	files []string
	diff  string
}

// errConflict is a merge that git could not do on its own.
type errConflict struct{ files []string }

func (e *errConflict) Error() string {
	return "merge conflict in " + strings.Join(e.files, ", ")
}

// land merges job id's branch into the integration worktree and applies
// what the merge changed to the workspace. A conflict is returned as
// *errConflict with the integration worktree left clean. When start is
// set (the commit the step's worktree started from) it also returns what
// the step changed since start, conflict or not: from the merge's own
// diff when nothing landed since the step started (it is then the same
// diff), else from one more diff.
func (g *gitTree) land(ctx context.Context, id, title, start string) (changes, error) {
	before := g.at
	if _, err := g.git(ctx, g.merge, nil, "merge", "-q", "--no-ff", "--no-edit", "-m", "merge "+id+": "+title, g.ref(id)); err != nil {
		out, _ := g.git(ctx, g.merge, nil, "diff", "--name-only", "--diff-filter=U")
		_, _ = g.git(ctx, g.merge, nil, "merge", "--abort")
		if files := strings.Fields(out); len(files) > 0 {
			ch, derr := g.stepChanges(ctx, id, start)
			if derr != nil {
				return changes{}, derr
			}
			return ch, &errConflict{files: files}
		}
		return changes{}, err
	}
	// The new head and what the merge changed (against its first parent,
	// the head before), binary files included, in one process.
	out, err := g.git(ctx, g.merge, nil, append([]string{"log", "-1", "-m", "--first-parent", "--no-show-signature",
		"--format=%H", "--binary"}, append(diffArgs, "HEAD")...)...)
	if err != nil {
		return changes{}, err
	}
	after, rest, ok := strings.Cut(out, "\x00")
	after = strings.TrimSpace(after)
	if !ok || after == "" {
		return changes{}, fmt.Errorf("git log of the merge of %s: unexpected output %q", id, text.Clip(out, 200))
	}
	g.at = after
	names, patch := splitRaw(strings.TrimLeft(rest, "\n"))
	var ch changes
	switch {
	case start == "":
	case start == before:
		ch = g.changesOf(names, patch)
	default:
		if ch, err = g.stepChanges(ctx, id, start); err != nil {
			return changes{}, err
		}
	}
	if strings.TrimSpace(patch) == "" {
		return ch, nil
	}
	if _, err := g.git(ctx, g.top, []byte(patch), "apply", "--whitespace=nowarn", "-"); err != nil {
		g.keepMerged()
		return ch, fmt.Errorf("apply step %s to the workspace (was it edited meanwhile?): %w", id, err)
	}
	return ch, nil
}

// stepChanges is what job id's commit changed since start ("": nothing
// asked).
func (g *gitTree) stepChanges(ctx context.Context, id, start string) (changes, error) {
	if start == "" {
		return changes{}, nil
	}
	out, err := g.git(ctx, g.top, nil, append([]string{"diff"}, append(diffArgs, start, g.ref(id))...)...)
	if err != nil {
		return changes{}, err
	}
	return g.changesOf(splitRaw(out)), nil
}

// splitRaw splits `--raw -z -p` output into the changed paths and the
// patch. Each raw record is ":modes ids status" NUL path NUL; a NUL ends
// the list when a patch follows.
func splitRaw(out string) (names []string, patch string) {
	for strings.HasPrefix(out, ":") {
		_, rest, ok := strings.Cut(out, "\x00")
		if !ok {
			break
		}
		name, rest, _ := strings.Cut(rest, "\x00")
		names = append(names, name)
		out = rest
	}
	return names, strings.TrimPrefix(out, "\x00")
}

// changesOf makes names workspace-relative and the patch a step's diff
// for a brief: binary files named, not spelled out, and the whole
// clipped.
func (g *gitTree) changesOf(names []string, patch string) changes {
	var ch changes
	for _, n := range names {
		if g.sub != "" {
			rel, err := filepath.Rel(g.sub, filepath.FromSlash(n))
			if err == nil && !strings.HasPrefix(rel, "..") {
				n = filepath.ToSlash(rel)
			}
		}
		ch.files = append(ch.files, n)
	}
	ch.diff = textDiff(patch, diffLimit)
	if len(ch.diff) > diffLimit {
		ch.diff = ch.diff[:diffLimit] + "\n[diff clipped]\n"
	}
	return ch
}

// textDiff replaces each file's binary patch in a `--binary` diff with the
// line plain git diff prints for it; it stops copying past limit bytes
// (the caller clips there).
func textDiff(patch string, limit int) string {
	if !strings.Contains(patch, "\nGIT binary patch\n") {
		return patch
	}
	var b strings.Builder
	for len(patch) > 0 && b.Len() <= limit {
		// One file's part: up to the next "diff --git" line.
		part := patch
		if i := strings.Index(patch[1:], "\ndiff --git "); i >= 0 {
			part = patch[:i+2]
		}
		patch = patch[len(part):]
		if i := strings.Index(part, "\nGIT binary patch\n"); i >= 0 {
			b.WriteString(part[:i+1])
			b.WriteString("Binary files differ\n")
			continue
		}
		b.WriteString(part)
	}
	return b.String()
}

// startResolve makes the worktree for resolving id's conflict: the
// integration head with id's branch merged in, conflict markers left in
// the files for the worker.
func (g *gitTree) startResolve(ctx context.Context, id, rid string) (wt, start string, err error) {
	if wt, start, err = g.add(ctx, rid); err != nil {
		return "", "", err
	}
	if _, err := g.git(ctx, wt, nil, "merge", "--no-ff", "--no-commit", g.ref(id)); err == nil {
		return wt, start, nil // merged cleanly after all
	}
	if _, err := g.git(ctx, wt, nil, "rev-parse", "-q", "--verify", "MERGE_HEAD"); err != nil {
		return "", "", fmt.Errorf("prepare the resolution of %s: the merge did not start", id)
	}
	return wt, start, nil
}

var conflictMarker = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(<<<<<<<|>>>>>>>)( |$)`) }}

// unresolved lists files of wt that still hold conflict markers.
func unresolved(wt string, files []string) []string {
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(wt, filepath.FromSlash(f)))
		if err == nil && conflictMarker.Get().Match(b) {
			out = append(out, f)
		}
	}
	return out
}

// drop removes job id's worktree folder; git's record of it is pruned
// when the run closes.
func (g *gitTree) drop(id string) {
	_ = os.RemoveAll(filepath.Join(g.dir, refName(id)))
}

// keepStep leaves job id's commit for a person as its branch, and
// returns the branch's name.
func (g *gitTree) keepStep(ctx context.Context, id string) (string, error) {
	br := g.branch(id)
	if _, err := g.git(ctx, g.top, nil, "branch", "-f", br, g.ref(id)); err != nil {
		return br, err
	}
	g.keep(br)
	return br, nil
}

// keepMerged leaves the merged work so far for a person.
func (g *gitTree) keepMerged() { g.keep(g.run + "/merged") }

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
// kept; kept branches stay with their worktrees pruned. The run made one
// branch of its own (merged) and the kept ones, so it need not list
// them.
func (g *gitTree) close(ctx context.Context) {
	// Cleaning up must happen after Ctrl-C too.
	ctx = context.WithoutCancel(ctx)
	_ = os.RemoveAll(g.dir)
	_, _ = g.git(ctx, g.top, nil, "worktree", "prune")
	if merged := g.run + "/merged"; !slices.Contains(g.kept, merged) {
		_, _ = g.git(ctx, g.top, nil, "branch", "-D", merged)
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
