package repair

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/reasonix/reasonix/internal/lazy"
)

// Call is a tool call recovered from text.
type Call struct {
	Name      string
	Arguments string // a compact JSON object
}

// Accept decides whether a recovered call is kept: it must name a real
// tool and its arguments must validate against that tool's schema.
type Accept func(name, args string) bool

// span is a recovered call and where its markup sits in the text.
type span struct {
	start, end int
	calls      []Call
}

// DeepSeek's markup (DSML) wraps calls in a function_calls block (V3.2) or
// a tool_calls block (V4); the bars are fullwidth (｜) or, in some
// outputs, ASCII. Each invoke carries either parameter tags, whose
// string="true" values are raw text and the rest JSON, or one JSON object.
// Hermes-style models (Qwen and others) write <tool_call>{json}</tool_call>.
var patterns = lazy.Value[*struct {
	dsmlBlock, invoke, param, toolCall, fence *regexp.Regexp
}]{Build: func() *struct {
	dsmlBlock, invoke, param, toolCall, fence *regexp.Regexp
} {
	const bar = `(?:｜|\|)`
	return &struct {
		dsmlBlock, invoke, param, toolCall, fence *regexp.Regexp
	}{
		dsmlBlock: regexp.MustCompile(`(?s)<` + bar + `DSML` + bar + `(function_calls|tool_calls)>(.*?)(?:</` + bar + `DSML` + bar + `(?:function_calls|tool_calls)>|\z)`),
		invoke:    regexp.MustCompile(`(?s)<` + bar + `DSML` + bar + `invoke\s+name="([^"]+)"\s*>(.*?)(?:</` + bar + `DSML` + bar + `invoke>|\z)`),
		param:     regexp.MustCompile(`(?s)<` + bar + `DSML` + bar + `parameter\s+name="([^"]+)"(?:\s+string="(true|false)")?\s*>(.*?)</` + bar + `DSML` + bar + `parameter>`),
		toolCall:  regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*(?:</tool_call>|\z)`),
		fence:     regexp.MustCompile("(?s)```(?:json|JSON)?[ \\t]*\\n(.*?)\\n?[ \\t]*```"),
	}
}}

// markers start tool markup; the stream holds text back from the first
// one so the markup never reaches the screen (see Holdback).
var markers = []string{"<｜DSML｜", "<|DSML|", "<tool_call>"}

// Holdback returns how much of a streamed answer may be shown: all of it
// up to the first tool-markup marker, less a tail that could be the start
// of one. from is where to start looking (what was already found clear).
func Holdback(text string, from int) (show int, held bool) {
	from = max(0, min(from, len(text)))
	if i := strings.IndexByte(text[from:], '<'); i < 0 {
		return len(text), false
	} else {
		from += i
	}
	for i := from; i < len(text); i++ {
		if text[i] != '<' {
			continue
		}
		rest := text[i:]
		for _, m := range markers {
			if strings.HasPrefix(rest, m) {
				return i, true
			}
			if len(rest) < len(m) && strings.HasPrefix(m, rest) {
				return i, false // might become a marker
			}
		}
	}
	return len(text), false
}

// Scavenge finds the tool calls written into text rather than sent as
// tool calls: DSML blocks, <tool_call> blocks, fenced JSON and bare JSON
// objects shaped like a call ({"name": ..., "arguments": {...}}). Only
// calls accept keeps are returned, and only their markup is removed from
// the returned text; markup naming no real tool, or with arguments that
// do not validate, stays where it is.
func Scavenge(text string, accept Accept) ([]Call, string) {
	if text == "" {
		return nil, text
	}
	// Each pattern runs only on text holding its literal opener, so the
	// patterns compile only when one may match: most answers hold none,
	// and compiling them costs more than the rest of a turn's bookkeeping.
	var blocks, tagged, fenced [][]int
	if strings.Contains(text, "DSML") {
		blocks = patterns.Get().dsmlBlock.FindAllStringSubmatchIndex(text, -1)
	}
	if strings.Contains(text, "<tool_call>") {
		tagged = patterns.Get().toolCall.FindAllStringSubmatchIndex(text, -1)
	}
	if strings.Contains(text, "```") {
		fenced = patterns.Get().fence.FindAllStringSubmatchIndex(text, -1)
	}
	var spans []span
	taken := func(a, b int) bool {
		for _, s := range spans {
			if a < s.end && b > s.start {
				return true
			}
		}
		return false
	}
	for _, m := range blocks {
		calls := dsmlCalls(text[m[4]:m[5]], accept)
		if len(calls) > 0 {
			spans = append(spans, span{m[0], m[1], calls})
		}
	}
	for _, m := range tagged {
		if taken(m[0], m[1]) {
			continue
		}
		if calls := jsonCalls(text[m[2]:m[3]], accept); len(calls) > 0 {
			spans = append(spans, span{m[0], m[1], calls})
		}
	}
	for _, m := range fenced {
		if taken(m[0], m[1]) {
			continue
		}
		if calls := jsonCalls(text[m[2]:m[3]], accept); len(calls) > 0 {
			spans = append(spans, span{m[0], m[1], calls})
		}
	}
	// Bare objects: every '{' that opens a call-shaped object.
	for i := 0; i < len(text); i++ {
		if text[i] != '{' || taken(i, i+1) || !callLike(text[i:min(len(text), i+200)]) {
			continue
		}
		end, ok := objectEnd(text, i)
		if !ok {
			continue
		}
		if calls := jsonCalls(text[i:end], accept); len(calls) > 0 {
			spans = append(spans, span{i, end, calls})
			i = end - 1
		}
	}
	if len(spans) == 0 {
		return nil, text
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].start < spans[b].start })
	var calls []Call
	var b strings.Builder
	last := 0
	seen := map[Call]bool{}
	for _, s := range spans {
		b.WriteString(text[last:s.start])
		last = s.end
		for _, c := range s.calls {
			if !seen[c] {
				seen[c] = true
				calls = append(calls, c)
			}
		}
	}
	b.WriteString(text[last:])
	return calls, tidy(b.String())
}

