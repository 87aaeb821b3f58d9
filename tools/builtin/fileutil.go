// Package builtin holds the tools every session can use: file reading and
// editing, patching, search, shell and todo tools. The package registers
// them with tools.Register from its one init, below.
package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/reasonix/reasonix/internal/nofollow"
	"github.com/reasonix/reasonix/tools"
)

// The tools register from one init function: the code of each package
// init runs at every start of the binary, `reasonix version` included,
// and an init per file spreads that code over several pages.
func init() {
	tools.Register(askTool{}, bashTool{}, editFileTool{}, globTool{}, &grepTool{}, jobTool{}, lsTool{},
		moveFileTool{}, multiEditTool{}, patchTool{}, readFileTool{}, todoWriteTool{}, todoReadTool{},
		webFetchTool{}, writeFileTool{})
}

// newFileMode is the permission of files the tools create.
const newFileMode fs.FileMode = 0o644

// maxEditFileSize bounds files the editing tools load into memory; larger
// files are almost certainly generated or data, not source to hand-edit.
const maxEditFileSize = 16 << 20

// pathArg accepts the path under its canonical name or the file_path alias
// that models trained on other agents tend to send; the alias is decoded
// but not advertised in the schema.
type pathArg struct {
	Path     string `json:"path"`
	FilePath string `json:"file_path" schema:"-"`
}

func (p pathArg) get() (string, error) {
	if p.Path != "" {
		return p.Path, nil
	}
	if p.FilePath != "" {
		return p.FilePath, nil
	}
	return "", errors.New("missing required argument \"path\"")
}

