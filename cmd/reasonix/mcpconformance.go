package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/reasonix/reasonix/events"
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
// yes would. A server that asks for an OAuth sign-in gets one through the
// same flow as `reasonix mcp login` (discovery, registration, PKCE, the
// loopback listener checking the state), with a browser that agrees to
// everything and follows the authorization server's redirects; a client
// the suite says is registered already (MCP_CONFORMANCE_CONTEXT's
// client_id and client_secret) is used as a configured one is. It fails
// when the handshake, the listing or a call fails.
//
// It reads no config and starts no model: what the suite checks is the
// MCP client, and nothing here should depend on a user's settings.
func cmdMCPConformance(ctx context.Context, args []string, io stdio) error {
	if len(args) != 1 {
		return usagef("mcp conformance-client needs one server URL")
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	cfg := mcp.Config{Name: "conformance", Type: mcp.TypeHTTP, URL: args[0], Timeout: 10 * time.Second}
	var suite struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		if err := json.Unmarshal([]byte(c), &suite); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		cfg.OAuth = mcp.OAuthClient{ClientID: suite.ClientID, ClientSecret: suite.ClientSecret}
	}
	var browsing sync.WaitGroup
	defer browsing.Wait()
	m := mcp.New([]mcp.Config{cfg},
		mcp.Options{Environ: os.Environ(), Version: version, Notify: func(n string) { fmt.Fprintln(io.err, n) },
			// The suite plays the server; this entry point plays the
			// person, who says yes to its request for input.
			Elicit: func(_ context.Context, r mcp.ElicitRequest) (events.ElicitAnswer, error) {
				defaults := r.Elicitation.Defaults()
				fmt.Fprintf(io.out, "input asked by %s: %q; accepting the defaults %v\n", r.Server, r.Message, defaults)
				return events.ElicitAnswer{Action: events.ElicitAccept, Content: defaults}, nil
			},
			// ... and who signs in when asked.
			Tokens: &memTokens{m: map[string]string{}},
			SignIn: func(_, url string) {
				fmt.Fprintf(io.out, "sign-in asked: %s\n", url)
				browsing.Go(func() {
					if err := agreeingBrowser(ctx, url); err != nil {
						fmt.Fprintf(io.err, "browser: %v\n", err)
					}
				})
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

// agreeingBrowser opens an authorization address the way a person who
// agrees to everything would: it follows the redirects, back to the
// loopback listener of the sign-in.
func agreeingBrowser(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	return nil
}

// memTokens keeps sign-ins for one process only.
type memTokens struct {
	mu sync.Mutex
	m  map[string]string
}

func (t *memTokens) Get(k string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[k]
	return v, ok
}

func (t *memTokens) Set(k, v string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[k] = v
	return "memory", nil
}

func (t *memTokens) Delete(k string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, k)
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
