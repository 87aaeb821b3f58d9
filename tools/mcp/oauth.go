package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// TokenStore keeps what a sign-in to a remote server gave (the client
// registration and its tokens) between runs, under a name the manager
// derives from the server's name and URL. internal/credentials' Store is
// one: the OS keychain or a 0600 file under the Reasonix home, which
// commands and file tools may not read.
type TokenStore interface {
	Get(name string) (string, bool)
	// Set stores value and says where it went.
	Set(name, value string) (string, error)
	Delete(name string) error
}

// storeLocker is a TokenStore that can be locked across processes
// (internal/credentials' Store): a refresh holds it from reading the
// grant again to storing the new one.
type storeLocker interface {
	Lock() (unlock func(), err error)
}

// OAuthClient is a client the server's authorization server already knows
// (registered by hand), for servers that do not let clients register
// themselves. Without one, the client registers itself (dynamic client
// registration).
type OAuthClient struct {
	ClientID     string
	ClientSecret string
	// CallbackPort is the loopback port the authorization server sends the
	// browser back to (http://localhost:PORT/callback), for a client whose
	// redirect address was registered with a fixed port; 0 picks a free one
	// (http://127.0.0.1:PORT/callback).
	CallbackPort int
	// Scopes, when set, are asked for instead of those the server's
	// metadata names.
	Scopes []string
}

// ErrSignIn says a remote server wants an OAuth sign-in that nobody can
// give in this process.
var ErrSignIn = errors.New("needs an OAuth sign-in")

// refreshTimeout bounds one request to an authorization server: a token
// source's Token takes no context.
const refreshTimeout = 30 * time.Second

// signInWait is how long a sign-in waits for the browser to come back.
const signInWait = 10 * time.Minute