// displayPath is how a path is shown to the model and in diffs: relative to
// the workspace root with forward slashes when inside it, absolute otherwise.
func displayPath(env *tools.Env, abs string) string {
	if env != nil && env.Root != "" {
		if rel, err := filepath.Rel(env.Root, abs); err == nil && rel != ".." &&
			!strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

// binarySniffLen is how much of a file decides whether it is text.
const binarySniffLen = 8000

// looksBinary guesses whether data is not text: a NUL byte, or a large share of
// bytes that are neither valid UTF-8 nor ordinary whitespace.
func looksBinary(data []byte) bool {
	if len(data) > binarySniffLen {
		data = data[:binarySniffLen]
	}
	bad := 0
	for i := 0; i < len(data); {
		c := data[i]
		if c == 0 {
			return true
		}
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != '\b' && c != 0x1b {
				bad++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			// A rune cut by the sniff window is not evidence of binary.
			if len(data)-i < utf8.UTFMax && !utf8.FullRune(data[i:]) {
				break
			}
			bad++
		}
		i += size
	}
	return bad*10 > len(data)
}

// describeBinary is what read_file says instead of dumping bytes.
func describeBinary(display string, size int64, head []byte) string {
	kind := http.DetectContentType(head)
	return fmt.Sprintf("%s is a binary file (%s, %s); its content is not shown.", display, byteSize(size), kind)
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// textFile is the current state of a file an editing tool works on.
type textFile struct {
	content string
	mode    fs.FileMode
	exists  bool
}

// errBinary marks a file that cannot be edited as text.
var errBinary = errors.New("binary file")

// loadText reads a file for editing. A missing file is not an error (exists
// is false); a directory, an oversized or a binary file is.
func loadText(env *tools.Env, abs, display string) (textFile, error) {
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return textFile{mode: newFileMode}, nil
	}
	if err != nil {
		return textFile{}, fmt.Errorf("cannot access %s: %w", display, err)
	}
	if info.IsDir() {
		return textFile{}, fmt.Errorf("%s is a directory, not a file", display)
	}
	if !info.Mode().IsRegular() {
		return textFile{}, fmt.Errorf("%s is not a regular file", display)
	}
	if info.Size() > maxEditFileSize {
		return textFile{}, fmt.Errorf("%s is too large to edit (%s); use bash for bulk changes", display, byteSize(info.Size()))
	}
	data, _, err := readRegular(abs, maxEditFileSize)
	if err != nil {
		return textFile{}, fmt.Errorf("cannot read %s: %w", display, err)
	}
	if text, ok := editorText(env, abs); ok {
		// Edit what the person sees in the editor, unsaved changes
		// included; the write then lands on disk and in the editor.
		data = []byte(text)
	}
	if looksBinary(data) {
		return textFile{mode: info.Mode().Perm(), exists: true},
			fmt.Errorf("%s is a %w; only text files can be edited", display, errBinary)
	}
	return textFile{content: string(data), mode: info.Mode().Perm(), exists: true}, nil
}

// fileChange is one file's before and after state. Writing tools compute
// their changes in memory first so previews and execution share one code
// path and a failure part-way leaves nothing half-done.
type fileChange struct {
	abs, display   string
	before, after  string
	existed, exist bool
	mode           fs.FileMode
}

// operation names the change for previews and results.
func (c fileChange) operation() string {
	switch {
	case !c.existed && c.exist:
		return "create"
	case c.existed && !c.exist:
		return "delete"
	case c.before == c.after:
		return "unchanged"
	}
	return "update"
}

// preview renders the change for the permission gate.
func (c fileChange) preview() tools.Preview {
	diff, add, del := UnifiedDiff(c.display, c.before, c.after)
	return tools.Preview{Path: c.display, Operation: c.operation(), Diff: diff, Added: add, Removed: del}
}

// maxResultDiff bounds the diff a result carries for front ends.
const maxResultDiff = 64 << 10

// resultDiff is the unified diff of changes, for [tools.Result.Diff]:
// clipped to maxResultDiff at a line end, binary content left out.
func resultDiff(changes ...fileChange) string {
	var b strings.Builder
	for _, c := range changes {
		if looksBinary([]byte(c.before)) || looksBinary([]byte(c.after)) {
			continue
		}
		d, _, _ := UnifiedDiff(c.display, c.before, c.after)
		b.WriteString(d)
		if b.Len() > maxResultDiff {
			break
		}
	}
	s := b.String()
	if len(s) > maxResultDiff {
		s = s[:strings.LastIndexByte(s[:maxResultDiff], '\n')+1]
	}
	return s
}

// counts returns the added and removed line counts.
func (c fileChange) counts() (int, int) {
	_, add, del := UnifiedDiff(c.display, c.before, c.after)
	return add, del
}

// commitChanges applies changes in order. If one fails, the ones already
// applied are restored best effort, so the workspace is left as it was.
// editorText is the editor's text of abs, when an editor is attached and
// has it.
func editorText(env *tools.Env, abs string) (string, bool) {
	if env == nil || env.Editor == nil {
		return "", false
	}
	return env.Editor.ReadText(env.Session, abs)
}

// commitChanges writes every change or none, then shows what was written
// in the attached editor, if any.
func commitChanges(ctx context.Context, env *tools.Env, changes []fileChange) error {
	if err := commitAll(ctx, changes); err != nil {
		return err
	}
	if env != nil && env.Editor != nil {
		for _, c := range changes {
			if c.exist && (!c.existed || c.before != c.after) {
				env.Editor.Wrote(env.Session, c.abs, c.after)
			}
		}
	}
	return nil
}

func commitAll(ctx context.Context, changes []fileChange) error {
	for i, c := range changes {
		if err := ctx.Err(); err != nil {
			rollback(changes[:i])
			return fmt.Errorf("cancelled before writing %s; no files were changed: %w", c.display, err)
		}
		if err := applyChange(c); err != nil {
			if rerr := rollback(changes[:i]); rerr != nil {
				return fmt.Errorf("%w; restoring earlier files also failed: %v", err, rerr)
			}
			if i > 0 {
				return fmt.Errorf("%w; earlier files were restored, nothing was changed", err)
			}
			return err
		}
	}
	return nil
}

func applyChange(c fileChange) error {
	switch {
	case c.exist && (!c.existed || c.before != c.after):
		return nofollow.WriteFile(c.abs, []byte(c.after), c.mode)
	case !c.exist && c.existed:
		if err := nofollow.Remove(c.abs); err != nil {
			return fmt.Errorf("delete %s: %w", c.display, err)
		}
	}
	return nil
}

func rollback(done []fileChange) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		c := done[i]
		undo := fileChange{abs: c.abs, display: c.display, before: c.after, after: c.before,
			existed: c.exist, exist: c.existed, mode: c.mode}
		if err := applyChange(undo); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// splitLines splits s into lines that keep their terminating "\n"; a final
// line without one is kept as is.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// usesCRLF reports whether the text's line endings are mostly "\r\n".
func usesCRLF(s string) bool {
	crlf := strings.Count(s, "\r\n")
	return crlf > 0 && crlf*2 >= strings.Count(s, "\n")
}

// lineAt returns the 1-based line number of byte offset off in s.
func lineAt(s string, off int) int {
	return strings.Count(s[:off], "\n") + 1
}

// numbered formats lines in read_file style starting at line number first,
// so the model can copy text back without guessing.
func numbered(lines []string, first int) string {
	var b strings.Builder
	for i, l := range lines {
		l = strings.TrimRight(l, "\r\n")
		if len(l) > 300 {
			l = cutUTF8(l, 300) + " …"
		}
		fmt.Fprintf(&b, "%6d\t%s\n", first+i, l)
	}
	return b.String()
}

// cutUTF8 cuts s to at most n bytes without splitting a rune.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// lineMatch is a window of file lines that resembles some wanted text.
type lineMatch struct {
	start, end int // 0-based, end exclusive
	score      float64
	wsOnly     bool // equal once all whitespace is removed
}

// closestLines finds the window of lines in have that best resembles want,
// comparing lines with surrounding whitespace trimmed. It is a hint for the
// model after an exact match failed, so it favours speed over precision on
// large inputs.
func closestLines(ctx context.Context, have, want []string) (lineMatch, bool) {
	want = trimBlankEdges(want)
	k, n := len(want), len(have)
	if k == 0 || n == 0 {
		return lineMatch{}, false
	}
	if k > n {
		k = n
		want = want[:n]
	}
	wf := make([]lineFeatures, k)
	for i, l := range want {
		wf[i] = features(l)
	}
	hf := make([]lineFeatures, n)
	for i, l := range have {
		hf[i] = features(l)
	}
	windows := n - k + 1
	candidates := make([]int, 0, windows)
	if windows*k > 400_000 {
		// Too many pairs for fuzzy scoring: rank windows by exact
		// trimmed-line agreement and fuzzy-score only the best few.
		exact := make([]int, windows)
		for j := 0; j < windows; j++ {
			if j%1024 == 0 && ctx.Err() != nil {
				return lineMatch{}, false
			}
			for i := 0; i < k; i++ {
				if wf[i].trimmed == hf[j+i].trimmed {
					exact[j]++
				}
			}
		}
		for j := 0; j < windows; j++ {
			candidates = append(candidates, j)
		}
		sort.SliceStable(candidates, func(a, b int) bool { return exact[candidates[a]] > exact[candidates[b]] })
		if len(candidates) > 64 {
			candidates = candidates[:64]
		}
	} else {
		for j := 0; j < windows; j++ {
			candidates = append(candidates, j)
		}
	}
	best := lineMatch{start: -1}
	for ci, j := range candidates {
		if ci%256 == 0 && ctx.Err() != nil {
			return lineMatch{}, false
		}
		sum := 0.0
		for i := 0; i < k; i++ {
			sum += similarity(wf[i], hf[j+i])
		}
		if s := sum / float64(k); s > best.score {
			best = lineMatch{start: j, end: j + k, score: s}
		}
	}
	if best.start < 0 {
		return lineMatch{}, false
	}
	best.wsOnly = true
	for i := 0; i < k; i++ {
		if wf[i].squashed != hf[best.start+i].squashed {
			best.wsOnly = false
			break
		}
	}
	return best, true
}

func trimBlankEdges(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// lineFeatures caches what similarity needs about one line.
type lineFeatures struct {
	trimmed  string
	squashed string   // all whitespace removed
	bigrams  []uint32 // sorted byte bigrams of squashed
}

func features(l string) lineFeatures {
	t := strings.TrimSpace(l)
	sq := strings.Join(strings.Fields(t), "")
	var bg []uint32
	if len(sq) >= 2 {
		bg = make([]uint32, 0, len(sq)-1)
		for i := 0; i+1 < len(sq); i++ {
			bg = append(bg, uint32(sq[i])<<8|uint32(sq[i+1]))
		}
		sort.Slice(bg, func(a, b int) bool { return bg[a] < bg[b] })
	}
	return lineFeatures{trimmed: t, squashed: sq, bigrams: bg}
}

// similarity is the Dice coefficient of the lines' bigram multisets, in [0,1].
func similarity(a, b lineFeatures) float64 {
	if a.squashed == b.squashed {
		return 1
	}
	if len(a.bigrams) == 0 || len(b.bigrams) == 0 {
		return 0
	}
	common, i, j := 0, 0, 0
	for i < len(a.bigrams) && j < len(b.bigrams) {
		switch {
		case a.bigrams[i] == b.bigrams[j]:
			common++
			i++
			j++
		case a.bigrams[i] < b.bigrams[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(common) / float64(len(a.bigrams)+len(b.bigrams))
}

// describeClosest explains where text resembling want appears in content,
// for error messages after an exact match failed.
func describeClosest(ctx context.Context, content string, want string) string {
	have := splitLines(content)
	m, ok := closestLines(ctx, have, splitLines(want))
	if !ok || m.score < 0.5 {
		return "No similar text was found; read the file again to see its current content."
	}
	var b strings.Builder
	if m.wsOnly {
		fmt.Fprintf(&b, "%s match except for whitespace (indentation, tabs vs spaces or trailing spaces):\n", lineRange(m.start+1, m.end, true))
	} else {
		fmt.Fprintf(&b, "The closest text is at %s (%d%% similar):\n", lineRange(m.start+1, m.end, false), int(m.score*100))
	}
	b.WriteString(numbered(have[m.start:m.end], m.start+1))
	b.WriteString("Copy the exact text from the file (without the line-number prefix).")
	return b.String()
}

// lineRange phrases a 1-based inclusive range of lines.
func lineRange(first, last int, capital bool) string {
	word := "lines"
	if first == last {
		word = "line"
	}
	if capital {
		word = strings.ToUpper(word[:1]) + word[1:]
	}
	if first == last {
		return fmt.Sprintf("%s %d", word, first)
	}
	return fmt.Sprintf("%s %d-%d", word, first, last)
}
