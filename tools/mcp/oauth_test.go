package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/oauthtest"
	"golang.org/x/oauth2"
)

// memStore is a TokenStore in memory.
type memStore struct {
	mu sync.Mutex
	m  map[string]string
}

func newMemStore() *memStore { return &memStore{m: map[string]string{}} }

func (s *memStore) Get(k string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	return v, ok
}

func (s *memStore) Set(k, v string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
	return "memory", nil
}

func (s *memStore) Delete(k string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, k)
	return nil
}

// stored decodes the grant kept for c.
func (s *memStore) stored(t *testing.T, c Config) *grant {
	t.Helper()
	return loadGrant(s, GrantKey(c))
}

// browser plays the person: each address handed to SignIn is opened by
// a client that follows the redirects back to the loopback listener.
type browser struct {
	wg    sync.WaitGroup
	mu    sync.Mutex
	urls  []string
	pages []string
	errs  []error
}

func (b *browser) open(_, u string) {
	b.mu.Lock()
	b.urls = append(b.urls, u)
	b.mu.Unlock()
	b.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		page, err := oauthtest.Browse(ctx, u)
		b.mu.Lock()
		b.pages = append(b.pages, page)
		if err != nil {
			b.errs = append(b.errs, err)
		}
		b.mu.Unlock()
	})
}

func oauthManager(t *testing.T, c Config, opts Options) (*Manager, *notices) {
	t.Helper()
	n := &notices{}
	opts.Notify = n.add
	opts.Version = "test"
	m := New([]Config{c}, opts)
	t.Cleanup(m.Close)
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return m, n
}

// remoteConfig is the streamable-HTTP server "remote" at srv.
func remoteConfig(srv *oauthtest.Server) Config {
	return Config{Name: "remote", Type: TypeHTTP, URL: srv.URL, Timeout: 10 * time.Second}
}

// signInOnce signs c in through the browser, as a person would, and
// keeps the grant in store.
func signInOnce(t *testing.T, c Config, store TokenStore) {
	t.Helper()
	b := &browser{}
	m, _ := oauthManager(t, c, Options{Tokens: store, SignIn: b.open})
	m.Close()
	b.wg.Wait()
}

func whoami(t *testing.T, m *Manager) string {
	t.Helper()
	return call(t, toolByName(t, m, "mcp__remote__whoami"), `{}`).Content
}

// A headless run that holds no sign-in does not wait for a person: the
// server is left needing a sign-in, with the command that gives it, and
// nothing was registered with the authorization server.
func TestOAuthHeadlessWithoutSignInNeedsOne(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	c := remoteConfig(srv)
	m, n := oauthManager(t, c, Options{Tokens: newMemStore()})
	st, _ := m.Status("remote")
	if st.State != StateSignIn || !strings.Contains(st.Err, "reasonix mcp login remote") {
		t.Fatalf("state %s, err %q", st.State, st.Err)
	}
	if !strings.Contains(n.all(), "MCP server remote needs an OAuth sign-in: run `reasonix mcp login remote`") {
		t.Errorf("notice: %s", n.all())
	}
	if got := srv.Counts(); got.Registrations != 0 || got.Authorizations != 0 {
		t.Errorf("a headless run went to the authorization server: %+v", got)
	}
}