// grant is what one sign-in gave: enough to use and refresh the tokens
// without asking the person or the server's metadata again.
type grant struct {
	URL          string   `json:"url"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret,omitempty"`
	TokenURL     string   `json:"token_url"`
	AuthStyle    int      `json:"auth_style,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	// Resource is the resource indicator (RFC 8707) the sign-in asked
	// for; refreshes send it again.
	Resource string `json:"resource,omitempty"`
	// ResourceMetadata is where the server's challenge at the sign-in
	// said its resource metadata is (RFC 9728), for finding the
	// authorization server again at sign-out.
	ResourceMetadata string        `json:"resource_metadata,omitempty"`
	Token            *oauth2.Token `json:"token"`
}

// GrantKey is the name a server's sign-in is stored under: its name and
// a hash of its URL, so a server whose URL changed signs in again instead
// of sending its tokens elsewhere. The colons keep it from being a
// variable name, which ${VAR} in a config could expand.
func GrantKey(c Config) string {
	sum := sha256.Sum256([]byte(c.URL))
	return "mcp-oauth:" + c.Name + ":" + hex.EncodeToString(sum[:8])
}

// loadGrant reads a stored grant; nil when there is none or it is unusable.
func loadGrant(st TokenStore, key string) *grant {
	if st == nil {
		return nil
	}
	v, ok := st.Get(key)
	if !ok {
		return nil
	}
	// Stored as base64: the macOS keychain command cannot take quotes.
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil
	}
	var g grant
	if json.Unmarshal(b, &g) != nil || g.Token == nil || g.Token.AccessToken == "" || g.TokenURL == "" {
		return nil
	}
	return &g
}

func saveGrant(st TokenStore, key string, g *grant) error {
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if _, err := st.Set(key, base64.StdEncoding.EncodeToString(b)); err != nil {
		return fmt.Errorf("keeping the sign-in: %w", err)
	}
	return nil
}

// SignedIn reports whether a sign-in to the server is stored.
func SignedIn(st TokenStore, c Config) bool { return loadGrant(st, GrantKey(c)) != nil }

// SignedOut is what SignOut did.
type SignedOut struct {
	// Had is set when a sign-in was kept (and is forgotten now, unless
	// SignOut returned an error).
	Had bool
	// Revoked is set when the authorization server took the grant's
	// revocation (RFC 7009).
	Revoked bool
	// NotRevoked says why it was not revoked, when it was kept.
	NotRevoked string
}

// SignOut withdraws the server's kept sign-in at its authorization
// server, when that one offers revocation (RFC 7009; best effort, within
// revokeTimeout), and forgets it whatever the server said. The store is
// held throughout: a run refreshing the grant meanwhile has stored its
// new tokens before they are read and revoked, or refreshes after, with
// a refresh token the server no longer takes.
func SignOut(ctx context.Context, st TokenStore, c Config) (SignedOut, error) {
	if l, ok := st.(storeLocker); ok {
		if unlock, err := l.Lock(); err == nil {
			defer unlock()
		}
	}
	key := GrantKey(c)
	if _, ok := st.Get(key); !ok {
		return SignedOut{}, nil
	}
	out := SignedOut{Had: true}
	if g := loadGrant(st, key); g == nil {
		out.NotRevoked = "the kept sign-in could not be read"
	} else {
		ctx, cancel := context.WithTimeout(ctx, revokeTimeout)
		out.Revoked, out.NotRevoked = revoke(ctx, &http.Client{Timeout: revokeTimeout}, g)
		cancel()
	}
	if err := st.Delete(key); err != nil {
		return out, fmt.Errorf("forgetting the sign-in of %s: %w", c.Name, err)
	}
	return out, nil
}

// tokenSource hands out a server's access token, refreshing it with the
// refresh token when it expired (or the server refused it) and storing
// what the refresh gave.
type tokenSource struct {
	store  TokenStore
	key    string
	client *http.Client
	// report says a refreshed token could not be stored.
	report func(error)

	mu sync.Mutex
	g  *grant
	// dead is set once the authorization server refused the refresh
	// token: only a new sign-in helps.
	dead bool
}

// Token is the access token to send. One that cannot be refreshed any
// more is still sent: the server's refusal is what starts a sign-in (or
// says one is needed).
func (t *tokenSource) Token() (*oauth2.Token, error) {
	tok, err := t.token("")
	if err != nil && t.isDead() {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.g.Token, nil
	}
	return tok, err
}

func (t *tokenSource) isDead() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dead
}

// token returns a usable token: the current one while it is valid, else a
// refreshed one. stale, when set, is an access token the server refused:
// it is replaced even if its expiry says it is still good.
func (t *tokenSource) token(stale string) (*oauth2.Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := t.g.Token
	if stale != "" && cur.AccessToken != stale {
		return cur, nil // replaced since that request went out
	}
	if stale == "" && cur.Valid() {
		return cur, nil
	}
	// Another run may have refreshed it since (runs share the store; with
	// rotating refresh tokens, ours is then spent): from here to storing
	// the refreshed grant, the store is held, so only one run refreshes.
	if l, ok := t.store.(storeLocker); ok {
		if unlock, err := l.Lock(); err == nil {
			defer unlock()
		}
	}
	if g := loadGrant(t.store, t.key); g != nil && g.Token.AccessToken != cur.AccessToken && g.Token.AccessToken != stale && g.Token.Valid() {
		t.g, t.dead = g, false
		return g.Token, nil
	}
	if t.dead {
		return nil, errors.New("the authorization server refused the refresh token")
	}
	if cur.RefreshToken == "" {
		t.dead = true
		return nil, errors.New("the sign-in expired and gave no refresh token")
	}
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	nt, err := refreshGrant(ctx, t.client, t.g)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client") {
			t.dead = true
		}
		return nil, fmt.Errorf("refreshing the sign-in: %w", err)
	}
	g := *t.g
	g.Token = nt
	t.g = &g
	if t.store != nil {
		if err := saveGrant(t.store, t.key, &g); err != nil && t.report != nil {
			t.report(err)
		}
	}
	return nt, nil
}

// bearerOf is the access token a request carried.
func bearerOf(r *http.Request) string {
	v := r.Header.Get("Authorization")
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return v[7:]
	}
	return ""
}

// resourceMetadataOf is where a challenge says the server's resource
// metadata is (RFC 9728 5.1), or "".
func resourceMetadataOf(resp *http.Response) string {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return ""
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["resource_metadata"] != "" {
			return c.Params["resource_metadata"]
		}
	}
	return ""
}

// insufficientScope reports a 403 that asks for more scopes (step-up).
func insufficientScope(resp *http.Response) bool {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// connAuth is one connection's OAuth handler. It sends the stored
// tokens and refreshes them; when the server still refuses, it signs in
// through the SDK's authorization-code flow if the manager can ask a
// person, else gives up with [ErrSignIn].
type connAuth struct {
	// signIn is the SDK's flow; nil when nobody can sign in from this
	// process.
	signIn *auth.AuthorizationCodeHandler
	// wanted is set when the server asked for a sign-in nobody gave;
	// asked when it asked at all.
	wanted, asked atomic.Bool

	mu  sync.Mutex
	src *tokenSource // nil while nothing is stored
	// resource is the resource indicator the sign-in in progress sent
	// to the authorization page, and resourceMetadata where the
	// challenge that started it said the server's resource metadata is;
	// both are kept with its grant.
	resource, resourceMetadata string
}

func (a *connAuth) source() *tokenSource {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.src
}

func (a *connAuth) setSource(src *tokenSource) {
	a.mu.Lock()
	a.src = src
	a.mu.Unlock()
}

func (a *connAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if src := a.source(); src != nil {
		return src, nil
	}
	return nil, nil
}

func (a *connAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	step := insufficientScope(resp)
	if resp.StatusCode == http.StatusForbidden && !step {
		// Not about the token: the retry's answer is the error.
		drain(resp)
		return nil
	}
	a.asked.Store(true)
	if src := a.source(); src != nil && !step {
		if _, err := src.token(bearerOf(req)); err == nil {
			drain(resp)
			return nil
		}
	}
	if a.signIn == nil {
		drain(resp)
		a.wanted.Store(true)
		return ErrSignIn
	}
	if u := resourceMetadataOf(resp); u != "" {
		a.mu.Lock()
		a.resourceMetadata = u
		a.mu.Unlock()
	}
	if err := a.signIn.Authorize(ctx, req, resp); err != nil {
		a.wanted.Store(true)
		return err
	}
	return nil
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// authTransport applies an OAuth handler to a client the SDK gives no
// handler to (the HTTP+SSE transport): it sets the token and, when the
// server refuses it, authorizes and sends the request once more.
type authTransport struct {
	h    auth.OAuthHandler
	base http.RoundTripper
}

func (t authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	send := func(r *http.Request) (*http.Request, error) {
		ts, err := t.h.TokenSource(r.Context())
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		if ts != nil {
			tok, err := ts.Token()
			if err != nil {
				return nil, err
			}
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
		return r, nil
	}
	first, err := send(r)
	if err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(first)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if r.Body != nil && r.Body != http.NoBody && r.GetBody == nil {
		return resp, nil // cannot be sent again
	}
	if err := t.h.Authorize(r.Context(), first, resp); err != nil {
		return nil, err
	}
	again, err := send(r)
	if err != nil {
		return nil, err
	}
	if r.GetBody != nil {
		if again.Body, err = r.GetBody(); err != nil {
			return nil, err
		}
	}
	return t.base.RoundTrip(again)
}

// signer is who signs the server in (Manager.SignIn's, else the
// manager's) and whether a kept sign-in is passed over.
func (s *server) signer() (func(server, url string), bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signIn != nil {
		return s.signIn, s.relogin || s.m.opts.Relogin
	}
	return s.m.opts.SignIn, s.m.opts.Relogin
}

// signInLost reports that the live connection's server refused its
// sign-in and no new one was given.
func (s *server) signInLost() bool {
	s.mu.Lock()
	a := s.auth
	s.mu.Unlock()
	return a != nil && a.wanted.Load()
}

// loopback receives the browser on its way back from the authorization
// server (http://127.0.0.1:PORT/callback): a sign-in waits on it for the
// answer carrying the state it sent. An answer with another state (a
// stale tab, another program) is turned away and the wait goes on.
type loopback struct {
	srv      *http.Server
	served   sync.WaitGroup
	redirect string
	name     string // the server, for the page

	mu    sync.Mutex
	state string
	got   chan url.Values
}

// listenLoopback listens on a free port of 127.0.0.1, or on port when it
// is set: a client registered by hand was given a fixed redirect address,
// which by custom (Claude Code's) says localhost, so [::1] is listened on
// too where it can be.
func listenLoopback(port int, name string) (*loopback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("sign-in: listening on 127.0.0.1 for the browser's return: %w", err)
	}
	l := &loopback{name: name, redirect: "http://" + ln.Addr().String() + "/callback"}
	lns := []net.Listener{ln}
	if port != 0 {
		l.redirect = "http://localhost:" + strconv.Itoa(port) + "/callback"
		if ln6, err := net.Listen("tcp", net.JoinHostPort("::1", strconv.Itoa(port))); err == nil {
			lns = append(lns, ln6)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", l.callback)
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	for _, ln := range lns {
		l.served.Go(func() { _ = l.srv.Serve(ln) })
	}
	return l, nil
}

func (l *loopback) redirectURL() string { return l.redirect }

func (l *loopback) close() {
	_ = l.srv.Close()
	l.served.Wait()
}

// expect arms the listener for one answer with state.
func (l *loopback) expect(state string) <-chan url.Values {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.state, l.got = state, make(chan url.Values, 1)
	return l.got
}

func (l *loopback) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	l.mu.Lock()
	ok := l.state != "" && subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(l.state)) == 1
	got := l.got
	if ok {
		l.state = "" // one answer per sign-in
	}
	l.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, "<!doctype html><title>Reasonix</title><p>Reasonix is not waiting for this sign-in (it does not carry the state Reasonix sent). Nothing was done.</p>")
		return
	}
	if e := q.Get("error"); e != "" {
		fmt.Fprintf(w, "<!doctype html><title>Reasonix</title><p>The sign-in to %s was not completed: %s. You can close this tab.</p>", html.EscapeString(l.name), html.EscapeString(e))
	} else {
		fmt.Fprintf(w, "<!doctype html><title>Reasonix</title><p>Signed in to %s. You can close this tab and return to Reasonix.</p>", html.EscapeString(l.name))
	}
	got <- q
}

// pausable is a handshake's deadline that stops while a person signs in.
type pausable struct {
	mu    sync.Mutex
	t     *time.Timer
	d     time.Duration
	done  bool // fired or finished
	fired bool
}

func newPausable(d time.Duration, f func()) *pausable {
	p := &pausable{d: d}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t = time.AfterFunc(d, func() {
		p.mu.Lock()
		if p.done {
			p.mu.Unlock()
			return
		}
		p.done, p.fired = true, true
		p.mu.Unlock()
		f()
	})
	return p
}

func (p *pausable) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.t.Stop()
	}
}

// resume starts the whole deadline again.
func (p *pausable) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.t.Reset(p.d)
	}
}

// finish stops it for good and reports whether it had fired.
func (p *pausable) finish() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.t.Stop()
		p.done = true
	}
	return p.fired
}

// newAuth builds a connection's OAuth handler: the stored sign-in, and
// when the manager can ask a person, the SDK's authorization-code flow
// (discovery, dynamic client registration, PKCE) with a loopback listener
// for the browser's return. cleanup closes the listener.
func (s *server) newAuth(clock *pausable) (a *connAuth, cleanup func(), err error) {
	a = &connAuth{}
	key := GrantKey(s.cfg)
	client := &http.Client{Timeout: refreshTimeout}
	source := func(g *grant) *tokenSource {
		return &tokenSource{store: s.m.opts.Tokens, key: key, client: client, g: g, report: func(err error) {
			s.m.notify(fmt.Sprintf("MCP server %s: its refreshed sign-in could not be kept (%v); the next run refreshes again", s.cfg.Name, err))
		}}
	}
	open, relogin := s.signer()
	if !relogin {
		if g := loadGrant(s.m.opts.Tokens, key); g != nil && g.URL == s.cfg.URL {
			a.src = source(g)
		}
	}
	if open == nil {
		return a, func() {}, nil
	}
	l, err := listenLoopback(s.cfg.OAuth.CallbackPort, s.cfg.Name)
	if err != nil {
		return nil, nil, err
	}
	redirect := l.redirectURL()
	fetch := s.fetchCode(l, clock, open)
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			// The SDK sends the same resource to the token endpoint
			// but does not hand it to NewTokenSource.
			if u, err := url.Parse(args.URL); err == nil {
				a.mu.Lock()
				a.resource = u.Query().Get("resource")
				a.mu.Unlock()
			}
			return fetch(ctx, args)
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:    []string{redirect},
			ClientName:      "Reasonix",
			GrantTypes:      []string{"authorization_code", "refresh_token"},
			ResponseTypes:   []string{"code"},
			SoftwareID:      "reasonix",
			SoftwareVersion: s.m.opts.Version,
		}},
		RequestRefreshToken: true,
		Client:              client,
		// A step-up keeps the scopes an earlier run's sign-in gave.
		ScopeFilter: func(found []string) []string {
			if pinned := s.cfg.OAuth.Scopes; len(pinned) > 0 {
				found = slices.Clone(pinned)
			}
			if src := a.source(); src != nil {
				src.mu.Lock()
				defer src.mu.Unlock()
				for _, sc := range src.g.Scopes {
					if !slices.Contains(found, sc) {
						found = append(found, sc)
					}
				}
			}
			return found
		},
		NewTokenSource: func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			a.mu.Lock()
			resource, prm := a.resource, a.resourceMetadata
			a.mu.Unlock()
			g := &grant{URL: s.cfg.URL, ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.Endpoint.TokenURL,
				AuthStyle: int(c.Endpoint.AuthStyle), Scopes: c.Scopes, Resource: resource, ResourceMetadata: prm, Token: tok}
			if st := s.m.opts.Tokens; st != nil {
				if err := saveGrant(st, key, g); err != nil {
					return nil, err
				}
			}
			src := source(g)
			a.setSource(src)
			return src, nil
		},
	}
	if id := s.cfg.OAuth.ClientID; id != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: id}
		if sec := s.cfg.OAuth.ClientSecret; sec != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: sec}
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		l.close()
		return nil, nil, fmt.Errorf("sign-in: %w", err)
	}
	a.signIn = h
	return a, l.close, nil
}

// fetchCode is the SDK flow's step that needs a person: the manager's
// SignIn shows them the authorization address (a browser), and the
// loopback listener waits for the browser to come back with the code.
func (s *server) fetchCode(l *loopback, clock *pausable, open func(server, url string)) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, fmt.Errorf("sign-in: authorization address: %w", err)
		}
		if u.Scheme != "https" && u.Scheme != "http" {
			// It came from the server's metadata: only a web page is
			// handed to the browser opener.
			return nil, fmt.Errorf("sign-in: the authorization address %q is not a web address", u.Scheme+":")
		}
		state := u.Query().Get("state")
		if state == "" {
			return nil, errors.New("sign-in: the authorization address carries no state")
		}
		got := l.expect(state)
		defer l.expect("")
		if clock != nil {
			// A person is reading a page: the handshake's timeout
			// starts again once they are back.
			clock.pause()
			defer clock.resume()
		}
		open(s.cfg.Name, args.URL)
		wait := time.NewTimer(signInWait)
		defer wait.Stop()
		select {
		case q := <-got:
			if e := q.Get("error"); e != "" {
				if d := q.Get("error_description"); d != "" {
					e += ": " + d
				}
				return nil, fmt.Errorf("sign-in refused by the authorization server: %s", e)
			}
			if q.Get("code") == "" {
				return nil, errors.New("sign-in: the browser came back without a code")
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wait.C:
			return nil, fmt.Errorf("sign-in: the browser did not come back within %s", signInWait)
		}
	}
}
