package builtin

import (
	"bytes"
	"errors"
	"io"
	"strconv"
)

// Output modes of grep.
const (
	modeFiles   = "files_with_matches"
	modeContent = "content"
	modeCount   = "count"
)

const (
	// binarySniff is how much of a file is checked for a NUL byte.
	binarySniff = 8 << 10
	// maxSearchSize skips files larger than this: generated blobs and
	// datasets, never what a coding agent wants to grep.
	maxSearchSize = 32 << 20
)

var errTooBig = errors.New("file too large")

// fileResult is what one file contributed to a grep.
type fileResult struct {
	path  string
	count int    // matching lines
	block []byte // formatted content lines (content mode)
}

// searchSpec is a compiled grep request.
type searchSpec struct {
	m             *matcher
	mode          string
	before, after int
}

// readWhole reads the regular file at path into buf, growing it; files
// over max return errTooBig. As read_file, it refuses a file with more
// than one name, which may be a file outside the workspace (openRegular).
func readWhole(path string, buf []byte, max int) ([]byte, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return buf, err
	}
	defer f.Close()
	buf = buf[:cap(buf)]
	n := 0
	for {
		if n == len(buf) {
			if n > max {
				return buf[:0], errTooBig
			}
			nb := make([]byte, 2*len(buf)+4096)
			copy(nb, buf[:n])
			buf = nb
		}
		k, err := f.Read(buf[n:])
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			return buf[:0], err
		}
	}
	if n > max {
		return buf[:0], errTooBig
	}
	return buf[:n], nil
}

func isBinary(buf []byte) bool {
	return bytes.IndexByte(buf[:min(len(buf), binarySniff)], 0) >= 0
}

// search runs the spec over one file's contents.
func (sp *searchSpec) search(buf []byte, path string) fileResult {
	r := fileResult{path: path}
	if sp.mode == modeContent {
		e := emitter{buf: buf, path: path, before: sp.before, after: sp.after, lineNo: 1}
		sp.eachMatch(buf, func(ls, le int) bool {
			e.match(ls, le)
			return true
		})
		e.finish()
		r.count, r.block = e.count, e.out
		return r
	}
	sp.eachMatch(buf, func(ls, le int) bool {
		if sp.m.multiline {
			r.count += bytes.Count(buf[ls:le], []byte{'\n'}) + 1
		} else {
			r.count++
		}
		return sp.mode != modeFiles
	})
	return r
}

// eachMatch calls f with the bounds of every run of matching lines: one line
// in line mode, all lines a match touches in multiline mode. Runs never
// overlap and come in order; f returns false to stop.
func (sp *searchSpec) eachMatch(buf []byte, f func(ls, le int) bool) {
	m := sp.m
	if !m.multiline {
		for pos := 0; ; {
			ls, le, ok := m.nextLine(buf, pos)
			if !ok || !f(ls, le) {
				return
			}
			pos = le + 1
		}
	}
	done := 0 // first byte not yet reported
	for pos := 0; pos <= len(buf); {
		s, e, ok := m.nextSpan(buf, pos)
		if !ok {
			return
		}
		last := e
		if e > s {
			last = e - 1
		}
		ls, le := lineStart(buf, s), lineEnd(buf, last)
		if le >= done {
			// Lines already reported by an earlier match are not repeated.
			if !f(max(ls, done), le) {
				return
			}
			done = le + 1
		}
		if e > s {
			pos = e
		} else {
			pos = e + 1
		}
	}
}

// emitter formats content-mode output for one file: "path:N:text" for
// matching lines, "path-N-text" for context lines, "--" between groups
// that are not adjacent.
type emitter struct {
	buf           []byte
	path          string
	before, after int
	out           []byte
	count         int

	lineNo, linePos int // line number of the line starting at linePos
	last            int // last printed line number, 0 for none
	lastEnd         int // byte offset just past the last printed line
	afterLeft       int
}

func (e *emitter) numberAt(ls int) int {
	e.lineNo += bytes.Count(e.buf[e.linePos:ls], []byte{'\n'})
	e.linePos = ls
	return e.lineNo
}

func (e *emitter) line(n int, sep byte, ls, le int) {
	if (e.before > 0 || e.after > 0) && e.last > 0 && n != e.last+1 {
		e.out = append(e.out, "--\n"...)
	}
	e.out = append(e.out, e.path...)
	e.out = append(e.out, sep)
	e.out = strconv.AppendInt(e.out, int64(n), 10)
	e.out = append(e.out, sep)
	e.out = append(e.out, e.buf[ls:le]...)
	e.out = append(e.out, '\n')
	e.last, e.lastEnd = n, le+1
}

// flushAfter prints pending after-context lines that come before line stop.
func (e *emitter) flushAfter(stop int) {
	for e.afterLeft > 0 && e.last > 0 && e.last+1 < stop && e.lastEnd < len(e.buf) {
		ls := e.lastEnd
		e.line(e.last+1, '-', ls, lineEnd(e.buf, ls))
		e.afterLeft--
	}
}

func (e *emitter) match(ls, le int) {
	n := e.numberAt(ls)
	e.flushAfter(n)
	if e.before > 0 {
		from := max(e.last+1, n-e.before)
		var starts []int
		for k, p := n-1, ls; k >= from && p > 0; k-- {
			p = lineStart(e.buf, p-1)
			starts = append(starts, p)
		}
		for i := len(starts) - 1; i >= 0; i-- {
			s := starts[i]
			e.line(n-1-i, '-', s, lineEnd(e.buf, s))
		}
	}
	for p, k := ls, n; p <= le; k++ {
		end := lineEnd(e.buf, p)
		if k > e.last {
			e.line(k, ':', p, end)
			e.count++
		}
		p = end + 1
	}
	e.afterLeft = e.after
}

func (e *emitter) finish() {
	e.flushAfter(int(^uint(0) >> 1))
}
