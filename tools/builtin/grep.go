package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reasonix/reasonix/tools"
)

func init() { tools.Register(&grepTool{}) }

// grepTool searches file contents. The zero value uses ripgrep when it is
// installed and the request is one ripgrep answers identically.
type grepTool struct {
	native bool // never use ripgrep (tests and benchmarks)
}

func (*grepTool) Name() string   { return "grep" }
func (*grepTool) ReadOnly() bool { return true }

func (*grepTool) Description() string {
	return "Search file contents (Go RE2 regex); .gitignore-aware, binary files skipped. " +
		"output_mode: files_with_matches (default) | content (path:line:text, context path-line-text) | count. " +
		"Filter by glob (\"**/*.ts\") or type (go, js, ts, py, rust, java, c, cpp, md, json, yaml, sh...). " +
		"multiline: match across lines."
}

var grepSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"pattern":{"type":"string"},` +
	`"path":{"type":"string"},` +
	`"output_mode":{"type":"string","enum":["files_with_matches","content","count"]},` +
	`"glob":{"type":"string"},` +
	`"type":{"type":"string"},` +
	`"case_insensitive":{"type":"boolean"},` +
	`"context":{"type":"integer"},` +
	`"before":{"type":"integer"},` +
	`"after":{"type":"integer"},` +
	`"head_limit":{"type":"integer"},` +
	`"multiline":{"type":"boolean"}` +
	`},"required":["pattern"]}`)

func (*grepTool) Schema() json.RawMessage { return grepSchema }

type grepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	OutputMode      string `json:"output_mode"`
	Glob            string `json:"glob"`
	Type            string `json:"type"`
	CaseInsensitive bool   `json:"case_insensitive"`
	Context         *int   `json:"context"`
	Before          *int   `json:"before"`
	After           *int   `json:"after"`
	HeadLimit       int    `json:"head_limit"`
	Multiline       bool   `json:"multiline"`
	// Aliases models trained on other agents send.
	I     bool `json:"-i"`
	C     *int `json:"-C"`
	B     *int `json:"-B"`
	A     *int `json:"-A"`
	LineN any  `json:"-n"` // line numbers are always shown
}

// fileTypes maps grep's type filter to file name globs.
var fileTypes = map[string][]string{
	"c":      {"*.c", "*.h"},
	"cpp":    {"*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h", "*.inl"},
	"cs":     {"*.cs"},
	"css":    {"*.css", "*.scss", "*.sass", "*.less"},
	"go":     {"*.go"},
	"html":   {"*.html", "*.htm"},
	"java":   {"*.java"},
	"js":     {"*.js", "*.jsx", "*.mjs", "*.cjs"},
	"json":   {"*.json", "*.jsonc"},
	"kotlin": {"*.kt", "*.kts"},
	"md":     {"*.md", "*.markdown", "*.mdx"},
	"php":    {"*.php"},
	"py":     {"*.py", "*.pyi"},
	"rb":     {"*.rb", "*.rake", "Gemfile"},
	"rust":   {"*.rs"},
	"sh":     {"*.sh", "*.bash", "*.zsh", "*.ksh"},
	"sql":    {"*.sql"},
	"swift":  {"*.swift"},
	"toml":   {"*.toml"},
	"ts":     {"*.ts", "*.tsx", "*.mts", "*.cts"},
	"txt":    {"*.txt"},
	"xml":    {"*.xml"},
	"yaml":   {"*.yaml", "*.yml"},
}

// typeAliases accepts the other names models use for the same types.
var typeAliases = map[string]string{
	"golang": "go", "javascript": "js", "typescript": "ts", "python": "py", "rs": "rust",
	"markdown": "md", "yml": "yaml", "bash": "sh", "shell": "sh", "c++": "cpp", "ruby": "rb",
	"csharp": "cs", "kt": "kotlin",
}

// grepRequest is a validated grep call.
type grepRequest struct {
	spec      searchSpec
	pattern   string
	fold      bool
	root      string // workspace root
	start     string // absolute file or directory searched
	startRel  string // start relative to root ("" for root)
	isFile    bool
	glob      string
	globNeg   bool
	typeGlobs []string
	headLimit int
}

func (t *grepTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a grepArgs
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return tools.Result{}, err
	}
	req, err := newGrepRequest(env, a)
	if err != nil {
		return tools.Result{}, err
	}
	results, err := t.run(ctx, req)
	if err != nil {
		return tools.Result{}, err
	}
	out, summary := req.render(results)
	return tools.Result{Content: tools.Truncate(out, env.Limit()), Summary: summary}, nil
}

func newGrepRequest(env *tools.Env, a grepArgs) (*grepRequest, error) {
	if a.Pattern == "" {
		return nil, fmt.Errorf("pattern is required")
	}
	mode := a.OutputMode
	switch mode {
	case "":
		mode = modeFiles
	case modeFiles, modeContent, modeCount:
	case "files":
		mode = modeFiles
	default:
		return nil, fmt.Errorf("output_mode must be files_with_matches, content or count, not %q", a.OutputMode)
	}
	ctxN := firstInt(a.Context, a.C)
	before := firstInt(a.Before, a.B, &ctxN)
	after := firstInt(a.After, a.A, &ctxN)
	if before < 0 || after < 0 || a.HeadLimit < 0 {
		return nil, fmt.Errorf("context, before, after and head_limit must not be negative")
	}
	if mode != modeContent {
		before, after = 0, 0
	}
	fold := a.CaseInsensitive || a.I
	m, err := compileMatcher(a.Pattern, fold, a.Multiline)
	if err != nil {
		return nil, err
	}
	p := a.Path
	if p == "" {
		p = "."
	}
	start, err := env.Resolve(p, false)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(start)
	if err != nil {
		return nil, fmt.Errorf("cannot search %s: %w", p, err)
	}
	root := env.Root
	if r := relTo(root, start); r == ".." || strings.HasPrefix(r, "../") {
		root = start
		if !fi.IsDir() {
			root = filepath.Dir(start)
		}
	}
	req := &grepRequest{
		spec:      searchSpec{m: m, mode: mode, before: before, after: after},
		pattern:   a.Pattern,
		fold:      fold,
		root:      root,
		start:     start,
		startRel:  relTo(root, start),
		isFile:    !fi.IsDir(),
		headLimit: a.HeadLimit,
	}
	if g := strings.TrimSpace(a.Glob); g != "" {
		if strings.HasPrefix(g, "!") {
			req.globNeg, g = true, g[1:]
		}
		if !doublestar.ValidatePattern(g) {
			return nil, fmt.Errorf("invalid glob %q", a.Glob)
		}
		req.glob = g
	}
	if a.Type != "" {
		ty := strings.ToLower(strings.TrimPrefix(a.Type, "."))
		if al, ok := typeAliases[ty]; ok {
			ty = al
		}
		globs, ok := fileTypes[ty]
		if !ok {
			names := make([]string, 0, len(fileTypes))
			for n := range fileTypes {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("unknown type %q; known types: %s (or use glob)", a.Type, strings.Join(names, ", "))
		}
		req.typeGlobs = globs
	}
	return req, nil
}

func firstInt(ps ...*int) int {
	for _, p := range ps {
		if p != nil {
			return *p
		}
	}
	return 0
}

// included applies the glob and type filters; rel is relative to the root.
func (r *grepRequest) included(rel, name string) bool {
	if r.glob != "" {
		sub := rel
		if r.startRel != "" {
			sub = strings.TrimPrefix(rel, r.startRel+"/")
		}
		target := sub
		if !strings.Contains(r.glob, "/") {
			target = name
		}
		ok, _ := doublestar.Match(r.glob, target)
		if ok == r.globNeg {
			return false
		}
	}
	if r.typeGlobs != nil {
		for _, g := range r.typeGlobs {
			if ok, _ := path.Match(g, name); ok {
				return true
			}
		}
		return false
	}
	return true
}

// run searches with ripgrep when that gives the same answer, natively otherwise.
func (t *grepTool) run(ctx context.Context, req *grepRequest) ([]fileResult, error) {
	if !t.native {
		if res, ok := rgSearch(ctx, req); ok {
			return res, nil
		}
	}
	return nativeSearch(ctx, req)
}

// nativeSearch walks and searches in parallel, then sorts by path so the
// output never depends on scheduling.
func nativeSearch(ctx context.Context, req *grepRequest) ([]fileResult, error) {
	// Read buffers are recycled across files so a walk allocates per match, not per file.
	pool := &sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}
	if req.isFile {
		rel := req.startRel
		if rel == "" {
			rel = filepath.Base(req.start)
		}
		var out []fileResult
		if r, ok := searchOne(req, pool, req.start, rel); ok {
			out = append(out, r)
		}
		return out, nil
	}
	var mu sync.Mutex
	var out []fileResult
	err := walk(ctx, walkOptions{Root: req.root, Start: req.start, Workers: 2 * runtime.GOMAXPROCS(0)}, func(e walkEntry) error {
		if e.IsDir || !e.Entry.Type().IsRegular() || !req.included(e.Rel, e.Entry.Name()) {
			return nil
		}
		if r, ok := searchOne(req, pool, e.Abs, e.Rel); ok {
			mu.Lock()
			out = append(out, r)
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortResults(out)
	return out, nil
}

func sortResults(rs []fileResult) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].path < rs[j].path })
}

func searchOne(req *grepRequest, pool *sync.Pool, abs, rel string) (fileResult, bool) {
	bp := pool.Get().(*[]byte)
	defer pool.Put(bp)
	buf, err := readWhole(abs, *bp, maxSearchSize)
	*bp = buf[:0]
	if err != nil || isBinary(buf) {
		return fileResult{}, false
	}
	r := req.spec.search(buf, rel)
	return r, r.count > 0
}

// render formats results and applies head_limit.
func (r *grepRequest) render(results []fileResult) (string, string) {
	if len(results) == 0 {
		return "No matches found", "no matches"
	}
	var lines []string
	total := 0
	for _, fr := range results {
		total += fr.count
	}
	switch r.spec.mode {
	case modeFiles:
		for _, fr := range results {
			lines = append(lines, fr.path)
		}
	case modeCount:
		for _, fr := range results {
			lines = append(lines, fr.path+":"+strconv.Itoa(fr.count))
		}
	case modeContent:
		sep := r.spec.before > 0 || r.spec.after > 0
		for i, fr := range results {
			if sep && i > 0 {
				lines = append(lines, "--")
			}
			lines = append(lines, strings.Split(strings.TrimSuffix(string(fr.block), "\n"), "\n")...)
		}
	}
	n := len(lines)
	if r.headLimit > 0 && n > r.headLimit {
		lines = lines[:r.headLimit]
	}
	var b strings.Builder
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteByte('\n')
	if len(lines) < n {
		fmt.Fprintf(&b, "[head_limit: showing %d of %d lines]\n", len(lines), n)
	}
	var summary string
	switch r.spec.mode {
	case modeFiles:
		summary = fmt.Sprintf("%d files", len(results))
	default:
		summary = fmt.Sprintf("%d matching lines in %d files", total, len(results))
	}
	if r.spec.mode == modeCount {
		fmt.Fprintf(&b, "total: %s\n", summary)
	}
	return b.String(), summary
}
