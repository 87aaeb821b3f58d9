package builtin

import (
	"bytes"
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
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reasonix/reasonix/internal/lazy"
	"github.com/reasonix/reasonix/tools"
)

// grepTool searches file contents. The zero value uses ripgrep when it is
// installed and the request is one ripgrep answers identically.
type grepTool struct {
	native bool // never use ripgrep (tests and benchmarks)
}

func (*grepTool) Name() string   { return "grep" }
func (*grepTool) ReadOnly() bool { return true }

func (*grepTool) Description() string {
	return "Search file contents with a Go RE2 regex; honours .gitignore, skips binary files. " +
		"output_mode files_with_matches (default), content (path:line:text; context lines path-line-text) or count. " +
		"Filter by glob (\"**/*.ts\") or type (go, js, ts, py, rust, java, c, cpp, md, json, yaml, sh...). multiline: match across lines."
}

// Schema is grepSchema (schemas_gen.go), generated from grepArgs; see
// schema_test.go.
func (*grepTool) Schema() json.RawMessage { return json.RawMessage(grepSchema) }

type grepArgs struct {
	Pattern         string     `json:"pattern"`
	Path            string     `json:"path,omitempty"`
	OutputMode      string     `json:"output_mode,omitempty"`
	Glob            string     `json:"glob,omitempty"`
	Type            string     `json:"type,omitempty"`
	CaseInsensitive tools.Bool `json:"case_insensitive,omitempty"`
	Context         *tools.Int `json:"context,omitempty"`
	Before          *tools.Int `json:"before,omitempty"`
	After           *tools.Int `json:"after,omitempty"`
	HeadLimit       tools.Int  `json:"head_limit,omitempty"`
	Multiline       tools.Bool `json:"multiline,omitempty"`
	// Aliases models trained on other agents send; accepted, not advertised.
	I     tools.Bool `json:"-i" schema:"-"`
	C     *tools.Int `json:"-C" schema:"-"`
	B     *tools.Int `json:"-B" schema:"-"`
	A     *tools.Int `json:"-A" schema:"-"`
	LineN any        `json:"-n" schema:"-"` // line numbers are always shown
}