// The whole life of a sign-in: a person signs in through the browser
// (discovery, registration, PKCE, the loopback return), the grant is
// kept; the next run uses it without asking; a token the server dropped
// is refreshed and the new one kept; a withdrawn sign-in leaves the
// server needing a new one.
func TestOAuthSignInKeepRefreshRevoke(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ExpiresIn: 3600})
	c := remoteConfig(srv)
	store := newMemStore()
	b := &browser{}
	m, n := oauthManager(t, c, Options{Tokens: store, SignIn: b.open})
	if st, _ := m.Status("remote"); st.State != StateRunning || !st.SignedIn {
		t.Fatalf("after sign-in: %+v\n%s", st, n.all())
	}
	if out := whoami(t, m); !strings.Contains(out, "signed-in answer for token access-") {
		t.Errorf("tool: %q", out)
	}
	m.Close()
	b.wg.Wait()
	if len(b.urls) != 1 || len(b.errs) != 0 || !strings.Contains(b.pages[0], "Signed in to remote") {
		t.Fatalf("browser: urls %v errs %v pages %v", b.urls, b.errs, b.pages)
	}
	auth := b.urls[0]
	for _, want := range []string{"code_challenge_method=S256", "code_challenge=", "state=", "redirect_uri=http%3A%2F%2F127.0.0.1%3A", "resource=" + url.QueryEscape(srv.URL)} {
		if !strings.Contains(auth, want) {
			t.Errorf("authorization address lacks %q: %s", want, auth)
		}
	}
	g := store.stored(t, c)
	if g == nil || g.ClientID == "" || g.Token.RefreshToken == "" || g.URL != srv.URL || g.Resource != srv.URL {
		t.Fatalf("kept grant: %+v", g)
	}
	if got := srv.Counts(); got.Registrations != 1 || got.CodeGrants != 1 {
		t.Errorf("counts after sign-in: %+v", got)
	}
	first := g.Token.AccessToken

	// A headless run uses what was kept.
	m2, _ := oauthManager(t, c, Options{Tokens: store})
	if out := whoami(t, m2); !strings.Contains(out, first) {
		t.Errorf("the kept token was not used: %q", out)
	}
	m2.Close()

	// The server drops the access token: the refusal is met with a
	// refresh, which names the resource again (RFC 8707, as the MCP
	// authorization spec requires), and the refreshed token is kept.
	srv.Expire()
	m3, n3 := oauthManager(t, c, Options{Tokens: store})
	if st, _ := m3.Status("remote"); st.State != StateRunning {
		t.Fatalf("after expiry: %+v\n%s", st, n3.all())
	}
	out := whoami(t, m3)
	m3.Close()
	g2 := store.stored(t, c)
	if got := srv.Counts(); got.Refreshes != 1 || got.Registrations != 1 || got.CodeGrants != 1 || got.RefreshResource != srv.URL {
		t.Errorf("counts after expiry: %+v", got)
	}
	if g2.Token.AccessToken == first || !strings.Contains(out, g2.Token.AccessToken) || g2.Token.RefreshToken == g.Token.RefreshToken {
		t.Errorf("refreshed token not used or not kept: kept %+v, answer %q", g2.Token, out)
	}

	// Withdrawn: the refresh is refused and the run says what to do.
	srv.Revoke()
	m4, n4 := oauthManager(t, c, Options{Tokens: store})
	if st, _ := m4.Status("remote"); st.State != StateSignIn {
		t.Errorf("after revoke: %+v", st)
	}
	if !strings.Contains(n4.all(), "reasonix mcp login remote") {
		t.Errorf("notice: %s", n4.all())
	}
	if got := srv.Counts(); got.RefusedRefreshes != 1 {
		t.Errorf("counts after revoke: %+v", got)
	}
}

// A token whose announced lifetime is over is refreshed before it is
// sent, so the server never sees it. The grant is one kept before its
// resource indicator was: the refresh names the server's address.
func TestOAuthExpiredTokenRefreshedBeforeUse(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ExpiresIn: 3600})
	c := remoteConfig(srv)
	store := newMemStore()
	signInOnce(t, c, store)
	g := store.stored(t, c)
	if g == nil {
		t.Fatal("nothing kept")
	}
	g.Token.Expiry = time.Now().Add(-time.Minute)
	g.Resource = ""
	if err := saveGrant(store, GrantKey(c), g); err != nil {
		t.Fatal(err)
	}
	before := srv.Counts()
	m2, _ := oauthManager(t, c, Options{Tokens: store})
	out := whoami(t, m2)
	if got := srv.Counts(); got.Refreshes != before.Refreshes+1 || got.RefreshResource != srv.URL || strings.HasSuffix(out, " "+g.Token.AccessToken) {
		t.Errorf("expired token: counts %+v, answer %q", got, out)
	}
	if g2 := store.stored(t, c); g2.Token.AccessToken == g.Token.AccessToken || !g2.Token.Valid() {
		t.Errorf("refreshed token not kept: %+v", g2.Token)
	}
}

