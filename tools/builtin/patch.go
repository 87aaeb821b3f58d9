package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/reasonix/reasonix/internal/lazy"
	"github.com/reasonix/reasonix/tools"
)

// patchTool applies a unified diff to any number of files, all or nothing.
type patchTool struct{}

func (patchTool) Name() string   { return "patch" }
func (patchTool) ReadOnly() bool { return false }
func (patchTool) Description() string {
	return "Apply a unified diff (git diff or diff -u: ---/+++ headers, @@ hunks) to one or more files, including new files (--- /dev/null), " +
		"deletions (+++ /dev/null) and git renames. Hunks may sit off their stated lines, but context and removed lines must match. " +
		"Every hunk applies or nothing changes."
}

// Schema is patchSchema (schemas_gen.go), generated from patchArgs; see
// schema_test.go.
func (patchTool) Schema() json.RawMessage { return json.RawMessage(patchSchema) }

type patchArgs struct {
	Patch string `json:"patch"`
}

// patchPlan is the outcome of applying a patch in memory.
type patchPlan struct {
	changes []fileChange
	notes   []string
}

// stagedFile tracks one path while a patch is applied in memory, so a patch
// that touches the same file twice sees its own earlier result.
type stagedFile struct {
	orig textFile
	cur  textFile
}

type patcher struct {
	env   *tools.Env
	strip bool // drop a leading a/ or b/ from names in plain diffs
	files map[string]*stagedFile
	order []string
	notes []string
}

func (patchTool) plan(ctx context.Context, env *tools.Env, raw json.RawMessage) (patchPlan, error) {
	var a patchArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return patchPlan{}, err
	}
	text := normalizePatch(a.Patch)
	if strings.TrimSpace(text) == "" {
		return patchPlan{}, errors.New("missing required argument \"patch\"")
	}
	files, _, err := gitdiff.Parse(strings.NewReader(text))
	if err != nil {
		return patchPlan{}, fmt.Errorf("cannot parse the patch: %v; send a unified diff with '--- path' and '+++ path' headers followed by '@@ -start,count +start,count @@' hunks", err)
	}
	if len(files) == 0 {
		return patchPlan{}, errors.New("the patch contains no file changes; expected '--- a/path', '+++ b/path' and '@@ ... @@' hunks")
	}
	strip := sectionPrefixes(text)
	if len(strip) != len(files) {
		strip = nil // the scan disagrees with the parser; strip nothing
	}
	p := &patcher{env: env, files: map[string]*stagedFile{}}
	for i, f := range files {
		p.strip = strip != nil && strip[i]
		if err := p.applyFile(ctx, f); err != nil {
			if len(files) > 1 {
				return patchPlan{}, fmt.Errorf("file %d of %d: %w; nothing was changed", i+1, len(files), err)
			}
			return patchPlan{}, fmt.Errorf("%w; nothing was changed", err)
		}
	}
	var plan patchPlan
	for _, abs := range p.order {
		st := p.files[abs]
		if st.orig.exists == st.cur.exists && st.orig.content == st.cur.content {
			continue
		}
		plan.changes = append(plan.changes, fileChange{abs: abs, display: displayPath(env, abs),
			before: st.orig.content, after: st.cur.content, existed: st.orig.exists, exist: st.cur.exists, mode: st.cur.mode})
	}
	if len(plan.changes) == 0 {
		return patchPlan{}, errors.New("the patch makes no changes")
	}
	plan.notes = p.notes
	return plan, nil
}

// load returns the staged state of a path, reading it on first use.
func (p *patcher) load(name string) (string, *stagedFile, error) {
	if p.strip {
		if i := strings.IndexByte(name, '/'); i > 0 && (name[:i] == "a" || name[:i] == "b") {
			name = name[i+1:]
		}
	}
	abs, err := p.env.Resolve(name, true)
	if err != nil {
		return "", nil, err
	}
	if st, ok := p.files[abs]; ok {
		return abs, st, nil
	}
	cur, err := loadText(p.env, abs, displayPath(p.env, abs))
	if err != nil {
		return "", nil, err
	}
	st := &stagedFile{orig: cur, cur: cur}
	p.files[abs] = st
	p.order = append(p.order, abs)
	return abs, st, nil
}

