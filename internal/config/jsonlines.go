package config

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSONLines maps the dotted path of every key and array element of a JSON
// document (permissions.deny[2], hooks.PreToolUse[0].hooks[1]) to the line
// it starts on, so errors can point into the file (the Claude Code settings
// files, whose allow rules project trust also reads). It walks the tokens
// once; a document that does not tokenise yields what was read so far.
func JSONLines(data []byte) map[string]int {
	out := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		path   string
		obj    bool
		key    string // object: the key whose value comes next
		wanted bool   // object: the next string is a key
		idx    int    // array: index of the next element
	}
	var stack []*frame
	line := func(off int64) int { return lineOf(data, off) }
	// child returns the path of the value about to start in the top frame.
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.obj {
			if f.path == "" {
				return f.key
			}
			return f.path + "." + f.key
		}
		return fmt.Sprintf("%s[%d]", f.path, f.idx)
	}
	// valueDone advances the top frame past one value.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		f := stack[len(stack)-1]
		if f.obj {
			f.wanted = true
		} else {
			f.idx++
		}
	}
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		// The token starts after any whitespace and separator following
		// the previous one; skip them to find its line.
		start := before
		for start < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,:"), data[start]) >= 0 {
			start++
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.wanted {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				valueDone()
				continue
			}
			top.key, top.wanted = fmt.Sprint(tok), false
			out[child()] = line(start)
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			p := child()
			if p != "" {
				if _, ok := out[p]; !ok {
					out[p] = line(start)
				}
			}
			stack = append(stack, &frame{path: p, obj: tok == json.Delim('{'), wanted: true})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			p := child()
			if _, ok := out[p]; !ok && p != "" {
				out[p] = line(start)
			}
			valueDone()
		}
	}
}
