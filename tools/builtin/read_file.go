package builtin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reasonix/reasonix/tools"
)

const (
	readDefaultLimit = 2000
	readMaxLineBytes = 2000
)

// readFileTool shows a text file with line numbers, a page at a time.
type readFileTool struct{}

func (readFileTool) Name() string   { return "read_file" }
func (readFileTool) ReadOnly() bool { return true }
func (readFileTool) Description() string {
	return "Read a text file: each line as its number (from 1), a tab, the text. Up to limit (default 2000) lines from offset (1-based); " +
		"page through large files with both. Lines over 2000 chars are cut; binary files are described. For directories use ls."
}

// Schema is readFileSchema (schemas_gen.go), generated from readArgs; see
// schema_test.go.
func (readFileTool) Schema() json.RawMessage { return json.RawMessage(readFileSchema) }

type readArgs struct {
	pathArg
	Offset tools.Int `json:"offset,omitempty"`
	Limit  tools.Int `json:"limit,omitempty"`
}

func (readFileTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a readArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Result{}, err
	}
	p, err := a.get()
	if err != nil {
		return tools.Result{}, err
	}
	abs, err := env.Resolve(p, false)
	if err != nil {
		return tools.Result{}, err
	}
	display := displayPath(env, abs)
	offset, limit := int(a.Offset), int(a.Limit)
	if offset < 0 || limit < 0 {
		return tools.Result{}, errors.New("offset and limit must be positive")
	}
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = readDefaultLimit
	}

	info, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return tools.Result{}, fmt.Errorf("file not found: %s%s", display, suggestSiblings(abs))
		}
		return tools.Result{}, fmt.Errorf("cannot access %s: %w", display, err)
	}
	if info.IsDir() {
		return tools.Result{}, fmt.Errorf("%s is a directory; use ls to list it", display)
	}
	if !info.Mode().IsRegular() {
		// A FIFO or device could block or never end.
		return tools.Result{}, fmt.Errorf("%s is not a regular file (%v)", display, info.Mode().Type())
	}
	var src io.Reader
	if text, ok := editorText(env, abs); ok {
		// The editor's buffer, unsaved changes included.
		src = strings.NewReader(text)
	} else {
		// The stat above is for the messages; what is read is what
		// this open found, judged again (see openRegular).
		f, fi, err := openRegular(abs)
		if err != nil {
			return tools.Result{}, fmt.Errorf("cannot open %s: %w", display, err)
		}
		defer f.Close()
		info = fi
		src = f
	}

	br := bufio.NewReaderSize(src, 64<<10)
	head, _ := br.Peek(binarySniffLen)
	if looksBinary(head) {
		env.Reads.Add(abs)
		msg := describeBinary(display, info.Size(), head)
		return tools.Result{Content: msg, Summary: "read " + display + " (binary)"}, nil
	}

	page, err := readPage(ctx, br, offset, limit, env.Limit())
	if err != nil {
		return tools.Result{}, fmt.Errorf("read %s: %w", display, err)
	}
	env.Reads.Add(abs)

	switch {
	case page.total == 0:
		return tools.Result{Content: display + " is empty.", Summary: "read " + display + " (empty)"}, nil
	case offset > page.total:
		return tools.Result{}, fmt.Errorf("offset %d is past the end of %s, which has %d lines", offset, display, page.total)
	}
	var b strings.Builder
	b.WriteString(page.text)
	last := offset + page.shown - 1
	switch {
	case page.budgetHit:
		fmt.Fprintf(&b, "\n[output truncated to fit the output limit: showing lines %d-%d of %d; call read_file with offset=%d to continue]\n",
			offset, last, page.total, last+1)
	case last < page.total:
		fmt.Fprintf(&b, "\n[showing lines %d-%d of %d; call read_file with offset=%d to continue]\n", offset, last, page.total, last+1)
	}
	if page.cutLines > 0 {
		fmt.Fprintf(&b, "[%d long line(s) were cut at %d bytes]\n", page.cutLines, readMaxLineBytes)
	}
	return tools.Result{
		Content: tools.Truncate(b.String(), env.Limit()),
		Summary: fmt.Sprintf("read %s (lines %d-%d of %d)", display, offset, last, page.total),
	}, nil
}

type readPageResult struct {
	text      string
	shown     int
	total     int
	cutLines  int
	budgetHit bool
}

// readPage streams the file so huge files cost memory only for the lines
// shown, while still counting every line so the model knows how many remain.
func readPage(ctx context.Context, br *bufio.Reader, offset, limit, budget int) (readPageResult, error) {
	// Leave room for the footer that tells the model how to continue.
	budget -= 256
	var res readPageResult
	var b strings.Builder
	stop := false // the page is complete; only count from here on
	for lineNo := 1; ; lineNo++ {
		if lineNo%8192 == 0 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		want := !stop && lineNo >= offset
		line, size, eof, err := readLine(br, want)
		if err != nil {
			return res, err
		}
		if size == 0 && eof {
			break
		}
		res.total = lineNo
		if want {
			text := strings.TrimRight(line, "\r\n")
			n := size
			if !eof {
				n-- // the newline is not part of the line
			}
			if n > readMaxLineBytes {
				text = cutUTF8(text, readMaxLineBytes) + fmt.Sprintf("… [line cut: %d bytes total]", n)
				res.cutLines++
			}
			entry := fmt.Sprintf("%6d\t%s\n", lineNo, text)
			if b.Len()+len(entry) > budget && res.shown > 0 {
				res.budgetHit = true
				stop = true
			} else {
				b.WriteString(entry)
				res.shown++
				if res.shown == limit {
					stop = true
				}
			}
		}
		if eof {
			break
		}
	}
	res.text = b.String()
	return res, nil
}

// readLine reads one line, keeping at most a little more than
// readMaxLineBytes of it (nothing when keep is false) and reporting its
// full size, so a multi-megabyte minified line never lands in memory whole.
func readLine(br *bufio.Reader, keep bool) (line string, size int, eof bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		size += len(chunk)
		if keep && len(buf) < readMaxLineBytes+8 {
			n := min(len(chunk), readMaxLineBytes+8-len(buf))
			buf = append(buf, chunk[:n]...)
		}
		switch {
		case err == nil:
			return string(buf), size, false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return string(buf), size, true, nil
		default:
			return "", size, false, err
		}
	}
}

// suggestSiblings names files next to a missing path with a similar name,
// which catches wrong extensions and capitalisation.
func suggestSiblings(abs string) string {
	entries, err := readDirNoFollow(filepath.Dir(abs))
	if err != nil {
		return ""
	}
	base := strings.ToLower(filepath.Base(abs))
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	var hits []string
	for _, e := range entries {
		n := strings.ToLower(e.Name())
		if n == base || strings.TrimSuffix(n, filepath.Ext(n)) == stem || (len(stem) >= 3 && strings.Contains(n, stem)) {
			hits = append(hits, e.Name())
			if len(hits) == 5 {
				break
			}
		}
	}
	if len(hits) == 0 {
		return ""
	}
	return "; similar names in that directory: " + strings.Join(hits, ", ")
}
