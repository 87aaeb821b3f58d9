package builtin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
)

// rgSearch answers req with ripgrep when it is installed and the request is
// one where ripgrep provably gives the native answer; ok is false otherwise
// and the caller searches natively. Ripgrep is told to ignore exactly what
// the native walker ignores, to read everything as raw bytes, and to search
// binary files, which are then dropped by the native NUL test; the pattern
// is re-spelled from the parsed RE2 tree so Rust's regex engine sees the
// same character sets Go does.
func rgSearch(ctx context.Context, req *grepRequest) ([]fileResult, bool) {
	if req.isFile || req.spec.m.multiline || req.glob != "" {
		return nil, false
	}
	if strings.HasPrefix(req.startRel, "..") {
		return nil, false
	}
	pat, ok := rustPattern(req.spec.m.tree)
	if !ok || len(pat) > 32<<10 {
		return nil, false
	}
	if req.startRel != "" && parentHasIgnore(req.root) {
		return nil, false
	}
	bin, err := exec.LookPath("rg")
	if err != nil {
		return nil, false
	}
	args := []string{"--no-config", "--null", "--no-heading", "--with-filename", "--color", "never",
		"--hidden", "-g", "!.git", "-g", "!node_modules",
		"--no-ignore-global", "--no-ignore-exclude", "--no-ignore-dot", "--no-require-git",
		"--text", "--encoding", "none", "--path-separator", "/",
		"--max-filesize", strconv.Itoa(maxSearchSize)}
	if req.startRel == "" {
		// The native walk reads no ignore file above the workspace root.
		args = append(args, "--no-ignore-parent")
	}
	for _, g := range req.typeGlobs {
		args = append(args, "--type-add", "reasonix:"+g)
	}
	if len(req.typeGlobs) > 0 {
		args = append(args, "-t", "reasonix")
	}
	switch req.spec.mode {
	case modeFiles:
		args = append(args, "-l")
	case modeCount:
		args = append(args, "-c")
	case modeContent:
		args = append(args, "-n", "-B", strconv.Itoa(req.spec.before), "-A", strconv.Itoa(req.spec.after))
	}
	target := "."
	if req.startRel != "" {
		target = filepath.FromSlash(req.startRel)
	}
	args = append(args, "-e", pat, "--", target)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, args...)
	cmd.Dir = req.root
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false
	}
	if err := cmd.Start(); err != nil {
		return nil, false
	}
	// Ripgrep's output comes in no fixed order, so a cut-off prefix is not
	// the native answer's prefix. Past the cap it is killed and the native
	// search, which stops at the same cap in path order, answers instead.
	var stdout bytes.Buffer
	over := false
	if req.maxBytes > 0 {
		_, _ = io.Copy(&stdout, io.LimitReader(pipe, int64(req.maxBytes)+1))
		over = stdout.Len() > req.maxBytes
	} else {
		_, _ = io.Copy(&stdout, pipe)
	}
	if over {
		cancel()
	}
	err = cmd.Wait()
	if over || ctx.Err() != nil {
		return nil, false
	}
	if err != nil {
		// Exit status 1 means no match; anything else (a bad pattern, an
		// unreadable file) is left to the native search to report or skip.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return nil, false
		}
	}
	res, err := parseRg(stdout.Bytes(), req)
	if err != nil {
		return nil, false
	}
	return res, true
}

