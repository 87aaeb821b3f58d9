package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/tools"
)

// maxDescription caps a remote tool's description in the prompt prefix:
// some servers ship pages of prose per tool.
const maxDescription = 2048

// Tool is one remote tool adapted to [tools.Tool]. Its name, description
// and schema are fixed when it is listed; calls go to whatever connection
// its server has at the time, so a restarted server keeps serving the
// tools sessions were already given.
type Tool struct {
	srv      *server
	name     string
	remote   string
	desc     string
	schema   json.RawMessage
	readOnly bool
}

var _ tools.Describer = (*Tool)(nil)

// Name is mcp__<server>__<tool>.
func (t *Tool) Name() string { return t.name }

// Server is the name of the server the tool belongs to.
func (t *Tool) Server() string { return t.srv.cfg.Name }

// Remote is the tool's own name on its server.
func (t *Tool) Remote() string { return t.remote }

// Description is the server's description of the tool.
func (t *Tool) Description() string { return t.desc }

// Schema is the server's input schema, re-encoded with sorted keys.
func (t *Tool) Schema() json.RawMessage { return t.schema }

// ReadOnly reports the server's readOnlyHint: only a tool its server
// declares read-only runs in parallel and is treated as a reader.
func (t *Tool) ReadOnly() bool { return t.readOnly }

// Access describes a call: a read for a tool declared read-only, otherwise
// an opaque call the gate treats as a writer (it cannot see what a remote
// tool changes). The arguments must be a JSON object.
func (t *Tool) Access(args json.RawMessage) (tools.Access, error) {
	if _, err := decodeArgs(args); err != nil {
		return tools.Access{}, err
	}
	a := tools.Access{Kind: tools.KindOther, Detail: t.srv.cfg.Name + ": " + t.remote + summarizeArgs(args)}
	if t.readOnly {
		a.Kind = tools.KindRead
	}
	return a, nil
}

// Execute calls the tool on its server.
func (t *Tool) Execute(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	m, err := decodeArgs(args)
	if err != nil {
		return tools.Result{}, err
	}
	sess, err := t.srv.awaitSession(ctx, nil)
	if err != nil {
		return tools.Result{}, err
	}
	session := ""
	if env != nil {
		session = env.Session
	}
	defer t.srv.calling(session)()
	params := &sdk.CallToolParams{Name: t.remote, Arguments: m}
	res, err := sess.CallTool(ctx, params)
	if errors.Is(err, sdk.ErrConnectionClosed) && ctx.Err() == nil {
		// The connection was already closed when the call was made, so
		// the server never saw it (a call in flight when a server dies
		// fails with the read error instead): safe to send once more, to
		// the restarted server.
		if sess, err = t.srv.awaitSession(ctx, sess); err != nil {
			return tools.Result{}, err
		}
		res, err = sess.CallTool(ctx, params)
	}
	var rpcErr *jsonrpc.Error
	if err != nil && ctx.Err() == nil && errors.As(err, &rpcErr) && rpcErr.Code == sdk.CodeURLElicitationRequired && t.srv.m.opts.Elicit != nil {
		msg, uerr := t.srv.urlRequired(ctx, session, t.remote, rpcErr)
		if uerr != nil {
			return tools.Result{}, uerr
		}
		return tools.Result{Content: msg, IsError: true, Summary: t.srv.cfg.Name + ": " + t.remote + " needs a step in the browser"}, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		if t.srv.signInLost() {
			return tools.Result{}, fmt.Errorf("MCP server %s: %s: the server wants a new sign-in (the last one expired, was withdrawn, or lacks a permission this call needs); the person can give it one (%s) (%w)", t.srv.cfg.Name, t.remote, t.srv.m.signInHint(t.srv.cfg.Name), err)
		}
		return tools.Result{}, fmt.Errorf("MCP server %s: %s: %w", t.srv.cfg.Name, t.remote, err)
	}
	limit := 30000
	if env != nil {
		limit = env.Limit()
	}
	out := tools.Truncate(ResultText(res), limit)
	sum := t.srv.cfg.Name + ": " + t.remote
	if res.IsError {
		sum += " failed"
	}
	return tools.Result{Content: out, IsError: res.IsError, Summary: sum}, nil
}

func decodeArgs(args json.RawMessage) (map[string]any, error) {
	m := map[string]any{}
	if len(strings.TrimSpace(string(args))) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, fmt.Errorf("invalid arguments: %v; send a JSON object matching the tool schema", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// summarizeArgs is a short view of the arguments for approval prompts.
func summarizeArgs(args json.RawMessage) string {
	s := strings.TrimSpace(string(args))
	if s == "" || s == "{}" || s == "null" {
		return ""
	}
	return " " + text.Clip(text.OneLine(s), 200)
}

// ResultText renders a tool result for the model: text kept as is, images,
// audio and binary resources described (the model cannot use the bytes),
// embedded text resources kept with their URI, structured content kept as
// JSON when no text part already carries it.
func ResultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, ContentText(c))
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && !containsJSON(parts, b) {
			parts = append(parts, "[structured content]\n"+string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// ContentText renders one content block as text.
func ContentText(c sdk.Content) string {
	switch x := c.(type) {
	case *sdk.TextContent:
		return x.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", orUnknown(x.MIMEType), len(x.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(x.MIMEType), len(x.Data))
	case *sdk.ResourceLink:
		s := "[resource link: " + x.URI
		if x.Name != "" {
			s += " (" + x.Name + ")"
		}
		if x.Description != "" {
			s += ": " + text.OneLine(x.Description)
		}
		return s + "]"
	case *sdk.EmbeddedResource:
		return resourceText(x.Resource)
	case nil:
		return ""
	}
	b, _ := json.Marshal(c)
	return string(b)
}

func resourceText(r *sdk.ResourceContents) string {
	if r == nil {
		return "[resource: empty]"
	}
	if r.Blob != nil && r.Text == "" {
		return fmt.Sprintf("[resource %s: %s, %d bytes of binary data]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	}
	head := "[resource " + r.URI
	if r.MIMEType != "" {
		head += " (" + r.MIMEType + ")"
	}
	return head + "]\n" + r.Text
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// containsJSON reports whether a text part holds the same JSON value.
func containsJSON(parts []string, b []byte) bool {
	var want any
	if json.Unmarshal(b, &want) != nil {
		return false
	}
	wb, _ := json.Marshal(want)
	for _, p := range parts {
		var got any
		if json.Unmarshal([]byte(p), &got) == nil {
			if gb, _ := json.Marshal(got); string(gb) == string(wb) {
				return true
			}
		}
	}
	return false
}