// Relogin signs in again although a grant is kept; a refused sign-in
// fails the server with the authorization server's reason.
func TestOAuthReloginAndRefusal(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	c := remoteConfig(srv)
	store := newMemStore()
	b := &browser{}
	m, _ := oauthManager(t, c, Options{Tokens: store, SignIn: b.open})
	m.Close()
	m2, _ := oauthManager(t, c, Options{Tokens: store, SignIn: b.open, Relogin: true})
	m2.Close()
	b.wg.Wait()
	if got := srv.Counts(); got.CodeGrants != 2 || len(b.urls) != 2 {
		t.Errorf("relogin did not sign in again: %+v, %d browser visits", got, len(b.urls))
	}

	deny := oauthtest.New(t, oauthtest.Options{Deny: true})
	dc := Config{Name: "remote", Type: TypeHTTP, URL: deny.URL, Timeout: 10 * time.Second}
	b2 := &browser{}
	m3, _ := oauthManager(t, dc, Options{Tokens: store, SignIn: b2.open})
	st, _ := m3.Status("remote")
	if st.State != StateFailed || !strings.Contains(st.Err, "access_denied") {
		t.Errorf("refused sign-in: %+v", st)
	}
	m3.Close()
	b2.wg.Wait()
	if store.stored(t, dc) != nil {
		t.Error("a refused sign-in kept something")
	}
}

// The older HTTP+SSE transport signs in and uses the kept grant too.
func TestOAuthOverSSE(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	c := Config{Name: "remote", Type: TypeSSE, URL: srv.SSEURL, Timeout: 10 * time.Second}
	store := newMemStore()
	b := &browser{}
	m, n := oauthManager(t, c, Options{Tokens: store, SignIn: b.open})
	if st, _ := m.Status("remote"); st.State != StateRunning {
		t.Fatalf("%+v\n%s", st, n.all())
	}
	m.Close()
	b.wg.Wait()
	m2, n2 := oauthManager(t, c, Options{Tokens: store})
	if st, _ := m2.Status("remote"); st.State != StateRunning {
		t.Fatalf("kept grant over SSE: %+v\n%s", st, n2.all())
	}
	if out := whoami(t, m2); !strings.Contains(out, "signed-in answer") {
		t.Errorf("tool: %q", out)
	}
}

// A server given an Authorization header gets no sign-in: a refusal
// names the header.
func TestOAuthNotOfferedWithAuthorizationHeader(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	c := Config{Name: "remote", Type: TypeHTTP, URL: srv.URL, Timeout: 10 * time.Second, Headers: map[string]string{"Authorization": "Bearer wrong"}}
	b := &browser{}
	m, _ := oauthManager(t, c, Options{Tokens: newMemStore(), SignIn: b.open})
	st, _ := m.Status("remote")
	if st.State != StateFailed || !strings.Contains(st.Err, "refused the Authorization header") {
		t.Errorf("%+v", st)
	}
	if len(b.urls) != 0 {
		t.Error("a sign-in was started")
	}
}