// fileTypes maps grep's type filter to file name globs.
var fileTypes = lazy.Value[map[string][]string]{Build: func() map[string][]string {
	return map[string][]string{
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
}}

// typeAliases accepts the other names models use for the same types.
var typeAliases = lazy.Value[map[string]string]{Build: func() map[string]string {
	return map[string]string{
		"golang": "go", "javascript": "js", "typescript": "ts", "python": "py", "rs": "rust",
		"markdown": "md", "yml": "yaml", "bash": "sh", "shell": "sh", "c++": "cpp", "ruby": "rb",
		"csharp": "cs", "kt": "kotlin",
	}
}}

// grepRequest is a validated grep call.
type grepRequest struct {
	spec      searchSpec
	pattern   string
	fold      bool
	root      string // workspace root
	start     string // absolute file or directory searched
	startRel  string // start relative to root ("" for root)
	isFile    bool
	size      int64 // of the named file when isFile
	glob      string
	globNeg   bool
	typeGlobs []string
	headLimit int
	// maxBytes bounds the output collected (about grepOutputFactor times
	// the result budget); the search stops once it is passed.
	maxBytes int
	// onRead, when set, is called for every file the native search reads
	// (tests count them).
	onRead func(rel string)
	// denied is tools.Env.ReadDenied (nil: nothing is).
	denied func(abs string) bool
	// avoid are the folders ripgrep is not taken from (tools.Env.WriteRoots).
	avoid []string
}

// readable says whether the file rel (under root) may be searched: a file
// the walk finds is not one the gate judged.
func (r *grepRequest) readable(rel string) bool {
	return r.denied == nil || !r.denied(filepath.Join(r.root, filepath.FromSlash(rel)))
}

// grepOutputFactor is how many result budgets of output a search collects
// before it stops: more than the model can be shown after truncation, so
// stopping costs nothing visible but the exact totals.
const grepOutputFactor = 4

// grepResults is what a search found, sorted by path.
type grepResults struct {
	files []fileResult
	// partial is set when the search stopped early (head_limit or
	// maxBytes reached) with files left unread: totals are lower bounds.
	partial bool
}

func (t *grepTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a grepArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Result{}, err
	}
	req, err := newGrepRequest(env, a)
	if err != nil {
		return tools.Result{}, err
	}
	if req.isFile && req.size > maxSearchSize {
		// Not "No matches found": the file was never searched.
		msg := fmt.Sprintf("Skipped %s: it is %d bytes, over grep's %d MiB limit, so it was not searched; read parts of it with read_file (offset, limit)",
			a.Path, req.size, maxSearchSize>>20)
		return tools.Result{Content: msg, Summary: "file skipped: too large"}, nil
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
	before := int(firstInt(a.Before, a.B, &ctxN))
	after := int(firstInt(a.After, a.A, &ctxN))
	headLimit := int(a.HeadLimit)
	if before < 0 || after < 0 || headLimit < 0 {
		return nil, fmt.Errorf("context, before, after and head_limit must not be negative")
	}
	if mode != modeContent {
		before, after = 0, 0
	}
	fold := bool(a.CaseInsensitive || a.I)
	m, err := compileMatcher(a.Pattern, fold, bool(a.Multiline))
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
		size:      fi.Size(),
		headLimit: headLimit,
		maxBytes:  grepOutputFactor * env.Limit(),
		denied:    env.ReadDenied,
		avoid:     append([]string{root}, env.WriteRoots...),
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
		if al, ok := typeAliases.Get()[ty]; ok {
			ty = al
		}
		globs, ok := fileTypes.Get()[ty]
		if !ok {
			names := make([]string, 0, len(fileTypes.Get()))
			for n := range fileTypes.Get() {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("unknown type %q; known types: %s (or use glob)", a.Type, strings.Join(names, ", "))
		}
		req.typeGlobs = globs
	}
	return req, nil
}

func firstInt(ps ...*tools.Int) tools.Int {
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
func (t *grepTool) run(ctx context.Context, req *grepRequest) (grepResults, error) {
	if !t.native {
		if found, ok := rgSearch(ctx, req); ok {
			var rels []string
			for _, rel := range found {
				if req.readable(rel) {
					rels = append(rels, rel)
				}
			}
			return searchListed(ctx, req, rels)
		}
	}
	return nativeSearch(ctx, req)
}

// nativeSearch lists the candidate files (a parallel walk), sorts them by
// path and searches them in that order with bounded parallelism, stopping
// once enough output is collected. Because results are consumed in path
// order, where it stops, and so the output, never depends on scheduling.
func nativeSearch(ctx context.Context, req *grepRequest) (grepResults, error) {
	// Read buffers are recycled across files so a search allocates per match, not per file.
	pool := &sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}
	if req.isFile {
		rel := req.startRel
		if rel == "" {
			rel = filepath.Base(req.start)
		}
		var res grepResults
		if r, ok := searchOne(req, pool, req.start, rel); ok {
			res.files = append(res.files, r)
		}
		return res, nil
	}
	var mu sync.Mutex
	var rels []string
	err := walk(ctx, walkOptions{Root: req.root, Start: req.start, Workers: 2 * runtime.GOMAXPROCS(0)}, func(e walkEntry) error {
		if e.IsDir || !e.Entry.Type().IsRegular() || !req.included(e.Rel, e.Entry.Name()) || !req.readable(e.Rel) {
			return nil
		}
		mu.Lock()
		rels = append(rels, e.Rel)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return grepResults{}, err
	}
	return searchListed(ctx, req, rels)
}

// searchListed searches the files rels (relative to req's root) in path
// order, as nativeSearch does with the files its walk found.
func searchListed(ctx context.Context, req *grepRequest, rels []string) (grepResults, error) {
	pool := &sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}
	sort.Strings(rels)
	prefix := req.root + string(os.PathSeparator)
	return searchOrdered(ctx, req, rels, 2*runtime.GOMAXPROCS(0), func(rel string) (fileResult, bool) {
		return searchOne(req, pool, prefix+filepath.FromSlash(rel), rel)
	})
}

// grepChunk is how many consecutive files one search job covers: handing
// out files one at a time costs more in synchronisation than small files
// cost to search.
const grepChunk = 16

// searchOrdered runs search over rels with up to workers goroutines, in
// jobs of grepChunk consecutive files, and consumes the results in the
// order of rels. At most 2*workers jobs run ahead of the one being
// consumed, and nothing more is scheduled once the collector is full.
func searchOrdered(ctx context.Context, req *grepRequest, rels []string, workers int,
	search func(rel string) (fileResult, bool)) (grepResults, error) {
	if len(rels) == 0 {
		return grepResults{}, ctx.Err()
	}
	chunks := (len(rels) + grepChunk - 1) / grepChunk
	workers = max(1, min(workers, chunks))
	window := 2 * workers
	type hit struct {
		i int // index in rels
		r fileResult
	}
	type slot struct {
		hits []hit
		done chan struct{} // one value per finished job
	}
	slots := make([]slot, window)
	for i := range slots {
		slots[i].done = make(chan struct{}, 1)
	}
	// A token is taken to schedule job c and returned once job c is
	// consumed, so job c+window, which reuses c's slot, waits for that.
	tokens := make(chan struct{}, window)
	jobs := make(chan int)
	quit := make(chan struct{})
	var stopped atomic.Bool // set with quit; ends a job part-way
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		for c := 0; c < chunks; c++ {
			select {
			case tokens <- struct{}{}:
			case <-quit:
				return
			}
			select {
			case jobs <- c:
			case <-quit:
				return
			}
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				s := &slots[c%window]
				s.hits = s.hits[:0]
				for i := c * grepChunk; i < min(len(rels), (c+1)*grepChunk) && !stopped.Load() && ctx.Err() == nil; i++ {
					if r, ok := search(rels[i]); ok {
						s.hits = append(s.hits, hit{i, r})
					}
				}
				s.done <- struct{}{}
			}
		}()
	}
	col := collector{req: req}
	var err error
