package checkpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/reasonix/reasonix/internal/gitignore"
	"github.com/reasonix/reasonix/internal/nofollow"
)

// RestoreReport is the result of Restore and Preview. Its lists hold
// workspace-relative slash paths, sorted.
type RestoreReport struct {
	ID string // the checkpoint restored
	// Undo is the checkpoint Restore took of the workspace just before
	// changing it (its Info.Restores is ID); restoring it reverts this
	// restore. Preview leaves it empty.
	Undo     string
	Restored []string // files that existed and were rewritten: content, mode or file type
	Created  []string // files that were missing and were re-created
	Removed  []string // files that did not exist at the checkpoint, removed
	// Kept lists files left alone although they differ from the
	// checkpoint: files the checkpoint holds that are ignored or skipped now
	// (the undo checkpoint could not save them, so they are not
	// overwritten), and files that are new since but were ignored or
	// skipped by the checkpoint (it does not know they existed then).
	Kept []string
}

// Restore brings the workspace back to checkpoint id (an id or a unique
// prefix): files it holds are rewritten where they differ, with their
// mode, or re-created; files created since are removed, and directories
// left empty by that; ignored and skipped files are never touched. First
// it checkpoints the workspace as it is, labelled l (with a Note saying
// what it precedes unless l has one), and returns that checkpoint's id in
// the report's Undo.
//
// A failure on one file does not stop the others: the report says what was
// done, and the error names every file that could not be restored.
func (s *Store) Restore(ctx context.Context, id string, l Labels) (*RestoreReport, error) {
	return s.restore(ctx, id, &l)
}

// Preview reports what Restore would do, changing nothing in the
// workspace; it does read the workspace and may store new content, as a
// checkpoint does.
func (s *Store) Preview(ctx context.Context, id string) (*RestoreReport, error) {
	return s.restore(ctx, id, nil)
}

// action is one file to write.
type action struct {
	f         File
	chmodOnly bool
	created   bool
}