// The loopback listener takes only the answer carrying the state it
// waits for; another is turned away and the wait goes on.
func TestLoopbackChecksState(t *testing.T) {
	l, err := listenLoopback(0, "remote")
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	if !strings.HasPrefix(l.redirectURL(), "http://127.0.0.1:") {
		t.Fatalf("redirect %s", l.redirectURL())
	}
	got := l.expect("right-state")
	resp, err := http.Get(l.redirectURL() + "?code=evil&state=wrong")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("wrong state: %s", resp.Status)
	}
	select {
	case q := <-got:
		t.Fatalf("wrong state delivered: %v", q)
	default:
	}
	resp, err = http.Get(l.redirectURL() + "?code=good&state=right-state")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if q := <-got; q.Get("code") != "good" || resp.StatusCode != http.StatusOK {
		t.Errorf("right state: %v %s", q, resp.Status)
	}
	// Used once: a replay is turned away.
	resp, _ = http.Get(l.redirectURL() + "?code=good&state=right-state")
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("replayed answer: %s", resp.Status)
	}
}

// The grant is stored as base64 (the macOS keychain command takes no
// quotes) of JSON, under a name no ${VAR} can reach.
func TestGrantStorage(t *testing.T) {
	// Port 1 refuses: SignOut's look for a revocation endpoint fails at
	// once, without the network.
	c := Config{Name: "x", URL: "http://127.0.0.1:1/mcp"}
	key := GrantKey(c)
	if !strings.HasPrefix(key, "mcp-oauth:x:") || GrantKey(Config{Name: "x", URL: "http://127.0.0.1:1/other"}) == key {
		t.Errorf("key %s", key)
	}
	st := newMemStore()
	if SignedIn(st, c) {
		t.Error("signed in with nothing stored")
	}
	st.m[key] = "not base64 {"
	if SignedIn(st, c) {
		t.Error("garbage read as a grant")
	}
	raw, _ := json.Marshal(map[string]any{"url": c.URL, "client_id": "c", "token_url": "http://127.0.0.1:1/token", "token": map[string]any{"access_token": "at"}})
	st.m[key] = base64.StdEncoding.EncodeToString(raw)
	if !SignedIn(st, c) {
		t.Error("a stored grant was not read")
	}
	if out, err := SignOut(context.Background(), st, c); !out.Had || out.Revoked || out.NotRevoked == "" || err != nil || SignedIn(st, c) {
		t.Errorf("SignOut: %+v %v", out, err)
	}
	if out, _ := SignOut(context.Background(), st, c); out.Had {
		t.Error("second SignOut found something")
	}
	st.m[key] = "not base64 {"
	if out, err := SignOut(context.Background(), st, c); !out.Had || out.NotRevoked != "the kept sign-in could not be read" || err != nil || len(st.m) != 0 {
		t.Errorf("SignOut of an unreadable grant: %+v %v %v", out, err, st.m)
	}
}

