package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/tools"
)

// ElicitRequest is a server's request for input on its way to a person
// (MCP elicitation): a form to fill in, or an address to open.
type ElicitRequest struct {
	// Session is the session whose tool call the server is serving, when
	// that is known (the server's calls in flight all belong to one
	// session); "" otherwise.
	Session string
	events.Elicitation
}

// Limits on what a server may put in one form: a form past them is
// declined with a notice, not shown cut.
const (
	maxFields   = 40
	maxOptions  = 200
	maxText     = 2000 // a message, title or description, in bytes
	maxReasks   = 5    // answers the schema refused before the request is cancelled
	maxURLSteps = 3    // URL steps one tool call's error may ask for
)

// elicit answers a server's elicitation/create (or an input request of
// its tool result) by asking Options.Elicit. A form answer is checked
// against the form's fields and then against the server's own schema,
// as the SDK will check it; a refused answer is asked again with the
// reason. A URL request is declined with a notice when no one can open
// an address (Options.ElicitURL unset), or when it is not a web address.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return s.ask(ctx, s.callSession(), req.Params)
}

func (s *server) ask(ctx context.Context, session string, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	decline := &sdk.ElicitResult{Action: events.ElicitDecline}
	if p == nil {
		return decline, nil
	}
	what := text.Clip(text.OneLine(p.Message), 200)
	e, schema, err := parseElicitation(s.cfg.Name, p)
	if err != nil {
		s.m.notify(fmt.Sprintf("MCP server %s asked for input (%s) that Reasonix cannot show (%v), so it declined", s.cfg.Name, what, err))
		return decline, nil
	}
	if e.Mode == events.ElicitURL && !s.m.opts.ElicitURL {
		s.m.notify(fmt.Sprintf("MCP server %s asked you to open %s (%s); no one here can open it, so Reasonix declined", s.cfg.Name, text.Clip(e.URL, 300), what))
		return decline, nil
	}
	for reasks := 0; ; reasks++ {
		ans, err := s.m.opts.Elicit(ctx, ElicitRequest{Session: session, Elicitation: e})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return &sdk.ElicitResult{Action: events.ElicitCancel}, nil
		}
		switch ans.Action {
		case events.ElicitAccept:
		case events.ElicitDecline:
			return decline, nil
		default:
			return &sdk.ElicitResult{Action: events.ElicitCancel}, nil
		}
		if e.Mode == events.ElicitURL {
			s.expectCompletion(p.ElicitationID, e.URL)
			return &sdk.ElicitResult{Action: events.ElicitAccept}, nil
		}
		content, err := e.Check(ans.Content)
		if err == nil {
			err = withholdSecrets(content, s.m.opts.Secrets)
		}
		if err == nil && schema != nil {
			if verr := schema.Validate(content); verr != nil {
				err = fmt.Errorf("the server's schema refuses the answer: %w", verr)
			}
		}
		if err == nil {
			return &sdk.ElicitResult{Action: events.ElicitAccept, Content: content}, nil
		}
		if reasks >= maxReasks {
			s.m.notify(fmt.Sprintf("MCP server %s: the answers to its request for input (%s) were refused %d times (%v); Reasonix cancelled it", s.cfg.Name, what, reasks+1, err))
			return &sdk.ElicitResult{Action: events.ElicitCancel}, nil
		}
		e.Error = err.Error()
	}
}

// urlRequired answers a tool call that failed with the server's
// URLElicitationRequired error: each address it names is put to the
// person as a URL request, and the model is told what came of it (the
// call is not retried: whether the step in the browser is done is the
// person's to say).
func (s *server) urlRequired(ctx context.Context, session, tool string, rpcErr *jsonrpc.Error) (string, error) {
	var data struct {
		Elicitations []*sdk.ElicitParams `json:"elicitations"`
	}
	if len(rpcErr.Data) > 0 {
		if err := json.Unmarshal(rpcErr.Data, &data); err != nil {
			return "", fmt.Errorf("MCP server %s: %s: its URL-required error does not parse: %w", s.cfg.Name, tool, err)
		}
	}
	var lines []string
	for i, p := range data.Elicitations {
		if i == maxURLSteps {
			lines = append(lines, fmt.Sprintf("(%d more steps were not asked about)", len(data.Elicitations)-i))
			break
		}
		if p == nil || p.URL == "" {
			continue
		}
		p.Mode = events.ElicitURL
		res, err := s.ask(ctx, session, p)
		if err != nil {
			return "", err
		}
		switch res.Action {
		case events.ElicitAccept:
			lines = append(lines, fmt.Sprintf("The person agreed to open %s (%s) in the browser.", p.URL, text.OneLine(p.Message)))
		default:
			how := "declined"
			if res.Action == events.ElicitCancel {
				how = "cancelled"
			}
			lines = append(lines, fmt.Sprintf("%s was not opened (%s: %s).", p.URL, how, text.OneLine(p.Message)))
		}
	}
	if len(lines) == 0 {
		return "", fmt.Errorf("MCP server %s: %s: %w", s.cfg.Name, tool, rpcErr)
	}
	return fmt.Sprintf("MCP server %s: %s needs a step done in the browser before it can run (%s).\n%s\nCall %s again once the person says the step is done.",
		s.cfg.Name, tool, text.OneLine(rpcErr.Message), strings.Join(lines, "\n"), tool), nil
}