func (s *Store) restore(ctx context.Context, id string, l *Labels) (*RestoreReport, error) {
	// A restore excludes other writers: no checkpoint of a half-restored
	// workspace, and no two restores interleaved.
	unlock, err := s.lock(l != nil)
	if err != nil {
		return nil, err
	}
	defer unlock()
	target, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	cur, _, p, err := s.scan(ctx)
	if err != nil {
		return nil, err
	}
	rep := &RestoreReport{ID: target.ID}
	if l != nil {
		if l.Note == "" {
			l.Note = "before restoring " + target.ID
		}
		if err := s.commit(cur, *l, target.ID, p); err != nil {
			return nil, err
		}
		rep.Undo = cur.ID
	} else if err := s.settle(p, "", nil); err != nil {
		return nil, err
	}
	writes, removes, err := s.plan(target, cur, rep)
	if err != nil {
		return nil, err
	}
	// Refuse before touching anything when content is missing.
	var missing []string
	for _, a := range writes {
		if !a.chmodOnly && !a.f.IsLink() && !s.hasBlob(a.f.Hash) {
			missing = append(missing, a.f.Path)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("checkpoint %s cannot be restored: the store lacks the content of %d files (%s)", target.ID, len(missing), strings.Join(missing[:min(len(missing), 5)], ", "))
	}
	if l == nil {
		for _, a := range writes {
			if a.created {
				rep.Created = append(rep.Created, a.f.Path)
			} else {
				rep.Restored = append(rep.Restored, a.f.Path)
			}
		}
		rep.Removed = removes
		sortReport(rep)
		return rep, nil
	}
	errs := s.apply(ctx, target, writes, removes, rep)
	sortReport(rep)
	if len(errs) > 0 {
		return rep, fmt.Errorf("checkpoint: restore %s: %w", target.ID, errors.Join(errs...))
	}
	return rep, nil
}

func sortReport(r *RestoreReport) {
	for _, l := range [][]string{r.Restored, r.Created, r.Removed, r.Kept} {
		sort.Strings(l)
	}
}

// plan compares the checkpoint with the workspace's current state and
// returns the files to write and to remove; Kept goes straight to rep.
func (s *Store) plan(target, cur *Manifest, rep *RestoreReport) (writes []action, removes []string, err error) {
	now := make(map[string]File, len(cur.Files))
	for _, f := range cur.Files {
		now[f.Path] = f
	}
	then := make(map[string]bool, len(target.Files))
	for _, f := range target.Files {
		then[f.Path] = true
		c, ok := now[f.Path]
		switch {
		case ok && c.Link == f.Link && c.Hash == f.Hash && (f.IsLink() || c.Mode == f.Mode):
			// unchanged
		case ok:
			writes = append(writes, action{f: f, chmodOnly: !f.IsLink() && !c.IsLink() && c.Hash == f.Hash})
		default:
			fi, err := os.Lstat(s.abs(f.Path))
			switch {
			case err != nil:
				writes = append(writes, action{f: f, created: true})
			case fi.IsDir():
				// A directory now: its files are removed first, and the
				// write fails if anything ignored is left in it.
				writes = append(writes, action{f: f})
			default:
				rep.Kept = append(rep.Kept, f.Path) // ignored or skipped now
			}
		}
	}
	ignoredThen, err := s.rulesOf(target)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cur.Files {
		if then[c.Path] {
			continue
		}
		if skippedIn(target, c.Path) || ignoredThen(c.Path) {
			rep.Kept = append(rep.Kept, c.Path)
			continue
		}
		removes = append(removes, c.Path)
	}
	return writes, removes, nil
}

// skippedIn reports whether m skipped rel or a directory above it.
func skippedIn(m *Manifest, rel string) bool {
	i := sort.Search(len(m.Skipped), func(i int) bool { return m.Skipped[i].Path >= rel })
	if i < len(m.Skipped) && m.Skipped[i].Path == rel {
		return true
	}
	for _, sk := range m.Skipped {
		if sk.Dir && strings.HasPrefix(rel, sk.Path+"/") {
			return true
		}
	}
	return false
}

// rulesOf returns a test for paths ignored under m's own .gitignore files
// (read from the store) together with the rules from outside the
// workspace as they are now.
func (s *Store) rulesOf(m *Manifest) (func(rel string) bool, error) {
	byDir := map[string][]gitignore.Pattern{}
	for _, f := range m.Files {
		if path.Base(f.Path) != ".gitignore" || f.IsLink() {
			continue
		}
		var b bytes.Buffer
		if err := s.copyBlob(f.Hash, &b); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %s: %w", m.ID, f.Path, err)
		}
		dir := path.Dir(f.Path)
		if dir == "." {
			dir = ""
		}
		byDir[dir] = gitignore.Parse(b.Bytes())
	}
	root := s.rootRules().Add("", byDir[""])
	return func(rel string) bool {
		ign := root
		parts := strings.Split(rel, "/")
		for i := range len(parts) - 1 {
			d := strings.Join(parts[:i+1], "/")
			if ign.Ignored(d, true) {
				return true // nothing below an ignored directory is seen
			}
			ign = ign.Add(d, byDir[d])
		}
		return ign.Ignored(rel, false)
	}, nil
}

func (s *Store) abs(rel string) string {
	return filepath.Join(s.workspace, filepath.FromSlash(rel))
}

// apply carries out a plan: removals first (so a file can take the place
// of a directory and back), then empty directories, then writes.
func (s *Store) apply(ctx context.Context, target *Manifest, writes []action, removes []string, rep *RestoreReport) []error {
	var errs []error
	fail := func(rel string, err error) { errs = append(errs, fmt.Errorf("%s: %w", rel, err)) }
	// Directories the checkpoint needs; the others that removals empty go.
	needed := map[string]bool{}
	for _, f := range target.Files {
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			needed[d] = true
		}
	}
	for _, d := range target.Dirs {
		for ; d != "."; d = path.Dir(d) {
			needed[d] = true
		}
	}
	emptied := map[string]bool{}
	for _, rel := range removes {
		if err := ctx.Err(); err != nil {
			return append(errs, err)
		}
		if err := removeFile(s.abs(rel)); err != nil {
			fail(rel, err)
			continue
		}
		rep.Removed = append(rep.Removed, rel)
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			emptied[d] = true
		}
	}
	var dirs []string
	for d := range emptied {
		if !needed[d] {
			dirs = append(dirs, d)
		}
	}
	// Deepest first; a directory still holding something stays.
	sort.Slice(dirs, func(i, j int) bool { return dirs[i] > dirs[j] })
	for _, d := range dirs {
		os.Remove(s.abs(d))
	}
	safe := map[string]bool{} // directories checked to be real ones
	for _, d := range target.Dirs {
		if err := s.checkParents(d+"/x", safe); err != nil {
			fail(d, err)
			continue
		}
		dir, err := nofollow.OpenDir(s.abs(d), true)
		if err != nil {
			fail(d, err)
			continue
		}
		dir.Close()
	}
	for _, a := range writes {
		if err := ctx.Err(); err != nil {
			return append(errs, err)
		}
		if err := s.write(a, safe); err != nil {
			fail(a.f.Path, err)
			continue
		}
		if a.created {
			rep.Created = append(rep.Created, a.f.Path)
		} else {
			rep.Restored = append(rep.Restored, a.f.Path)
		}
	}
	return errs
}