consume:
	for c := 0; c < chunks; c++ {
		s := &slots[c%window]
		select {
		case <-s.done:
		case <-ctx.Done():
			err = ctx.Err()
			break consume
		}
		for k, h := range s.hits {
			if col.add(h.r) {
				col.res.partial = h.i < len(rels)-1
				break consume
			}
			s.hits[k] = hit{}
		}
		<-tokens
	}
	stopped.Store(true)
	close(quit)
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return grepResults{}, err
	}
	return col.res, nil
}

// collector gathers per-file results in path order and says when enough
// output is in hand: more lines than head_limit (one more than is shown,
// so the note can say lines were cut) or more than maxBytes.
type collector struct {
	req          *grepRequest
	res          grepResults
	lines, bytes int
}

// add appends r and reports whether collecting should stop.
func (c *collector) add(r fileResult) bool {
	c.res.files = append(c.res.files, r)
	if c.req.spec.mode == modeContent {
		c.lines += bytes.Count(r.block, []byte{'\n'})
		if (c.req.spec.before > 0 || c.req.spec.after > 0) && len(c.res.files) > 1 {
			c.lines++ // the "--" between files
		}
		c.bytes += len(r.block)
	} else {
		c.lines++
		c.bytes += len(r.path) + 8
	}
	return (c.req.headLimit > 0 && c.lines > c.req.headLimit) ||
		(c.req.maxBytes > 0 && c.bytes > c.req.maxBytes)
}

func searchOne(req *grepRequest, pool *sync.Pool, abs, rel string) (fileResult, bool) {
	if req.onRead != nil {
		req.onRead(rel)
	}
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

// render formats results and applies head_limit. After a search that
// stopped early the totals are lower bounds and say so.
func (r *grepRequest) render(res grepResults) (string, string) {
	results := res.files
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
	more := ""
	if res.partial {
		more = "+"
	}
	switch {
	case len(lines) < n && res.partial:
		fmt.Fprintf(&b, "[head_limit: showing %d of at least %d lines]\n", len(lines), n)
	case len(lines) < n:
		fmt.Fprintf(&b, "[head_limit: showing %d of %d lines]\n", len(lines), n)
	case res.partial:
		fmt.Fprintf(&b, "[search stopped after %d lines of output; more matches may follow: narrow pattern, path or glob]\n", n)
	}
	var summary string
	switch r.spec.mode {
	case modeFiles:
		summary = fmt.Sprintf("%d%s files", len(results), more)
	default:
		summary = fmt.Sprintf("%d%s matching lines in %d%s files", total, more, len(results), more)
	}
	if r.spec.mode == modeCount {
		fmt.Fprintf(&b, "total: %s\n", summary)
	}
	return b.String(), summary
}