func (p *patcher) applyFile(ctx context.Context, f *gitdiff.File) error {
	if f.IsBinary {
		return fmt.Errorf("%s: binary patches are not supported", firstNonEmptyName(f.NewName, f.OldName))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case f.IsNew:
		abs, st, err := p.load(f.NewName)
		if err != nil {
			return err
		}
		show := displayPath(p.env, abs)
		if st.cur.exists && st.cur.content != "" {
			return fmt.Errorf("%s: the patch creates it but it already exists; diff against its current content instead", show)
		}
		content, err := p.applyFragments(ctx, show, "", f.TextFragments)
		if err != nil {
			return err
		}
		mode := newFileMode
		if f.NewMode&0o111 != 0 {
			mode = 0o755
		}
		st.cur = textFile{content: content, exists: true, mode: mode}
	case f.IsDelete:
		abs, st, err := p.load(f.OldName)
		if err != nil {
			return err
		}
		show := displayPath(p.env, abs)
		if !st.cur.exists {
			return fmt.Errorf("%s: the patch deletes it but it does not exist", show)
		}
		if len(f.TextFragments) > 0 {
			rest, err := p.applyFragments(ctx, show, st.cur.content, f.TextFragments)
			if err != nil {
				return err
			}
			if rest != "" {
				return fmt.Errorf("%s: the deletion does not cover the whole file (%d lines would remain); include every line or use bash rm", show, countLines(rest))
			}
		}
		st.cur = textFile{mode: st.cur.mode}
	default:
		if f.OldName == "" && f.NewName == "" {
			return errors.New("a file section has no file name")
		}
		src := firstNonEmptyName(f.OldName, f.NewName)
		abs, st, err := p.load(src)
		if err != nil {
			return err
		}
		show := displayPath(p.env, abs)
		if !st.cur.exists {
			return fmt.Errorf("%s does not exist; to create a file use '--- /dev/null' as the old name", show)
		}
		content, err := p.applyFragments(ctx, show, st.cur.content, f.TextFragments)
		if err != nil {
			return err
		}
		target := st
		if (f.IsRename || f.IsCopy) && f.NewName != "" && f.NewName != src {
			dabs, dst, err := p.load(f.NewName)
			if err != nil {
				return err
			}
			if dabs != abs {
				if dst.cur.exists {
					return fmt.Errorf("%s: the patch renames or copies onto it but it already exists", displayPath(p.env, dabs))
				}
				if f.IsRename {
					st.cur = textFile{mode: st.cur.mode}
				}
				target = dst
				target.cur.mode = st.orig.mode
			}
		}
		target.cur = textFile{content: content, exists: true, mode: target.cur.mode}
	}
	return nil
}