// SignOut revokes the kept grant where the authorization server offers
// revocation (RFC 7009): the refresh token, then the access token, both
// dead at the server afterwards; it forgets the grant whatever the
// server said, and says why it did not revoke.
func TestOAuthSignOutRevokes(t *testing.T) {
	ctx := context.Background()
	srv := oauthtest.New(t, oauthtest.Options{ExpiresIn: 3600})
	c := remoteConfig(srv)
	store := &lockingStore{memStore: newMemStore()}
	signInOnce(t, c, store)
	g := store.stored(t, c)
	if g == nil || g.ResourceMetadata != srv.Base+"/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("kept grant: %+v", g)
	}
	// The store is held: a refresh in another run waits for the sign-out.
	store.lock.Lock()
	done := make(chan SignedOut, 1)
	go func() {
		out, err := SignOut(ctx, store, c)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	select {
	case <-done:
		t.Fatal("SignOut did not wait for the store's lock")
	case <-time.After(100 * time.Millisecond):
	}
	store.lock.Unlock()
	out := <-done
	got := srv.Counts()
	if !out.Had || !out.Revoked || out.NotRevoked != "" || got.Revocations != 2 || !slices.Equal(got.RevokedHints, []string{"refresh_token", "access_token"}) {
		t.Errorf("sign-out %+v, counts %+v", out, got)
	}
	if srv.Valid(g.Token.AccessToken) || srv.Live(g.Token.RefreshToken) || SignedIn(store, c) {
		t.Error("the grant outlived the sign-out")
	}
	if _, err := refreshGrant(ctx, http.DefaultClient, g); err == nil {
		t.Error("a revoked refresh token was taken")
	}

	// Forgotten anyway, with the reason, and no token sent anywhere.
	for _, tc := range []struct {
		name string
		opts oauthtest.Options
		edit func(*grant)
		why  string
	}{
		{"no revocation endpoint", oauthtest.Options{NoRevocation: true}, nil, "the authorization server offers no revocation"},
		{"revocation down", oauthtest.Options{RevokeStatus: http.StatusServiceUnavailable}, nil, "refused the revocation: 503"},
		{"another token endpoint", oauthtest.Options{}, func(g *grant) { g.TokenURL += "-old" }, "no longer names the token endpoint"},
		{"revocation elsewhere", oauthtest.Options{RevocationEndpoint: "http://127.0.0.2:1/revoke"}, nil, "on another host than the token endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := oauthtest.New(t, tc.opts)
			c := remoteConfig(srv)
			store := newMemStore()
			signInOnce(t, c, store)
			g := store.stored(t, c)
			if tc.edit != nil {
				tc.edit(g)
				if err := saveGrant(store, GrantKey(c), g); err != nil {
					t.Fatal(err)
				}
			}
			out, err := SignOut(ctx, store, c)
			if err != nil || !out.Had || out.Revoked || !strings.Contains(out.NotRevoked, tc.why) || SignedIn(store, c) {
				t.Errorf("%+v %v", out, err)
			}
			if got := srv.Counts(); got.Revocations != 0 || !srv.Valid(g.Token.AccessToken) {
				t.Errorf("revoked after all: %+v", got)
			}
		})
	}
}

// A client registered by hand (a server without dynamic registration):
// its id and secret are used, the browser comes back to the fixed
// localhost port it was registered with, and pinned scopes are asked
// for instead of the server's.
func TestOAuthPreregisteredClient(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	redirect := fmt.Sprintf("http://localhost:%d/callback", port)
	srv := oauthtest.New(t, oauthtest.Options{Client: &oauthtest.Client{ID: "hand-made", Secret: "s3cret", Redirect: redirect}})
	c := Config{Name: "remote", Type: TypeHTTP, URL: srv.URL, Timeout: 10 * time.Second,
		OAuth: OAuthClient{ClientID: "hand-made", ClientSecret: "s3cret", CallbackPort: port, Scopes: []string{"tools", "extra"}}}
	store := newMemStore()
	b := &browser{}
	m, n := oauthManager(t, c, Options{Tokens: store, SignIn: b.open})
	if st, _ := m.Status("remote"); st.State != StateRunning || !st.SignedIn {
		t.Fatalf("%+v\n%s\n%v", st, n.all(), b.errs)
	}
	m.Close()
	b.wg.Wait()
	got := srv.Counts()
	scopes := strings.Fields(got.Scope)
	slices.Sort(scopes) // the SDK's order is a map's
	if got.Registrations != 0 || got.CodeGrants != 1 || strings.Join(scopes, " ") != "extra offline_access tools" {
		t.Errorf("counts %+v", got)
	}
	if !strings.Contains(b.urls[0], "redirect_uri="+url.QueryEscape(redirect)) {
		t.Errorf("redirect: %s", b.urls[0])
	}
	if g := store.stored(t, c); g == nil || g.ClientID != "hand-made" {
		t.Errorf("kept %+v", g)
	}

	// The kept grant refreshes with the client's secret, in the body as
	// the server's metadata prefers, as HTTP Basic, and (a way not
	// settled at the sign-in) Basic first; each names the resource.
	key := GrantKey(c)
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInParams, oauth2.AuthStyleInHeader, oauth2.AuthStyleAutoDetect} {
		g := store.stored(t, c)
		if style == oauth2.AuthStyleInParams && g.AuthStyle != int(style) {
			t.Errorf("the sign-in settled auth style %d, want the body", g.AuthStyle)
		}
		g.AuthStyle = int(style)
		before := srv.Counts().Refreshes
		tok, err := refreshGrant(context.Background(), http.DefaultClient, g)
		if err != nil || srv.Counts().Refreshes != before+1 || srv.Counts().RefreshResource != srv.URL {
			t.Fatalf("refresh with style %d: %v %+v", style, err, srv.Counts())
		}
		g.Token = tok
		if err := saveGrant(store, key, g); err != nil {
			t.Fatal(err)
		}
	}
	g := store.stored(t, c)
	g.ClientSecret = "wrong"
	var re *oauth2.RetrieveError
	if _, err := refreshGrant(context.Background(), http.DefaultClient, g); !errors.As(err, &re) || re.ErrorCode != "invalid_client" {
		t.Errorf("refresh with a wrong secret: %v", err)
	}

	// A wrong secret is refused at the token endpoint.
	c.OAuth.ClientSecret = "wrong"
	b2 := &browser{}
	m2, _ := oauthManager(t, c, Options{Tokens: newMemStore(), SignIn: b2.open})
	if st, _ := m2.Status("remote"); st.State != StateFailed || !strings.Contains(st.Err, "invalid_client") {
		t.Errorf("wrong secret: %+v", st)
	}
	m2.Close()
	b2.wg.Wait()
}

