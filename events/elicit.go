package events

import (
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// What a person did with an MCP server's request for input (the MCP
// elicitation actions): accept sends the values (form) or consents to
// opening the address (url); decline refuses explicitly; cancel
// dismisses the request without a choice.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// The two kinds of request for input: a form of fields the person fills
// in, or an address the person opens in a browser, where the server
// takes what it needs without it passing through Reasonix.
const (
	ElicitForm = "form"
	ElicitURL  = "url"
)

// Elicitation is an MCP server's request for input from a person, made
// during one of its tool calls (on ElicitationRequest) and, on
// ElicitationResolved, how it ended. Front ends answer it by ID through
// their engine's AnswerElicitation.
type Elicitation struct {
	ID string `json:"id"`
	// Server is the MCP server asking, by its configured name; every
	// front end shows it, so the person knows who will get the values.
	Server  string `json:"server"`
	Message string `json:"message"`
	// Mode is ElicitForm or ElicitURL.
	Mode string `json:"mode"`
	// URL is the address to open (ElicitURL only). Nothing opens it
	// without the person's accept.
	URL string `json:"url,omitempty"`
	// Fields are the form's fields (ElicitForm), required ones first,
	// then by name.
	Fields []ElicitField `json:"fields,omitempty"`
	// Error says why the previous answer to this request was refused,
	// when it is asked again.
	Error string `json:"error,omitempty"`
	// Action is set on ElicitationResolved: the answer taken, or empty
	// when the request was withdrawn (its tool call ended).
	Action string `json:"action,omitempty"`
}

// ElicitField is one field of a form: a string, number, integer or
// boolean, a pick among Options (a string field with options), or a
// multi-select ("array", whose values are some of Options).
type ElicitField struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Type is "string", "number", "integer", "boolean" or "array".
	Type string `json:"type"`
	// Format is "email", "uri", "date" or "date-time" (strings only).
	Format   string `json:"format,omitempty"`
	Required bool   `json:"required,omitempty"`
	// Default is the server's suggestion, which a form starts with;
	// nil when there is none.
	Default   any      `json:"default,omitempty"`
	MinLength *int     `json:"min_length,omitempty"`
	MaxLength *int     `json:"max_length,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
	Minimum   *float64 `json:"minimum,omitempty"`
	Maximum   *float64 `json:"maximum,omitempty"`
	MinItems  *int     `json:"min_items,omitempty"`
	MaxItems  *int     `json:"max_items,omitempty"`
	// Options are the values a pick or multi-select offers.
	Options []ElicitOption `json:"options,omitempty"`
}

// ElicitOption is one value a field offers; Title, when set, is what a
// person sees instead of the value.
type ElicitOption struct {
	Value string `json:"value"`
	Title string `json:"title,omitempty"`
}

// Label is what a person sees for the option.
func (o ElicitOption) Label() string {
	if o.Title != "" {
		return o.Title
	}
	return o.Value
}

// ElicitAnswer is a person's answer to an Elicitation: Action, and for
// an accepted form, the values by field name.
type ElicitAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Label is what a person sees for the field: its title, else its name.
func (f ElicitField) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// Multiple reports whether the field is a multi-select.
func (f ElicitField) Multiple() bool { return f.Type == "array" }

// Hint says in a few words what the field takes beyond its type, for a
// form's help line ("" when nothing is special).
func (f ElicitField) Hint() string {
	var parts []string
	switch f.Format {
	case "email":
		parts = append(parts, "an email address")
	case "uri":
		parts = append(parts, "an address such as https://example.com/")
	case "date":
		parts = append(parts, "a date, YYYY-MM-DD")
	case "date-time":
		parts = append(parts, "a date and time, YYYY-MM-DDThh:mm:ssZ")
	}
	switch f.Type {
	case "integer":
		parts = append(parts, "a whole number"+span(f.Minimum, f.Maximum))
	case "number":
		parts = append(parts, "a number"+span(f.Minimum, f.Maximum))
	case "array":
		switch {
		case f.MinItems != nil && f.MaxItems != nil:
			parts = append(parts, fmt.Sprintf("pick %d to %d", *f.MinItems, *f.MaxItems))
		case f.MinItems != nil:
			parts = append(parts, fmt.Sprintf("pick at least %d", *f.MinItems))
		case f.MaxItems != nil:
			parts = append(parts, fmt.Sprintf("pick at most %d", *f.MaxItems))
		}
	case "string":
		switch {
		case f.MinLength != nil && f.MaxLength != nil:
			parts = append(parts, fmt.Sprintf("%d to %d characters", *f.MinLength, *f.MaxLength))
		case f.MinLength != nil:
			parts = append(parts, fmt.Sprintf("at least %d characters", *f.MinLength))
		case f.MaxLength != nil:
			parts = append(parts, fmt.Sprintf("at most %d characters", *f.MaxLength))
		}
	}
	return strings.Join(parts, ", ")
}

func span(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return " from " + num(*lo) + " to " + num(*hi)
	case lo != nil:
		return " of at least " + num(*lo)
	case hi != nil:
		return " of at most " + num(*hi)
	}
	return ""
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Defaults are the server's defaults, by field name: what a form starts
// with.
func (e *Elicitation) Defaults() map[string]any {
	out := map[string]any{}
	for _, f := range e.Fields {
		if f.Default != nil {
			out[f.Name] = f.Default
		}
	}
	return out
}

// ElicitProblem is what is wrong with one field's value.
type ElicitProblem struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

// ElicitError lists what is wrong with an answer's values, field by
// field, so a form can show each problem at its field.
type ElicitError struct {
	Problems []ElicitProblem
}

func (e *ElicitError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Problem
	}
	return strings.Join(parts, "; ")
}

// Check validates a form's values against its fields, as the server's
// schema would, and returns them in the form they are sent in (numbers as
// float64, a multi-select as a list of strings). A value for a field the
// form does not have is refused, as is a required field left out or
// empty; a value of the wrong type, outside its bounds, not in its
// options or not of its format is refused with the reason. The error is
// an *ElicitError.
func (e *Elicitation) Check(content map[string]any) (map[string]any, error) {
	out := map[string]any{}
	var bad ElicitError
	known := map[string]bool{}
	for _, f := range e.Fields {
		known[f.Name] = true
		v, ok := content[f.Name]
		if ok && v == nil {
			ok = false
		}
		if ok && empty(v) && f.Required {
			ok = false
		}
		if !ok {
			if f.Required {
				bad.Problems = append(bad.Problems, ElicitProblem{f.Name, "is required"})
			}
			continue
		}
		val, problem := f.check(v)
		if problem != "" {
			bad.Problems = append(bad.Problems, ElicitProblem{f.Name, problem})
			continue
		}
		out[f.Name] = val
	}
	var unknown []string
	for k := range content {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		bad.Problems = append(bad.Problems, ElicitProblem{k, "the form has no such field"})
	}
	if len(bad.Problems) > 0 {
		return nil, &bad
	}
	return out, nil
}

// empty reports an empty string or list: no answer in a form.
func empty(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case []string:
		return len(x) == 0
	}
	return false
}

// check validates one value and returns it as sent, or the problem.
func (f ElicitField) check(v any) (any, string) {
	switch f.Type {
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, "must be true or false"
		}
		return b, ""
	case "number", "integer":
		n, ok := number(v)
		if !ok {
			return nil, "must be a number"
		}
		if f.Type == "integer" && n != math.Trunc(n) {
			return nil, "must be a whole number"
		}
		if f.Minimum != nil && n < *f.Minimum {
			return nil, "must be at least " + num(*f.Minimum)
		}
		if f.Maximum != nil && n > *f.Maximum {
			return nil, "must be at most " + num(*f.Maximum)
		}
		return n, ""
	case "array":
		return f.checkList(v)
	}
	s, ok := v.(string)
	if !ok {
		return nil, "must be text"
	}
	if len(f.Options) > 0 {
		if !f.offers(s) {
			return nil, fmt.Sprintf("%q is not one of its choices (%s)", s, f.values())
		}
		return s, ""
	}
	n := utf8.RuneCountInString(s)
	if f.MinLength != nil && n < *f.MinLength {
		return nil, fmt.Sprintf("must have at least %d characters", *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return nil, fmt.Sprintf("must have at most %d characters", *f.MaxLength)
	}
	if p := formatProblem(f.Format, s); p != "" {
		return nil, p
	}
	if f.Pattern != "" {
		// A pattern Go cannot compile (JSON Schema patterns are ECMA
		// regular expressions) is left to the server to check.
		if re, err := regexp.Compile(f.Pattern); err == nil && !re.MatchString(s) {
			return nil, "does not match the pattern " + f.Pattern
		}
	}
	return s, ""
}

func (f ElicitField) checkList(v any) (any, string) {
	var items []string
	switch x := v.(type) {
	case []string:
		items = x
	case []any:
		for _, it := range x {
			s, ok := it.(string)
			if !ok {
				return nil, "must be a list of its choices"
			}
			items = append(items, s)
		}
	default:
		return nil, "must be a list of its choices"
	}
	seen := map[string]bool{}
	out := make([]any, 0, len(items))
	for _, s := range items {
		if !f.offers(s) {
			return nil, fmt.Sprintf("%q is not one of its choices (%s)", s, f.values())
		}
		if seen[s] {
			return nil, fmt.Sprintf("%q is picked twice", s)
		}
		seen[s] = true
		out = append(out, s)
	}
	if f.MinItems != nil && len(out) < *f.MinItems {
		return nil, fmt.Sprintf("pick at least %d", *f.MinItems)
	}
	if f.MaxItems != nil && len(out) > *f.MaxItems {
		return nil, fmt.Sprintf("pick at most %d", *f.MaxItems)
	}
	return out, ""
}

func (f ElicitField) offers(s string) bool {
	for _, o := range f.Options {
		if o.Value == s {
			return true
		}
	}
	return false
}

func (f ElicitField) values() string {
	vs := make([]string, len(f.Options))
	for i, o := range f.Options {
		vs[i] = o.Value
	}
	return strings.Join(vs, ", ")
}

// number reads a JSON number or a Go one.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// formatProblem checks s against a string format of the MCP form schema.
func formatProblem(format, s string) string {
	switch format {
	case "email":
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s || a.Name != "" {
			return "must be an email address such as name@example.com"
		}
	case "uri":
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || strings.ContainsAny(s, " \t\n") {
			return "must be an absolute address such as https://example.com/"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return "must be a date as YYYY-MM-DD"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "must be a date and time as YYYY-MM-DDThh:mm:ssZ (or with an offset such as +08:00)"
		}
	}
	return ""
}