func firstNonEmptyName(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// applyFragments applies hunks in order like GNU patch: each hunk is looked
// for at its stated line shifted by the offset of the previous hunk, then
// progressively further away; context must match exactly, or failing that
// up to trailing whitespace.
func (p *patcher) applyFragments(ctx context.Context, show, content string, frags []*gitdiff.TextFragment) (string, error) {
	lines := splitLines(content)
	crlf := usesCRLF(content)
	out := make([]string, 0, len(lines)+16)
	cursor, delta := 0, 0
	for k, fr := range frags {
		var want []string
		for _, l := range fr.Lines {
			if l.Old() {
				want = append(want, l.Line)
			}
		}
		header := fmt.Sprintf("@@ -%d,%d +%d,%d @@", fr.OldPosition, fr.OldLines, fr.NewPosition, fr.NewLines)
		stated := int(fr.OldPosition) - 1
		if len(want) == 0 {
			// A pure insertion goes after line OldPosition; nothing to search for.
			stated = int(fr.OldPosition)
		}
		pos, loose := stated+delta, false
		if len(want) == 0 {
			pos = max(cursor, min(pos, len(lines)))
		} else {
			pos, loose = findBlock(lines, want, pos, cursor)
			if pos < 0 {
				return "", p.hunkError(ctx, show, k+1, header, lines, want, stated+delta)
			}
		}
		if off := pos - stated; off != delta {
			p.notes = append(p.notes, fmt.Sprintf("%s: hunk #%d applied at line %d (offset %+d)", show, k+1, pos+1, off))
			delta = off
		}
		if loose {
			p.notes = append(p.notes, fmt.Sprintf("%s: hunk #%d matched only after ignoring trailing whitespace", show, k+1))
		}
		out = append(out, lines[cursor:pos]...)
		at := pos
		for _, l := range fr.Lines {
			switch l.Op {
			case gitdiff.OpContext:
				// Keep the file's own line: it may differ in trailing space.
				out = append(out, lines[at])
				at++
			case gitdiff.OpDelete:
				at++
			case gitdiff.OpAdd:
				s := l.Line
				if crlf && strings.HasSuffix(s, "\n") && !strings.HasSuffix(s, "\r\n") {
					s = s[:len(s)-1] + "\r\n"
				}
				out = append(out, s)
			}
		}
		cursor = at
	}
	out = append(out, lines[cursor:]...)
	eol := "\n"
	if crlf {
		eol = "\r\n"
	}
	var b strings.Builder
	for i, l := range out {
		b.WriteString(l)
		// A line that lost its newline (the old last line) may now be
		// followed by more text.
		if i < len(out)-1 && !strings.HasSuffix(l, "\n") {
			b.WriteString(eol)
		}
	}
	return b.String(), nil
}

// findBlock finds want in lines at or after from, starting at expected and
// moving outward. loose reports a match that needed whitespace tolerance.
func findBlock(lines, want []string, expected, from int) (pos int, loose bool) {
	last := len(lines) - len(want)
	if last < from {
		return -1, false
	}
	expected = min(max(from, expected), last)
	for _, eq := range []func(a, b string) bool{
		func(a, b string) bool { return a == b },
		func(a, b string) bool { return strings.TrimRight(a, " \t\r\n") == strings.TrimRight(b, " \t\r\n") },
	} {
		at := func(i int) bool {
			for j, w := range want {
				if !eq(lines[i+j], w) {
					return false
				}
			}
			return true
		}
		for d := 0; expected-d >= from || expected+d <= last; d++ {
			if i := expected - d; i >= from && at(i) {
				return i, loose
			}
			if i := expected + d; d > 0 && i <= last && at(i) {
				return i, loose
			}
		}
		loose = true
	}
	return -1, false
}

// hunkError explains a hunk that matched nowhere: where it was expected,
// what differs there or at the most similar place, so the model can fix
// the hunk rather than resend it unchanged.
func (p *patcher) hunkError(ctx context.Context, show string, n int, header string, lines, want []string, expected int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: hunk #%d (%s) does not apply: its context and removed lines were not found at or near line %d", show, n, header, expected+1)
	core := trimBlankEdges(want)
	if m, ok := closestLines(ctx, lines, want); ok && m.score >= 0.5 {
		for i := range core {
			if m.start+i >= m.end {
				// The hunk is longer than the file: the window stopped
				// at its end.
				fmt.Fprintf(&b, ".\nThe hunk expects %d lines there but the file has only %d", len(core), len(lines))
				break
			}
			if got := lines[m.start+i]; strings.TrimRight(got, "\r\n") != strings.TrimRight(core[i], "\r\n") {
				fmt.Fprintf(&b, ".\nClosest match is %s; line %d differs: the patch expects %q but the file has %q",
					lineRange(m.start+1, m.end, false), m.start+i+1, strings.TrimRight(core[i], "\n"), strings.TrimRight(got, "\n"))
				break
			}
		}
		b.WriteString(".\nFile lines there:\n")
		b.WriteString(numbered(lines[m.start:m.end], m.start+1))
		b.WriteString("Fix the hunk to match the file exactly (read_file shows the current text)")
	} else {
		b.WriteString("; no similar text exists in the file, so re-read it before patching")
	}
	return errors.New(b.String())
}

// hunkHeader matches a hunk header whose counts may be wrong or missing.
// It is compiled on first use, not by every start of the program.
var hunkHeader = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp {
	return regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$`)
}}

// bareHunkHeader matches a hunk header without line numbers.
var bareHunkHeader = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`^@@(?:\s*@@)?(\s.*)?$`) }}

// normalizePatch undoes common damage in model-written patches: Markdown
// code fences around the diff, a missing final newline, and hunk headers
// whose line counts do not match their bodies (recounted, as
// `git apply --recount` does).
func normalizePatch(s string) string {
	lines := splitLines(s)
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	if len(lines) > 0 && strings.HasPrefix(lines[0], "```") {
		lines = lines[1:]
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.HasPrefix(lines[i], "```") {
				lines = lines[:i]
				break
			}
			if strings.TrimSpace(lines[i]) != "" {
				break
			}
		}
	}
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		lines[n-1] += "\n"
	}
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		out = append(out, recountHeader(lines, i))
	}
	return strings.Join(out, "")
}

// recountHeader returns line i, with its counts corrected if it is a hunk
// header whose stated counts do not fit the body that follows.
func recountHeader(lines []string, i int) string {
	l := lines[i]
	m := hunkHeader.Get().FindStringSubmatch(strings.TrimRight(l, "\r\n"))
	if m == nil {
		// "@@ @@" or "@@" without line numbers: search from the top.
		if bare := bareHunkHeader.Get().FindStringSubmatch(strings.TrimRight(l, "\r\n")); bare != nil {
			m = []string{l, "1", "", "1", "", bare[1]}
		} else {
			return l
		}
	} else if bodyFits(lines[i+1:], atoiDefault(m[2], 1), atoiDefault(m[4], 1)) {
		return l
	}
	end := i + 1
	for end < len(lines) && isBodyLine(lines, end) {
		end++
	}
	for end > i+1 && isBlankLine(lines[end-1]) {
		end--
	}
	oldN, newN, changes := 0, 0, 0
	for _, b := range lines[i+1 : end] {
		switch {
		case isBlankLine(b) || b[0] == ' ':
			oldN++
			newN++
		case b[0] == '-':
			oldN++
			changes++
		case b[0] == '+':
			newN++
			changes++
		}
	}
	if changes == 0 {
		return l
	}
	return fmt.Sprintf("@@ -%s,%d +%s,%d @@%s\n", m[1], oldN, m[3], newN, m[5])
}

