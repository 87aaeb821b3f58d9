package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/reasonix/reasonix/tools/mcp"
)

// cmdMCPConformance is the hidden `reasonix mcp conformance-client URL`:
// the client the official MCP conformance suite
// (@modelcontextprotocol/conformance) runs once per client scenario, with
// the URL of its own test server appended. It reaches that server through
// the same [mcp.Manager] a session uses (streamable HTTP), then calls
// every tool the server lists, with arguments made from the tool's input
// schema, through the same [mcp.Tool] the model's calls go through, and
// accepts every request for input (MCP elicitation) as a person answering
// yes would. It fails when the handshake, the listing or a call fails.
//
// It reads no config and starts no model: what the suite checks is the
// MCP client, and nothing here should depend on a user's settings.
func cmdMCPConformance(ctx context.Context, args []string, io stdio) error {
	if len(args) != 1 {
		return usagef("mcp conformance-client needs one server URL")
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	m := mcp.New([]mcp.Config{{Name: "conformance", Type: mcp.TypeHTTP, URL: args[0], Timeout: 10 * time.Second}},
		mcp.Options{Environ: os.Environ(), Version: version, Notify: func(n string) { fmt.Fprintln(io.err, n) },
			// The suite plays the server; this entry point plays the
			// person, who says yes to its request for input.
			Elicit: func(_ context.Context, e mcp.Elicitation) (bool, error) {
				fmt.Fprintf(io.out, "input asked by %s: %q; accepting %s\n", e.Server, e.Message, e.Answers())
				return true, nil
			}})
	defer m.Close()
	m.Start()
	if err := m.Wait(ctx); err != nil {
		return err
	}
	st, _ := m.Status("conformance")
	if st.State != mcp.StateRunning {
		return fmt.Errorf("scenario %q: server is %s: %s", scenario, st.State, st.Err)
	}
	var failed []error
	for _, t := range m.Tools() {
		tool, ok := t.(*mcp.Tool)
		if !ok {
			continue
		}
		args, err := json.Marshal(sampleArgs(tool.Schema()))
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		res, err := tool.Execute(cctx, nil, args)
		cancel()
		if err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", tool.Remote(), err))
			continue
		}
		fmt.Fprintf(io.out, "%s %s -> %s\n", tool.Remote(), args, res.Content)
	}
	if err := errors.Join(failed...); err != nil {
		return fmt.Errorf("scenario %q: %w", scenario, err)
	}
	return nil
}

// sampleArgs builds arguments that satisfy a tool's input schema: every
// required property (all of them when none is marked required) gets its
// default, its first enum value, or a plain value of its type.
func sampleArgs(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	out := map[string]any{}
	if json.Unmarshal(schema, &s) != nil {
		return out
	}
	names := s.Required
	if len(names) == 0 {
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	for _, n := range names {
		out[n] = sampleValue(s.Properties[n])
	}
	return out
}

func sampleValue(prop json.RawMessage) any {
	var p struct {
		Type    any   `json:"type"`
		Default any   `json:"default"`
		Enum    []any `json:"enum"`
	}
	_ = json.Unmarshal(prop, &p)
	switch {
	case p.Default != nil:
		return p.Default
	case len(p.Enum) > 0:
		return p.Enum[0]
	}
	typ, _ := p.Type.(string)
	if types, ok := p.Type.([]any); ok && len(types) > 0 {
		typ, _ = types[0].(string)
	}
	switch typ {
	case "number", "integer":
		return 1
	case "boolean":
		return true
	case "object":
		return map[string]any{}
	case "array":
		return []any{}
	case "null":
		return nil
	}
	return "x"
}
