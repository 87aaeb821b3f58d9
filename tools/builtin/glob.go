package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reasonix/reasonix/tools"
)

// globMax caps how many paths glob returns; beyond it the model should narrow.
const globMax = 200

type globTool struct{}

func (globTool) Name() string   { return "glob" }
func (globTool) ReadOnly() bool { return true }

func (globTool) Description() string {
	return "Find files by name pattern such as \"**/*.go\" or \"src/**/*.{ts,tsx}\" (** spans directories; * does not cross /), " +
		"matched relative to path (default: workspace root). Honours .gitignore. Newest first, at most 200."
}

// Schema is globSchema (schemas_gen.go), generated from globArgs; see
// schema_test.go.
func (globTool) Schema() json.RawMessage { return json.RawMessage(globSchema) }

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

type globHit struct {
	rel   string
	mtime time.Time
}

func (globTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a globArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Result{}, err
	}
	pattern := filepath.ToSlash(strings.TrimSpace(a.Pattern))
	if pattern == "" {
		return tools.Result{}, fmt.Errorf("pattern is required")
	}
	pattern = strings.TrimPrefix(pattern, "./")
	if !doublestar.ValidatePattern(pattern) {
		return tools.Result{}, fmt.Errorf("invalid glob pattern %q", a.Pattern)
	}
	base := a.Path
	if base == "" {
		base = "."
	}
	// Walk only below the pattern's fixed leading directories.
	static, rest := doublestar.SplitPattern(pattern)
	dir := filepath.FromSlash(static)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(base, dir)
	}
	start, err := env.Resolve(dir, false)
	if err != nil {
		return tools.Result{}, err
	}
	if fi, err := os.Stat(start); err != nil || !fi.IsDir() {
		return tools.Result{Content: "No files found", Summary: "0 files"}, nil
	}
	root := env.Root
	if r := relTo(root, start); r == ".." || strings.HasPrefix(r, "../") {
		root = start
	}
	startRel := relTo(root, start)
	// Without "**" or a character class (doublestar lets "[^x]" match "/")
	// no match has more slashes than the pattern: "*" and "?" never cross
	// "/" and a brace picks one alternative. So "*.go" need not walk the
	// whole tree.
	maxDepth := -1
	if !strings.Contains(rest, "**") && !strings.Contains(rest, "[") {
		maxDepth = strings.Count(rest, "/")
	}
	var mu sync.Mutex
	var hits []globHit
	err = walk(ctx, walkOptions{Root: root, Start: start}, func(e walkEntry) error {
		sub := e.Rel
		if startRel != "" {
			sub = e.Rel[len(startRel)+1:]
		}
		if e.IsDir {
			if maxDepth >= 0 && strings.Count(sub, "/") >= maxDepth {
				return filepath.SkipDir
			}
			return nil
		}
		if ok, _ := doublestar.Match(rest, sub); !ok {
			return nil
		}
		h := globHit{rel: e.Rel}
		if info, err := e.Entry.Info(); err == nil {
			h.mtime = info.ModTime()
		}
		mu.Lock()
		hits = append(hits, h)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return tools.Result{}, err
	}
	if len(hits) == 0 {
		return tools.Result{Content: "No files found", Summary: "0 files"}, nil
	}
	// Recently touched files are usually the relevant ones.
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].mtime.Equal(hits[j].mtime) {
			return hits[i].mtime.After(hits[j].mtime)
		}
		return hits[i].rel < hits[j].rel
	})
	var b strings.Builder
	for i, h := range hits {
		if i == globMax {
			fmt.Fprintf(&b, "[showing %d of %d files, newest first; narrow the pattern or path]\n", globMax, len(hits))
			break
		}
		b.WriteString(h.rel)
		b.WriteByte('\n')
	}
	return tools.Result{
		Content: tools.Truncate(b.String(), env.Limit()),
		Summary: fmt.Sprintf("%d files", len(hits)),
	}, nil
}