// expectCompletion notes a URL request the person accepted, so the
// server's notice that it is done can be reported (and unknown ones
// ignored, as the protocol asks).
func (s *server) expectCompletion(id, addr string) {
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opened == nil {
		s.opened = map[string]string{}
	}
	if len(s.opened) < 100 {
		s.opened[id] = addr
	}
}

// elicitationComplete reports a server's notice that a step the person
// opened in the browser is done.
func (s *server) elicitationComplete(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
	if req == nil || req.Params == nil {
		return
	}
	s.mu.Lock()
	addr, ok := s.opened[req.Params.ElicitationID]
	delete(s.opened, req.Params.ElicitationID)
	s.mu.Unlock()
	if ok {
		s.m.notify(fmt.Sprintf("MCP server %s says the step at %s is done", s.cfg.Name, text.Clip(addr, 200)))
	}
}

// callSession is the session of the tool calls in flight on the server,
// when they all belong to one.
func (s *server) callSession() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) != 1 {
		return ""
	}
	for id := range s.calls {
		return id
	}
	return ""
}

// calling counts a call of session in flight until the returned function
// is called.
func (s *server) calling(session string) func() {
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[session]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.calls[session]--; s.calls[session] <= 0 {
			delete(s.calls, session)
		}
		s.mu.Unlock()
	}
}

// wireField is one property of a form schema as the MCP spec allows it.
type wireField struct {
	Type        string       `json:"type"`
	Title       string       `json:"title"`
	Description string       `json:"description"`
	Format      string       `json:"format"`
	Pattern     string       `json:"pattern"`
	MinLength   *int         `json:"minLength"`
	MaxLength   *int         `json:"maxLength"`
	Minimum     *float64     `json:"minimum"`
	Maximum     *float64     `json:"maximum"`
	MinItems    *int         `json:"minItems"`
	MaxItems    *int         `json:"maxItems"`
	Default     any          `json:"default"`
	Enum        []any        `json:"enum"`
	EnumNames   []string     `json:"enumNames"`
	OneOf       []wireChoice `json:"oneOf"`
	Items       *struct {
		Type  string       `json:"type"`
		Enum  []any        `json:"enum"`
		AnyOf []wireChoice `json:"anyOf"`
	} `json:"items"`
}