// checkParents makes sure no directory above rel is a symlink or a file, so
// a restore never writes outside the workspace.
func (s *Store) checkParents(rel string, safe map[string]bool) error {
	var dirs []string
	for d := path.Dir(rel); d != "." && !safe[d]; d = path.Dir(d) {
		dirs = append(dirs, d)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		fi, err := os.Lstat(s.abs(d))
		if errors.Is(err, fs.ErrNotExist) {
			return nil // created below, by us
		}
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symlink now; not writing through it", d)
		case !fi.IsDir():
			return fmt.Errorf("%s is in the way (a file, ignored or skipped now)", d)
		}
		safe[d] = true
	}
	return nil
}

// write puts one file of the checkpoint in place through a temporary file
// and a rename. Reasonix runs outside the sandbox, and a command it left
// running may swap a folder checkParents looked at for a symlink: the
// folder is opened without following a symlink on its path and both
// files are named relative to it (internal/nofollow), so no swap sends
// the write outside the workspace.
func (s *Store) write(a action, safe map[string]bool) error {
	f := a.f
	if err := s.checkParents(f.Path, safe); err != nil {
		return err
	}
	abs := s.abs(f.Path)
	dir, err := nofollow.OpenDir(filepath.Dir(abs), true)
	if err != nil {
		return err
	}
	defer dir.Close()
	base := filepath.Base(abs)
	if a.chmodOnly {
		cur, err := nofollow.Open(abs, nofollow.ReadFlags, 0)
		if err != nil {
			return err
		}
		defer cur.Close()
		return cur.Chmod(f.Mode)
	}
	var tmp string
	if f.IsLink() {
		var b [6]byte
		rand.Read(b[:])
		tmp = ".reasonix-restore-" + hex.EncodeToString(b[:])
		if err := nofollow.SymlinkIn(f.Link, dir, tmp); err != nil {
			return err
		}
	} else {
		out, name, err := nofollow.CreateTempIn(dir, ".reasonix-restore-")
		if err != nil {
			return err
		}
		tmp = name
		err = s.copyBlob(f.Hash, out)
		if err == nil {
			err = out.Chmod(f.Mode)
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = nofollow.RemoveIn(dir, tmp)
			return err
		}
	}
	err = nofollow.RenameIn(dir, tmp, dir, base)
	if err != nil {
		if fi, serr := os.Lstat(abs); serr == nil && fi.IsDir() {
			err = errors.New("a directory is in the way (it holds ignored or skipped files)")
		} else if makeWritable(abs) {
			err = nofollow.RenameIn(dir, tmp, dir, base)
		}
	}
	if err != nil {
		_ = nofollow.RemoveIn(dir, tmp)
	}
	return err
}

// removeFile removes a file or symlink, making a read-only file writable
// first where the platform needs that.
func removeFile(abs string) error {
	err := nofollow.Remove(abs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && makeWritable(abs) {
		err = nofollow.Remove(abs)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// makeWritable clears the read-only attribute of a regular file on Windows,
// which refuses to replace or remove such files; it reports whether it did.
// Elsewhere the directory's permissions decide, and it does nothing.
func makeWritable(abs string) bool {
	if runtime.GOOS != "windows" {
		return false
	}
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o200 != 0 {
		return false
	}
	return os.Chmod(abs, 0o666) == nil
}
