package mcp

import (
	"context"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompts lists the prompts of every running server, sorted by command
// name. Front ends offer each as the slash command "/" + Command.
func (m *Manager) Prompts() []PromptInfo {
	var out []PromptInfo
	for _, st := range m.Statuses() {
		if st.State == StateRunning {
			out = append(out, st.Prompts...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Command < out[j].Command })
	return out
}

// Prompt finds the prompt a slash command names ("mcp__server__prompt",
// with or without the slash).
func (m *Manager) Prompt(command string) (PromptInfo, bool) {
	command = strings.TrimPrefix(command, "/")
	for _, p := range m.Prompts() {
		if p.Command == command {
			return p, true
		}
	}
	return PromptInfo{}, false
}

// PromptArgs maps a slash command's argument words onto the prompt's
// arguments: name=value words by name, the others by position.
func PromptArgs(p PromptInfo, words []string) (map[string]string, error) {
	out := map[string]string{}
	pos := 0
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok && p.hasArg(k) {
			out[k] = v
			continue
		}
		for pos < len(p.Arguments) && out[p.Arguments[pos].Name] != "" {
			pos++
		}
		if pos >= len(p.Arguments) {
			// Extra words join the last argument, so free text works.
			if len(p.Arguments) == 0 {
				return nil, fmt.Errorf("/%s takes no arguments", p.Command)
			}
			last := p.Arguments[len(p.Arguments)-1].Name
			out[last] += " " + w
			continue
		}
		out[p.Arguments[pos].Name] = w
		pos++
	}
	for _, a := range p.Arguments {
		if a.Required && out[a.Name] == "" {
			return nil, fmt.Errorf("/%s needs the argument %q (by position or %s=value)", p.Command, a.Name, a.Name)
		}
	}
	return out, nil
}

func (p PromptInfo) hasArg(name string) bool {
	for _, a := range p.Arguments {
		if a.Name == name {
			return true
		}
	}
	return false
}

// GetPrompt fetches a prompt from its server and renders its messages as
// the text of one user turn.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	s := m.server(server)
	if s == nil {
		return "", fmt.Errorf("no MCP server named %q", server)
	}
	sess, err := s.session()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	res, err := sess.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("MCP server %s: prompt %s: %w", server, name, err)
	}
	var parts []string
	for _, msg := range res.Messages {
		if msg == nil {
			continue
		}
		t := ContentText(msg.Content)
		if msg.Role != "" && msg.Role != "user" {
			t = "[" + string(msg.Role) + "]\n" + t
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "\n\n"), nil
}

// ReadResource reads a resource from a server and renders its contents
// as text (binary contents are described).
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (string, error) {
	s := m.server(server)
	if s == nil {
		return "", fmt.Errorf("no MCP server named %q", server)
	}
	sess, err := s.session()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	res, err := sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", fmt.Errorf("MCP server %s: resource %s: %w", server, uri, err)
	}
	var parts []string
	for _, c := range res.Contents {
		parts = append(parts, resourceText(c))
	}
	return strings.Join(parts, "\n"), nil
}

// ResourceBlocks reads every @<server>:<uri> reference to a configured
// server in text and returns the resources' contents, each wrapped in a
// <resource> element, to append to the text. References to unknown
// servers are left alone (they may be file paths or mentions); failures to
// read come back as notices.
func (m *Manager) ResourceBlocks(ctx context.Context, text string) (string, []string) {
	var blocks, notices []string
	for _, ref := range resourceRefs(text) {
		if m.server(ref.server) == nil {
			continue
		}
		body, err := m.ReadResource(ctx, ref.server, ref.uri)
		if err != nil {
			notices = append(notices, err.Error())
			continue
		}
		blocks = append(blocks, fmt.Sprintf("<resource server=%q uri=%q>\n%s\n</resource>", ref.server, ref.uri, body))
	}
	if len(blocks) == 0 {
		return "", notices
	}
	return "\n\n" + strings.Join(blocks, "\n\n"), notices
}

type resourceRef struct{ server, uri string }

// resourceRefs finds @server:uri words: the server is a name without
// spaces or colons and the uri runs to the next space.
func resourceRefs(s string) []resourceRef {
	var out []resourceRef
	for _, w := range strings.Fields(s) {
		if !strings.HasPrefix(w, "@") {
			continue
		}
		server, uri, ok := strings.Cut(w[1:], ":")
		if !ok || server == "" || uri == "" || strings.ContainsAny(server, "/\\") {
			continue
		}
		uri = strings.TrimRight(uri, ".,;)")
		out = append(out, resourceRef{server, uri})
	}
	return out
}