// parentHasIgnore reports whether a directory above root holds a .gitignore:
// ripgrep would honour it when searching a subdirectory and the native
// walker would not.
func parentHasIgnore(root string) bool {
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".gitignore")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// parseRg turns ripgrep's --null output into per-file results in native
// format and order, dropping files the native NUL test calls binary.
func parseRg(out []byte, req *grepRequest) ([]fileResult, error) {
	var results []fileResult
	idx := map[string]int{}
	last := map[string]int{}
	sep := req.spec.before > 0 || req.spec.after > 0
	get := func(p string) *fileResult {
		i, ok := idx[p]
		if !ok {
			i = len(results)
			idx[p] = i
			results = append(results, fileResult{path: p})
		}
		return &results[i]
	}
	if req.spec.mode == modeFiles {
		for _, p := range strings.Split(string(out), "\x00") {
			if p != "" {
				get(cleanRgPath(p)).count = 1
			}
		}
	} else {
		for len(out) > 0 {
			nl := bytes.IndexByte(out, '\n')
			if nl < 0 {
				nl = len(out)
			}
			line := out[:nl]
			out = out[min(nl+1, len(out)):]
			z := bytes.IndexByte(line, 0)
			if z < 0 {
				if string(line) == "--" {
					continue
				}
				return nil, fmt.Errorf("unexpected ripgrep line %q", line)
			}
			p := cleanRgPath(string(line[:z]))
			rest := line[z+1:]
			if req.spec.mode == modeCount {
				n, err := strconv.Atoi(string(rest))
				if err != nil {
					return nil, err
				}
				get(p).count = n
				continue
			}
			j := 0
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			if j == 0 || j == len(rest) || (rest[j] != ':' && rest[j] != '-') {
				return nil, fmt.Errorf("unexpected ripgrep line %q", line)
			}
			n, _ := strconv.Atoi(string(rest[:j]))
			fr := get(p)
			if sep && last[p] > 0 && n != last[p]+1 {
				fr.block = append(fr.block, "--\n"...)
			}
			last[p] = n
			fr.block = append(fr.block, p...)
			fr.block = append(fr.block, rest[j])
			fr.block = append(fr.block, rest[:j]...)
			fr.block = append(fr.block, rest[j])
			fr.block = append(fr.block, rest[j+1:]...)
			fr.block = append(fr.block, '\n')
			if rest[j] == ':' {
				fr.count++
			}
		}
	}
	kept := results[:0]
	for _, fr := range results {
		if !sniffBinary(filepath.Join(req.root, filepath.FromSlash(fr.path))) {
			kept = append(kept, fr)
		}
	}
	sortResults(kept)
	return kept, nil
}

func cleanRgPath(p string) string { return strings.TrimPrefix(p, "./") }

func sniffBinary(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	var b [binarySniff]byte
	n, _ := f.Read(b[:])
	return isBinary(b[:n])
}

// rustPattern spells an RE2 tree in Rust regex syntax with the same meaning.
// It refuses constructs that could match an invalid UTF-8 byte: Go reads such
// a byte as U+FFFD and Rust never matches it, so the engines would disagree.
func rustPattern(re *syntax.Regexp) (string, bool) {
	var b strings.Builder
	if !writeRust(&b, re) {
		return "", false
	}
	return b.String(), true
}

func writeRust(b *strings.Builder, re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch:
		b.WriteString("(?:)")
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString("(?i:")
		}
		for _, r := range re.Rune {
			writeRustRune(b, r)
		}
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString(")")
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return false
		}
		b.WriteString("[")
		for i := 0; i < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= unicode.ReplacementChar && unicode.ReplacementChar <= hi {
				return false
			}
			writeRustRune(b, lo)
			if hi != lo {
				b.WriteString("-")
				writeRustRune(b, hi)
			}
		}
		b.WriteString("]")
	case syntax.OpBeginLine:
		b.WriteString("(?m:^)")
	case syntax.OpEndLine:
		b.WriteString("(?m:$)")
	case syntax.OpWordBoundary:
		b.WriteString(`(?-u:\b)`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`(?-u:\B)`)
	case syntax.OpCapture:
		return writeRustGroup(b, re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		if !writeRustGroup(b, re.Sub[0]) {
			return false
		}
		switch re.Op {
		case syntax.OpStar:
			b.WriteString("*")
		case syntax.OpPlus:
			b.WriteString("+")
		case syntax.OpQuest:
			b.WriteString("?")
		default:
			if re.Max < 0 {
				fmt.Fprintf(b, "{%d,}", re.Min)
			} else {
				fmt.Fprintf(b, "{%d,%d}", re.Min, re.Max)
			}
		}
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteString("?")
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !writeRustGroup(b, s) {
				return false
			}
		}
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for i, s := range re.Sub {
			if i > 0 {
				b.WriteString("|")
			}
			if !writeRust(b, s) {
				return false
			}
		}
		b.WriteString(")")
	default:
		// Any-char (matches U+FFFD), text anchors, no-match.
		return false
	}
	return true
}

func writeRustGroup(b *strings.Builder, re *syntax.Regexp) bool {
	b.WriteString("(?:")
	ok := writeRust(b, re)
	b.WriteString(")")
	return ok
}

func writeRustRune(b *strings.Builder, r rune) {
	if r < 0x80 && (r == '_' || r == ' ' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
		b.WriteRune(r)
		return
	}
	fmt.Fprintf(b, `\x{%X}`, r)
}