// tidy trims what removing markup leaves behind: surrounding space and
// runs of blank lines.
func tidy(s string) string {
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return strings.TrimSpace(s)
}

// dsmlCalls reads the invoke elements of one DSML block.
func dsmlCalls(block string, accept Accept) []Call {
	p := patterns.Get()
	var out []Call
	for _, inv := range p.invoke.FindAllStringSubmatch(block, -1) {
		name, body := inv[1], inv[2]
		var args string
		if params := p.param.FindAllStringSubmatch(body, -1); len(params) > 0 {
			obj := map[string]json.RawMessage{}
			for _, pm := range params {
				val := pm[3]
				if pm[2] == "true" {
					b, _ := json.Marshal(val)
					obj[pm[1]] = b
					continue
				}
				trimmed := strings.TrimSpace(val)
				if json.Valid([]byte(trimmed)) && trimmed != "" {
					obj[pm[1]] = json.RawMessage(trimmed)
				} else {
					b, _ := json.Marshal(val)
					obj[pm[1]] = b
				}
			}
			b, err := json.Marshal(obj)
			if err != nil {
				continue
			}
			args = string(b)
		} else {
			body = strings.TrimSpace(body)
			if body == "" {
				body = "{}"
			}
			if !json.Valid([]byte(body)) {
				if fixed, ok := CloseJSON(body); ok {
					body = fixed
				} else {
					continue
				}
			}
			args = compact(body)
		}
		if args != "" && accept(name, args) {
			out = append(out, Call{Name: name, Arguments: args})
		}
	}
	return out
}

// callShape is a JSON call as models write it outside tool_calls: flat
// ({"name", "arguments"|"parameters"}) or OpenAI-shaped ({"function":
// {"name", "arguments"}}); arguments may be an object or a JSON string.
type callShape struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
	Function   *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// jsonCalls reads one call object, or an array of them.
func jsonCalls(s string, accept Accept) []Call {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var shapes []callShape
	switch s[0] {
	case '[':
		if json.Unmarshal([]byte(s), &shapes) != nil {
			return nil
		}
	case '{':
		var one callShape
		if json.Unmarshal([]byte(s), &one) != nil {
			return nil
		}
		shapes = []callShape{one}
	default:
		return nil
	}
	var out []Call
	for _, sh := range shapes {
		name, args := sh.Name, sh.Arguments
		if len(args) == 0 {
			args = sh.Parameters
		}
		if sh.Function != nil && name == "" {
			name, args = sh.Function.Name, sh.Function.Arguments
		}
		if name == "" || len(args) == 0 {
			return nil // not every element is a call: not a call list
		}
		a := strings.TrimSpace(string(args))
		if strings.HasPrefix(a, `"`) {
			var inner string
			if json.Unmarshal(args, &inner) != nil {
				return nil
			}
			a = strings.TrimSpace(inner)
		}
		if !strings.HasPrefix(a, "{") || !json.Valid([]byte(a)) {
			return nil
		}
		a = compact(a)
		if !accept(name, a) {
			return nil
		}
		out = append(out, Call{Name: name, Arguments: a})
	}
	return out
}

// callLike is a cheap test before decoding: a call object names itself
// near its start.
func callLike(head string) bool {
	return strings.Contains(head, `"name"`) || strings.Contains(head, `"function"`)
}

// objectEnd returns the end of the JSON object starting at s[i].
func objectEnd(s string, i int) (int, bool) {
	dec := json.NewDecoder(strings.NewReader(s[i:]))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil {
		return 0, false
	}
	return i + int(dec.InputOffset()), true
}

func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}
