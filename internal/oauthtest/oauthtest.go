// Package oauthtest is a remote MCP server behind OAuth, for tests of the
// MCP client's sign-in: one HTTP server that is both the protected MCP
// endpoint (/mcp, with its resource metadata, RFC 9728) and its
// authorization server (RFC 8414 metadata, dynamic client registration,
// the authorization-code grant with PKCE S256, rotating refresh tokens,
// revocation, RFC 7009).
// It checks what a real server would (the redirect address a client
// registered, the code verifier, the refresh token and the client it was
// given to, the resource indicator of RFC 8707 on every token request)
// and counts what happened, so tests can assert on it. Only tests import
// it.
package oauthtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Tool is the name of the one tool the protected server offers; its
// answer names the access token it was called with.
const Tool = "whoami"

// Options shape the server.
type Options struct {
	// ExpiresIn is the lifetime the token endpoint announces, in seconds
	// (0 announces none).
	ExpiresIn int
	// Deny makes the authorization endpoint send the browser back with
	// error=access_denied.
	Deny bool
	// Client is a client registered by hand; with one, the server offers
	// no dynamic registration.
	Client *Client
	// NoRevocation leaves the revocation endpoint out of the metadata;
	// RevocationEndpoint, when set, is named there instead of its own.
	NoRevocation       bool
	RevocationEndpoint string
	// RevokeStatus, when set, is the revocation endpoint's answer to
	// every request (a server that is down); nothing is revoked.
	RevokeStatus int
}

// Client is a client registered with the authorization server by hand.
type Client struct {
	ID, Secret string
	// Redirect is the one redirect address it may use.
	Redirect string
}

// Server is the MCP server and its authorization server.
type Server struct {
	// URL is the MCP endpoint (streamable HTTP); SSEURL the same server
	// over the older HTTP+SSE transport.
	URL, SSEURL string
	// Base is the server's origin (the authorization server's issuer).
	Base string

	opts Options
	srv  *httptest.Server

	mu      sync.Mutex
	clients map[string][]string // client id -> redirect addresses
	secrets map[string]string   // client id -> secret
	codes   map[string]code
	access  map[string]bool   // live access tokens
	refresh map[string]issued // live refresh tokens
	n       int
	counts  Counts
}

// Counts is what the authorization server did.
type Counts struct {
	Registrations, Authorizations, CodeGrants, Refreshes, RefusedRefreshes int
	// Calls are the tool's successful calls.
	Calls int
	// Scope is the scope the last authorization asked for.
	Scope string
	// RefreshResource is the resource parameter of the last refresh
	// request, refused or not.
	RefreshResource string
	// Revocations are the revocation requests answered with 200, and
	// RevokedHints their token_type_hint parameters in order.
	Revocations  int
	RevokedHints []string
}

// issued is who a refresh token was given to, for which resource.
type issued struct {
	client, resource string
}

type code struct {
	client, redirect, challenge, resource string
}

// New starts a server for t; it stops when t ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts, clients: map[string][]string{}, secrets: map[string]string{}, codes: map[string]code{}, access: map[string]bool{}, refresh: map[string]issued{}}
	if c := opts.Client; c != nil {
		s.clients[c.ID] = []string{c.Redirect}
		s.secrets[c.ID] = c.Secret
	}
	mux := http.NewServeMux()
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	s.Base = s.srv.URL
	s.URL = s.Base + "/mcp"
	s.SSEURL = s.Base + "/sse"

	mcpServer := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(mcpServer, &sdk.Tool{Name: Tool, Description: "Says which access token it was called with."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, struct{}, error) {
			s.mu.Lock()
			s.counts.Calls++
			s.mu.Unlock()
			tok := ""
			if req.Extra != nil && req.Extra.TokenInfo != nil {
				ti := req.Extra.TokenInfo
				tok = ti.UserID
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "signed-in answer for token " + tok}}}, struct{}{}, nil
		})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpServer }, nil)
	prm := s.Base + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/mcp", auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prm})(handler))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL, AuthorizationServers: []string{s.Base}, ScopesSupported: []string{"tools"},
	}))
	sse := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return mcpServer }, nil)
	mux.Handle("/sse", auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: s.Base + "/.well-known/oauth-protected-resource/sse"})(sse))
	mux.Handle("/.well-known/oauth-protected-resource/sse", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.SSEURL, AuthorizationServers: []string{s.Base}, ScopesSupported: []string{"tools"},
	}))
	mux.HandleFunc("/.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("/register", s.register)
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("/token", s.token)
	mux.HandleFunc("/revoke", s.revoke)
	return s
}

// Counts reports what happened so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.counts
	c.RevokedHints = slices.Clone(c.RevokedHints)
	return c
}

// Expire makes every access token handed out so far invalid, as if
// their time ran out on the server's side; refresh tokens still work.
func (s *Server) Expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// Revoke withdraws every token handed out so far, refresh tokens too:
// only a new sign-in helps.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
	clear(s.refresh)
}

// Valid reports whether an access token is live.
func (s *Server) Valid(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.access[tok]
}

// Live reports whether a refresh token would be taken.
func (s *Server) Live(refresh string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.refresh[refresh]
	return ok
}

