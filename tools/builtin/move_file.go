package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/reasonix/reasonix/internal/nofollow"
	"github.com/reasonix/reasonix/tools"
)

// moveFileTool renames or moves a file or directory.
type moveFileTool struct{}

func (moveFileTool) Name() string   { return "move_file" }
func (moveFileTool) ReadOnly() bool { return false }
func (moveFileTool) Description() string {
	return "Move or rename a file or directory to a destination that does not exist yet; missing parent directories are created."
}

// Schema is moveFileSchema (schemas_gen.go), generated from moveArgs; see
// schema_test.go.
func (moveFileTool) Schema() json.RawMessage { return json.RawMessage(moveFileSchema) }

type moveArgs struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
}

type movePlan struct {
	src, dst         string
	srcShow, dstShow string
	isDir            bool
}

func (moveFileTool) plan(env *tools.Env, raw json.RawMessage) (movePlan, error) {
	var a moveArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return movePlan{}, err
	}
	if a.Source == "" || a.Destination == "" {
		return movePlan{}, errors.New("both \"source\" and \"destination\" are required")
	}
	src, err := resolveEntry(env, a.Source)
	if err != nil {
		return movePlan{}, err
	}
	dst, err := resolveEntry(env, a.Destination)
	if err != nil {
		return movePlan{}, err
	}
	m := movePlan{src: src, dst: dst, srcShow: displayPath(env, src), dstShow: displayPath(env, dst)}
	info, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return movePlan{}, fmt.Errorf("source not found: %s", m.srcShow)
	}
	if err != nil {
		return movePlan{}, fmt.Errorf("cannot access %s: %w", m.srcShow, err)
	}
	m.isDir = info.IsDir()
	if src == dst {
		return movePlan{}, fmt.Errorf("source and destination are the same path: %s", m.srcShow)
	}
	if _, err := os.Lstat(dst); err == nil {
		return movePlan{}, fmt.Errorf("destination %s already exists; move_file never overwrites, so remove or rename it first", m.dstShow)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return movePlan{}, fmt.Errorf("cannot access %s: %w", m.dstShow, err)
	}
	if m.isDir && strings.HasPrefix(dst, src+string(filepath.Separator)) {
		return movePlan{}, fmt.Errorf("cannot move directory %s into itself (%s)", m.srcShow, m.dstShow)
	}
	return m, nil
}

func (t moveFileTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	m, err := t.plan(env, raw)
	if err != nil {
		return tools.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	if err := movePath(m.src, m.dst, m.isDir); err != nil {
		return tools.Result{}, fmt.Errorf("move %s to %s: %w", m.srcShow, m.dstShow, err)
	}
	// What the model knew about the file it still knows under the new name.
	if env.Reads.Has(m.src) {
		env.Reads.Add(m.dst)
	}
	msg := fmt.Sprintf("moved %s to %s", m.srcShow, m.dstShow)
	return tools.Result{Content: msg, Summary: msg}, nil
}

// resolveEntry resolves p for an operation on the directory entry itself.
// The guard resolves symlinks, which is right for reading and writing
// content, but moving a symlink must rename the link, not relocate its
// target and leave the link dangling. So when p names a symlink, the
// entry is the link inside its (resolved, confined) parent directory.
func resolveEntry(env *tools.Env, p string) (string, error) {
	resolved, err := env.Resolve(p, true)
	if err != nil {
		return "", err
	}
	lex := p
	if !filepath.IsAbs(lex) {
		lex = filepath.Join(env.Root, lex)
	}
	lex = filepath.Clean(lex)
	if fi, err := os.Lstat(lex); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return resolved, nil
	}
	parent, err := env.Resolve(filepath.Dir(lex), true)
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, filepath.Base(lex)), nil
}

// movePath moves src to dst, making dst's missing folders, and copying a
// regular file when the two are on different file systems and a plain
// rename cannot work. No symlink on either path is followed (nofollow.go).
func movePath(src, dst string, isDir bool) error {
	err := nofollow.Rename(src, dst)
	if err == nil || isDir || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	data, info, rerr := readRegular(src, maxEditFileSize)
	if rerr != nil {
		return rerr
	}
	if werr := nofollow.WriteFile(dst, data, info.Mode().Perm()); werr != nil {
		return werr
	}
	return nofollow.Remove(src)
}

// Preview describes the move in git's rename notation.
func (t moveFileTool) Preview(_ context.Context, env *tools.Env, raw json.RawMessage) ([]tools.Preview, error) {
	m, err := t.plan(env, raw)
	if err != nil {
		return nil, err
	}
	diff := fmt.Sprintf("diff --git a/%s b/%s\nrename from %s\nrename to %s\n", m.srcShow, m.dstShow, m.srcShow, m.dstShow)
	return []tools.Preview{{Path: m.srcShow + " -> " + m.dstShow, Operation: "move", Diff: diff}}, nil
}