// bodyFits reports whether the stated counts consume valid hunk lines and
// the body does not go on past them. The "-- " line that ends a
// git format-patch mail is not a continuation.
func bodyFits(body []string, oldN, newN int) bool {
	for i, b := range body {
		if oldN <= 0 && newN <= 0 {
			if b == "-- \n" || strings.HasPrefix(b, "\\") {
				return oldN == 0 && newN == 0
			}
			return oldN == 0 && newN == 0 && !isBodyLine(body, i)
		}
		switch {
		case isBlankLine(b) || b[0] == ' ':
			oldN--
			newN--
		case b[0] == '-':
			oldN--
		case b[0] == '+':
			newN--
		case b[0] == '\\':
		default:
			return false
		}
	}
	return oldN == 0 && newN == 0
}

// isBodyLine reports whether lines[i] continues a hunk body.
func isBodyLine(lines []string, i int) bool {
	b := lines[i]
	switch {
	case isBlankLine(b):
		return true
	case strings.HasPrefix(b, "@@"), strings.HasPrefix(b, "diff "):
		return false
	case strings.HasPrefix(b, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
		return false
	}
	switch b[0] {
	case ' ', '-', '+', '\\':
		return true
	}
	return false
}

func isBlankLine(s string) bool { return s == "\n" || s == "\r\n" }

func atoiDefault(s string, def int) int {
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

// sectionPrefixes reports, for each file section of the patch in order,
// whether it is a plain (non-git) diff naming its files a/... and b/...,
// whose names must then be stripped like git does (-p1). go-gitdiff strips
// git sections itself but takes plain names literally.
func sectionPrefixes(text string) []bool {
	lines := splitLines(text)
	var out []bool
	inGit := false // a git section whose ---/+++ pair is still to come
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "diff --git ") {
			out = append(out, false)
			inGit = true
			continue
		}
		if !strings.HasPrefix(l, "--- ") || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "+++ ") {
			continue
		}
		if inGit {
			inGit = false
			i++
			continue
		}
		if i+2 >= len(lines) || !strings.HasPrefix(lines[i+2], "@@ -") {
			continue
		}
		oldName, newName := headerName(l), headerName(lines[i+1])
		ok := func(name, prefix string) bool { return name == "/dev/null" || strings.HasPrefix(name, prefix) }
		out = append(out, ok(oldName, "a/") && ok(newName, "b/") && oldName != newName)
		i++
	}
	return out
}

// headerName extracts the file name from a ---/+++ line, without the
// timestamp diff -u appends after a tab.
func headerName(l string) string {
	name := strings.TrimRight(l[4:], "\r\n")
	if i := strings.IndexByte(name, '\t'); i >= 0 {
		name = name[:i]
	}
	return strings.Trim(name, `"`)
}

func (t patchTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	plan, err := t.plan(ctx, env, raw)
	if err != nil {
		return tools.Result{}, err
	}
	if err := commitChanges(ctx, env, plan.changes); err != nil {
		return tools.Result{}, err
	}
	var b strings.Builder
	totalAdd, totalDel := 0, 0
	fmt.Fprintf(&b, "patched %d file(s):\n", len(plan.changes))
	for _, c := range plan.changes {
		add, del := c.counts()
		totalAdd += add
		totalDel += del
		verb := map[string]string{"create": "created", "delete": "deleted"}[c.operation()]
		if verb == "" {
			verb = "updated"
		}
		fmt.Fprintf(&b, "  %s %s (+%d -%d)\n", verb, c.display, add, del)
	}
	for _, n := range plan.notes {
		b.WriteString("note: " + n + "\n")
	}
	summary := fmt.Sprintf("patched %d file(s) (+%d -%d)", len(plan.changes), totalAdd, totalDel)
	return tools.Result{Content: tools.Truncate(b.String(), env.Limit()), Summary: summary, Diff: resultDiff(plan.changes...)}, nil
}

// Preview shows, per file, the diff the patch would really make: hunks at
// the lines where they would land, not where the model said they were.
func (t patchTool) Preview(ctx context.Context, env *tools.Env, raw json.RawMessage) ([]tools.Preview, error) {
	plan, err := t.plan(ctx, env, raw)
	if err != nil {
		return nil, err
	}
	out := make([]tools.Preview, 0, len(plan.changes))
	for _, c := range plan.changes {
		out = append(out, c.preview())
	}
	return out, nil
}
