package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reasonix/reasonix/internal/text"
)

// Elicitation is a server's request for input from the person, made
// during one of its tool calls (MCP form elicitation). Reasonix shows no
// form: the person either accepts the server's own default for every
// field or declines, so nothing the person knows reaches the server
// through it beyond that yes or no.
type Elicitation struct {
	Server  string
	Message string
	// Fields are the requested fields, sorted by name.
	Fields []ElicitField
}

// ElicitField is one requested field.
type ElicitField struct {
	Name, Description string
	// Default is the server's default; nil when it has none (only an
	// optional field may lack one, else the request is declined unasked).
	Default  any
	Required bool
}

// Answers describes what accepting sends: each field with a default as
// name = value; fields without one are left out.
func (e Elicitation) Answers() string {
	var parts []string
	for _, f := range e.Fields {
		if f.Default == nil {
			continue
		}
		b, _ := json.Marshal(f.Default)
		parts = append(parts, f.Name+" = "+text.Clip(string(b), 80))
	}
	if len(parts) == 0 {
		return "nothing (an empty answer)"
	}
	return strings.Join(parts, ", ")
}

// elicit answers a server's elicitation/create: a form whose required
// fields all have defaults goes to Options.Elicit; anything else (a
// required field without a default, URL mode) is declined with a notice.
// Accepting answers with the defaults, which the SDK checks against the
// schema.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	decline := &sdk.ElicitResult{Action: "decline"}
	p := req.Params
	if p == nil {
		return decline, nil
	}
	if p.Mode != "" && p.Mode != "form" {
		s.m.notify(fmt.Sprintf("MCP server %s asked you to open %s; Reasonix does not open links for servers, so it declined", s.cfg.Name, text.Clip(p.URL, 200)))
		return decline, nil
	}
	e, missing, err := parseElicitation(s.cfg.Name, p)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		s.m.notify(fmt.Sprintf("MCP server %s asked for input (%s) with required fields that have no default (%s); Reasonix has no form to fill them in, so it declined",
			s.cfg.Name, text.Clip(text.OneLine(p.Message), 200), strings.Join(missing, ", ")))
		return decline, nil
	}
	ok, err := s.m.opts.Elicit(ctx, e)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	if !ok {
		return decline, nil
	}
	return &sdk.ElicitResult{Action: "accept", Content: e.defaults()}, nil
}

// defaults is the answer accepting sends: every field's default.
func (e Elicitation) defaults() map[string]any {
	out := map[string]any{}
	for _, f := range e.Fields {
		if f.Default != nil {
			out[f.Name] = f.Default
		}
	}
	return out
}

// parseElicitation reads the requested schema's fields; missing names the
// required ones without a default.
func parseElicitation(server string, p *sdk.ElicitParams) (e Elicitation, missing []string, err error) {
	e = Elicitation{Server: server, Message: p.Message}
	if p.RequestedSchema == nil {
		return e, nil, nil
	}
	b, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return e, nil, fmt.Errorf("elicitation schema: %w", err)
	}
	var schema struct {
		Properties map[string]struct {
			Title       string `json:"title"`
			Description string `json:"description"`
			Default     any    `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		return e, nil, fmt.Errorf("elicitation schema: %w", err)
	}
	required := map[string]bool{}
	for _, r := range schema.Required {
		required[r] = true
	}
	for name, prop := range schema.Properties {
		desc := prop.Description
		if desc == "" {
			desc = prop.Title
		}
		f := ElicitField{Name: name, Description: desc, Default: prop.Default, Required: required[name]}
		if f.Required && f.Default == nil {
			missing = append(missing, name)
		}
		e.Fields = append(e.Fields, f)
	}
	sort.Slice(e.Fields, func(i, j int) bool { return e.Fields[i].Name < e.Fields[j].Name })
	sort.Strings(missing)
	return e, missing, nil
}