func (s *Server) verify(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	if !s.Valid(tok) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: tok, Scopes: []string{"tools"}, Expiration: time.Now().Add(time.Hour)}, nil
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	m := map[string]any{
		"issuer":                                s.Base,
		"authorization_endpoint":                s.Base + "/authorize",
		"token_endpoint":                        s.Base + "/token",
		"registration_endpoint":                 s.Base + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported":                      []string{"tools", "offline_access"},
		"revocation_endpoint":                   s.Base + "/revoke",
	}
	if s.opts.NoRevocation {
		delete(m, "revocation_endpoint")
	}
	if e := s.opts.RevocationEndpoint; e != "" {
		m["revocation_endpoint"] = e
	}
	if s.opts.Client != nil {
		delete(m, "registration_endpoint")
		m["token_endpoint_auth_methods_supported"] = []string{"client_secret_basic", "client_secret_post"}
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if s.opts.Client != nil {
		http.NotFound(w, r)
		return
	}
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
		ClientName   string   `json:"client_name"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&meta) != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	s.mu.Lock()
	s.n++
	id := fmt.Sprintf("client-%d", s.n)
	s.clients[id] = meta.RedirectURIs
	s.counts.Registrations++
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs,
		"client_name": meta.ClientName, "token_endpoint_auth_method": "none"})
}

// authorize plays the person's browser tab too: it agrees at once (or
// refuses, with Deny) and sends the browser back to the client.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	redirects, known := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	switch {
	case !known:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case !slices.Contains(redirects, redirect):
		http.Error(w, "redirect_uri was not registered", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		http.Error(w, "PKCE S256 and response_type=code are required", http.StatusBadRequest)
		return
	}
	back, err := url.Parse(redirect)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	v := back.Query()
	v.Set("state", q.Get("state"))
	s.mu.Lock()
	s.counts.Authorizations++
	s.counts.Scope = q.Get("scope")
	if s.opts.Deny {
		v.Set("error", "access_denied")
	} else {
		s.n++
		c := fmt.Sprintf("code-%d", s.n)
		s.codes[c] = code{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"), resource: q.Get("resource")}
		v.Set("code", c)
	}
	s.mu.Unlock()
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	client, ok := s.authenticate(r)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	var grant issued
	switch f.Get("grant_type") {
	case "authorization_code":
		c, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || c.client != client || c.redirect != f.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge || (c.resource != s.URL && c.resource != s.SSEURL) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		if f.Get("resource") != c.resource {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_target"})
			return
		}
		s.counts.CodeGrants++
		grant = issued{client: client, resource: c.resource}
	case "refresh_token":
		s.counts.RefreshResource = f.Get("resource")
		g, ok := s.refresh[f.Get("refresh_token")]
		if !ok || g.client != client {
			s.counts.RefusedRefreshes++
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		if f.Get("resource") != g.resource {
			// RFC 8707 2: a refresh names the resource again; one
			// outside the grant is refused.
			s.counts.RefusedRefreshes++
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_target"})
			return
		}
		delete(s.refresh, f.Get("refresh_token")) // rotated
		s.counts.Refreshes++
		grant = g
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	s.n++
	at, rt := fmt.Sprintf("access-%d", s.n), fmt.Sprintf("refresh-%d", s.n)
	s.access[at], s.refresh[rt] = true, grant
	out := map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt, "scope": "tools"}
	if s.opts.ExpiresIn > 0 {
		out["expires_in"] = s.opts.ExpiresIn
	}
	writeJSON(w, http.StatusOK, out)
}

// authenticate is the client a token or revocation request comes from
// (RFC 6749 2.3.1: HTTP Basic, else client_id and client_secret in the
// body); false when its secret is wrong. s.mu is held.
func (s *Server) authenticate(r *http.Request) (string, bool) {
	client, secret, basic := r.BasicAuth()
	if basic {
		client, _ = url.QueryUnescape(client)
		secret, _ = url.QueryUnescape(secret)
	} else {
		client, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if want, known := s.secrets[client]; known && want != secret {
		return "", false
	}
	return client, true
}

// revoke is the revocation endpoint (RFC 7009): a client withdraws a
// token it was given; 200 also for a token that is unknown already.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost || r.PostForm.Get("token") == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	if s.opts.RevokeStatus != 0 {
		w.WriteHeader(s.opts.RevokeStatus)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	client, ok := s.authenticate(r)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	tok := r.PostForm.Get("token")
	if g, ok := s.refresh[tok]; ok {
		if g.client != client {
			// RFC 7009 2.1: a token of another client is not revoked.
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unauthorized_client"})
			return
		}
		delete(s.refresh, tok)
	}
	delete(s.access, tok)
	s.counts.Revocations++
	s.counts.RevokedHints = append(s.counts.RevokedHints, r.PostForm.Get("token_type_hint"))
	w.WriteHeader(http.StatusOK)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Browse is a person's browser that agrees to everything: it opens the
// authorization address and follows the redirects back to the client's
// loopback listener. It reports what the last page said.
func Browse(ctx context.Context, authURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	if resp.StatusCode != http.StatusOK {
		return b.String(), fmt.Errorf("browser: %s: %s", resp.Status, b.String())
	}
	return b.String(), nil
}