// In a running front end a server left needing a sign-in is signed in on
// request (Manager.SignIn, /mcp login): it comes up, says so, and is
// announced to sessions that already took their tools; the hint names
// the front end's way.
func TestManagerSignInLater(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	c := remoteConfig(srv)
	store := newMemStore()
	m, n := oauthManager(t, c, Options{Tokens: store, SignInHint: func(s string) string { return "type /mcp login " + s }})
	if st, _ := m.Status("remote"); st.State != StateSignIn || !strings.Contains(st.Err, "type /mcp login remote") {
		t.Fatalf("%+v", st)
	}
	if len(m.Tools()) != 0 {
		t.Fatal("tools without a sign-in")
	}
	if err := m.SignIn("nope", nil); err == nil {
		t.Error("unknown server signed in")
	}
	b := &browser{}
	if err := m.SignIn("remote", b.open); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, _ := m.Status("remote")
		if st.State == StateRunning {
			break
		}
		if time.Now().After(deadline) || st.State == StateFailed {
			t.Fatalf("not signed in: %+v\n%s", st, n.all())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := m.SignIn("remote", b.open); err == nil || !strings.Contains(err.Error(), "running") {
		t.Errorf("signing in a running server: %v", err)
	}
	if ch := m.Changes(); !strings.Contains(ch, "MCP server remote now offers: mcp__remote__whoami") {
		t.Errorf("changes: %q", ch)
	}
	if !strings.Contains(n.all(), "Signed in to MCP server remote; it is running (1 tools)") {
		t.Errorf("notices: %s", n.all())
	}
	if store.stored(t, c) == nil {
		t.Error("the sign-in was not kept")
	}
	m.Close()
	b.wg.Wait()
}

// A sign-in withdrawn while a session runs: the refresh is refused, and
// the tool's error says a new sign-in is wanted and how to give it.
func TestOAuthWithdrawnMidSession(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	c := remoteConfig(srv)
	store := newMemStore()
	signInOnce(t, c, store)
	m2, _ := oauthManager(t, c, Options{Tokens: store})
	tl := toolByName(t, m2, "mcp__remote__whoami")
	srv.Revoke()
	_, err := tl.Execute(context.Background(), nil, json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), "the server wants a new sign-in") || !strings.Contains(err.Error(), "reasonix mcp login remote") {
		t.Errorf("call after the sign-in was withdrawn: %v", err)
	}
	if got := srv.Counts(); got.RefusedRefreshes != 1 {
		t.Errorf("counts %+v", got)
	}
}

// lockingStore is a memStore with the cross-process lock a credential
// store has.
type lockingStore struct {
	*memStore
	lock sync.Mutex
}

