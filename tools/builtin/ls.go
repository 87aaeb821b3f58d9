package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reasonix/reasonix/internal/gitignore"
	"github.com/reasonix/reasonix/tools"
)

const (
	lsDefaultDepth = 2
	lsMaxDepth     = 6
	// lsMaxEntries bounds one listing; a model that needs more can list a subdirectory.
	lsMaxEntries = 500
)

type lsTool struct{}

func (lsTool) Name() string   { return "ls" }
func (lsTool) ReadOnly() bool { return true }

func (lsTool) Description() string {
	return "List a directory (default: workspace root) as an indented tree, directories ending in /, without .git, node_modules " +
		"and .gitignored paths. depth: levels (default 2, max 6). At most 500 entries."
}

// Schema is lsSchema (schemas_gen.go), generated from lsArgs; see
// schema_test.go.
func (lsTool) Schema() json.RawMessage { return json.RawMessage(lsSchema) }

type lsArgs struct {
	Path  string    `json:"path,omitempty"`
	Depth tools.Int `json:"depth,omitempty"`
}

type lister struct {
	ctx     context.Context
	b       strings.Builder
	n       int
	omitted int
}

func (lsTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a lsArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Result{}, err
	}
	p := a.Path
	if p == "" {
		p = "."
	}
	depth := int(a.Depth)
	if depth <= 0 {
		depth = lsDefaultDepth
	}
	depth = min(depth, lsMaxDepth)
	dir, err := env.Resolve(p, false)
	if err != nil {
		return tools.Result{}, err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return tools.Result{}, fmt.Errorf("cannot list %s: %w", p, err)
	}
	if !fi.IsDir() {
		return tools.Result{}, fmt.Errorf("%s is a file, not a directory; use read_file to see it", p)
	}
	root := env.Root
	if r := relTo(root, dir); r == ".." || strings.HasPrefix(r, "../") {
		root = dir
	}
	rel := relTo(root, dir)
	l := &lister{ctx: ctx}
	if rel == "" {
		l.b.WriteString("./\n")
	} else {
		l.b.WriteString(rel + "/\n")
	}
	if err := l.list(dir, rel, gitignore.Ancestors(root, dir), 1, depth); err != nil {
		return tools.Result{}, err
	}
	if l.omitted > 0 {
		fmt.Fprintf(&l.b, "[%d more entries not shown; list a subdirectory or lower depth]\n", l.omitted)
	}
	return tools.Result{
		Content: tools.Truncate(l.b.String(), env.Limit()),
		Summary: fmt.Sprintf("%d entries", l.n),
	}, nil
}

// list writes the entries of dir at indentation level, expanding
// subdirectories while level < depth.
func (l *lister) list(dir, rel string, ign *gitignore.Matcher, level, depth int) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	ents, err := readDirNoFollow(dir)
	if err != nil {
		if level == 1 {
			return fmt.Errorf("cannot list %s: %w", dir, err)
		}
		return nil
	}
	ign = ign.LoadDir(dir, rel)
	ents = visibleEntries(ents, rel, ign)
	// Directories first, then files, each alphabetically: the shape of a
	// project is in its directories.
	sort.SliceStable(ents, func(i, j int) bool { return ents[i].IsDir() && !ents[j].IsDir() })
	indent := strings.Repeat("  ", level)
	for _, e := range ents {
		if l.n >= lsMaxEntries {
			l.omitted++
			continue
		}
		l.n++
		name := e.Name()
		childRel := joinRel(rel, name)
		abs := filepath.Join(dir, name)
		switch {
		case e.IsDir():
			l.b.WriteString(indent + name + "/")
			if level < depth {
				l.b.WriteByte('\n')
				if err := l.list(abs, childRel, ign, level+1, depth); err != nil {
					return err
				}
				continue
			}
			// Say how much is hidden below the depth limit.
			if sub, err := readDirNoFollow(abs); err == nil {
				if k := len(visibleEntries(sub, childRel, ign.LoadDir(abs, childRel))); k > 0 {
					fmt.Fprintf(&l.b, " (%d entries)", k)
				}
			}
			l.b.WriteByte('\n')
		case e.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(abs)
			l.b.WriteString(indent + name + " -> " + target + "\n")
		default:
			l.b.WriteString(indent + name + "\n")
		}
	}
	return nil
}

func visibleEntries(ents []fs.DirEntry, rel string, ign *gitignore.Matcher) []fs.DirEntry {
	out := ents[:0]
	for _, e := range ents {
		if alwaysSkipped(e.Name()) || ign.Ignored(joinRel(rel, e.Name()), e.IsDir()) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}