type wireChoice struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// parseElicitation reads a request into the form a front end shows, and
// resolves the server's schema for the final check of an answer (nil for
// a URL request or a form without a schema).
func parseElicitation(server string, p *sdk.ElicitParams) (events.Elicitation, *jsonschema.Resolved, error) {
	e := events.Elicitation{Server: server, Message: text.Clip(p.Message, maxText), Mode: events.ElicitForm}
	if p.Mode == events.ElicitURL {
		e.Mode = events.ElicitURL
		u, err := url.Parse(p.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return e, nil, fmt.Errorf("the address %q is not a web address", text.Clip(p.URL, 200))
		}
		e.URL = p.URL
		return e, nil, nil
	}
	if p.Mode != "" && p.Mode != events.ElicitForm {
		return e, nil, fmt.Errorf("unknown mode %q", p.Mode)
	}
	if p.RequestedSchema == nil {
		return e, nil, nil
	}
	b, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return e, nil, fmt.Errorf("schema: %w", err)
	}
	var wire struct {
		Properties map[string]wireField `json:"properties"`
		Required   []string             `json:"required"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return e, nil, fmt.Errorf("schema: %w", err)
	}
	if len(wire.Properties) > maxFields {
		return e, nil, fmt.Errorf("%d fields, more than %d", len(wire.Properties), maxFields)
	}
	var full jsonschema.Schema
	if err := json.Unmarshal(b, &full); err != nil {
		return e, nil, fmt.Errorf("schema: %w", err)
	}
	resolved, err := full.Resolve(nil)
	if err != nil {
		return e, nil, fmt.Errorf("schema: %w", err)
	}
	required := map[string]bool{}
	for _, r := range wire.Required {
		required[r] = true
	}
	var problems []error
	for name, w := range wire.Properties {
		f, err := field(name, w, required[name])
		if err != nil {
			problems = append(problems, fmt.Errorf("field %q: %w", name, err))
			continue
		}
		e.Fields = append(e.Fields, f)
	}
	if err := errors.Join(problems...); err != nil {
		return e, nil, err
	}
	sort.Slice(e.Fields, func(i, j int) bool {
		a, b := e.Fields[i], e.Fields[j]
		if a.Required != b.Required {
			return a.Required
		}
		return a.Name < b.Name
	})
	return e, resolved, nil
}

// field reads one property.
func field(name string, w wireField, required bool) (events.ElicitField, error) {
	f := events.ElicitField{Name: name, Title: text.Clip(w.Title, maxText), Description: text.Clip(w.Description, maxText),
		Type: w.Type, Format: w.Format, Required: required, Default: w.Default,
		MinLength: w.MinLength, MaxLength: w.MaxLength, Pattern: w.Pattern, Minimum: w.Minimum, Maximum: w.Maximum,
		MinItems: w.MinItems, MaxItems: w.MaxItems}
	var err error
	switch w.Type {
	case "string":
		switch {
		case len(w.Enum) > 0:
			f.Options, err = enumOptions(w.Enum, w.EnumNames)
		case len(w.OneOf) > 0:
			f.Options, err = choiceOptions(w.OneOf)
		}
	case "array":
		switch {
		case w.Items == nil:
			err = errors.New("a list without items")
		case len(w.Items.Enum) > 0:
			f.Options, err = enumOptions(w.Items.Enum, nil)
		case len(w.Items.AnyOf) > 0:
			f.Options, err = choiceOptions(w.Items.AnyOf)
		default:
			err = errors.New("a list whose items are not choices")
		}
	case "number", "integer", "boolean":
	default:
		err = fmt.Errorf("type %q is not one a form has", w.Type)
	}
	if err == nil && len(f.Options) > maxOptions {
		err = fmt.Errorf("%d choices, more than %d", len(f.Options), maxOptions)
	}
	return f, err
}

// enumOptions reads an enum's values, titled by names where a name says
// more than its value.
func enumOptions(values []any, names []string) ([]events.ElicitOption, error) {
	out := make([]events.ElicitOption, 0, len(values))
	for i, v := range values {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("choice %v is not text", v)
		}
		o := events.ElicitOption{Value: s}
		if i < len(names) && names[i] != s {
			o.Title = text.Clip(names[i], maxText)
		}
		out = append(out, o)
	}
	return out, nil
}

// choiceOptions reads titled choices (oneOf, anyOf) as enumOptions reads
// a plain enum with its names.
func choiceOptions(choices []wireChoice) ([]events.ElicitOption, error) {
	values, names := make([]any, len(choices)), make([]string, len(choices))
	for i, c := range choices {
		values[i], names[i] = c.Const, c.Title
	}
	return enumOptions(values, names)
}

// withholdSecrets refuses an answer that carries a secret Reasonix holds
// (an API key): the guarantee that the key reaches no third party must
// not rest on the person recognising a server's phishing form.
func withholdSecrets(content map[string]any, secrets *tools.Secrets) error {
	var bad []string
	for name, v := range content {
		vals, ok := v.([]any)
		if !ok {
			vals = []any{v}
		}
		for _, x := range vals {
			if str, ok := x.(string); ok && secrets.Holds(str) {
				bad = append(bad, name)
				break
			}
		}
		if strs, ok := v.([]string); ok {
			for _, str := range strs {
				if secrets.Holds(str) {
					bad = append(bad, name)
					break
				}
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("%s: this is an API key Reasonix holds, which it never sends to an MCP server; a server that asks for it in a form is trying to take it", strings.Join(bad, ", "))
}