func (s *lockingStore) Lock() (func(), error) {
	s.lock.Lock()
	return s.lock.Unlock, nil
}

// Two runs whose kept token expired refresh once between them: the
// second waits for the store, finds the first one's refreshed grant and
// uses it, instead of spending the rotated refresh token the server no
// longer takes.
func TestOAuthConcurrentRefreshOnce(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ExpiresIn: 3600})
	c := remoteConfig(srv)
	store := &lockingStore{memStore: newMemStore()}
	signInOnce(t, c, store)
	g := store.stored(t, c)
	g.Token.Expiry = time.Now().Add(-time.Minute)
	if err := saveGrant(store, GrantKey(c), g); err != nil {
		t.Fatal(err)
	}
	before := srv.Counts()
	var wg sync.WaitGroup
	toks := make([]string, 2)
	errs := make([]error, 2)
	for i := range 2 {
		src := &tokenSource{store: store, key: GrantKey(c), client: http.DefaultClient, g: store.stored(t, c)}
		wg.Go(func() {
			tok, err := src.Token()
			errs[i] = err
			if tok != nil {
				toks[i] = tok.AccessToken
			}
		})
	}
	wg.Wait()
	got := srv.Counts()
	if errs[0] != nil || errs[1] != nil || toks[0] != toks[1] || toks[0] == g.Token.AccessToken ||
		got.Refreshes != before.Refreshes+1 || got.RefusedRefreshes != 0 {
		t.Errorf("tokens %v errors %v counts %+v", toks, errs, got)
	}
}

// A token endpoint's answer is read as JSON or (some older servers) form
// encoding; an error is a RetrieveError with the server's code even in
// an answer whose status says success.
func TestParseToken(t *testing.T) {
	for _, c := range []struct {
		status      int
		ctype, body string
		access      string
		expires     bool
		// refused: a RetrieveError with code; else msg in the error.
		refused   bool
		code, msg string
	}{
		{status: 200, ctype: "application/json", body: `{"access_token":"a","refresh_token":"r","expires_in":60}`, access: "a", expires: true},
		{status: 200, ctype: "application/json; charset=utf-8", body: `{"access_token":"a","expires_in":"60"}`, access: "a", expires: true},
		{status: 200, ctype: "application/x-www-form-urlencoded", body: `access_token=a&expires_in=60`, access: "a", expires: true},
		{status: 200, ctype: "application/json", body: `{"access_token":"a"}`, access: "a"},
		{status: 400, ctype: "application/json", body: `{"error":"invalid_grant","error_description":"spent"}`, refused: true, code: "invalid_grant"},
		{status: 200, ctype: "application/json", body: `{"error":"invalid_grant"}`, refused: true, code: "invalid_grant"},
		{status: 200, ctype: "text/plain", body: `error=invalid_client`, refused: true, code: "invalid_client"},
		{status: 502, ctype: "text/html", body: `<h1>bad gateway</h1>`, refused: true},
		{status: 200, ctype: "application/json", body: `{"token_type":"Bearer"}`, msg: "no access_token"},
		{status: 200, ctype: "text/html", body: `<h1>hello</h1>`, msg: "answer"},
	} {
		resp := &http.Response{StatusCode: c.status, Header: http.Header{"Content-Type": {c.ctype}}}
		tok, err := parseToken(resp, []byte(c.body))
		var re *oauth2.RetrieveError
		switch {
		case c.refused:
			if !errors.As(err, &re) || re.ErrorCode != c.code || re.Response.StatusCode != c.status {
				t.Errorf("%s: %v, want a refusal %q", c.body, err, c.code)
			}
		case c.msg != "":
			if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%s: %v, want %q", c.body, err, c.msg)
			}
		case err != nil || tok.AccessToken != c.access || tok.Expiry.IsZero() == c.expires:
			t.Errorf("%s: %+v %v", c.body, tok, err)
		}
	}
}
