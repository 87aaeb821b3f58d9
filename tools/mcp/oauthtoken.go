package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The requests a kept grant makes after its sign-in: its refresh, and
// its revocation at sign-out (RFC 7009). The refresh is written here
// rather than left to oauth2's token source: that one sends only
// grant_type and refresh_token, and the MCP authorization spec requires
// the resource parameter (RFC 8707) on every token request, so the
// authorization server can keep the new token bound to the server it was
// granted for.

// resource is the resource indicator the grant was asked for: what the
// sign-in sent, else (a grant kept before that was recorded) the
// server's address, which is what the sign-in sends.
func (g *grant) resource() string {
	if g.Resource != "" {
		return g.Resource
	}
	return g.URL
}

// refreshGrant asks the authorization server for a new access token with
// the grant's refresh token. A refusal is an *oauth2.RetrieveError with
// the server's error code. A server that sends no new refresh token
// keeps the old one valid (RFC 6749 6).
func refreshGrant(ctx context.Context, client *http.Client, g *grant) (*oauth2.Token, error) {
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {g.Token.RefreshToken},
		"resource":      {g.resource()},
	}
	resp, body, err := g.post(ctx, client, g.TokenURL, form)
	if err != nil {
		return nil, err
	}
	tok, err := parseToken(resp, body)
	if err != nil {
		return nil, err
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = g.Token.RefreshToken
	}
	return tok, nil
}

// post sends form to an endpoint of the grant's authorization server
// with the client's authentication (RFC 6749 2.3.1), as its sign-in
// settled: in the body, or as HTTP Basic. A client whose way was not
// settled (registered by hand with a server that names none) tries Basic
// first and the body after a refusal, as oauth2 does. The answer's body
// is read (at most 1 MiB) and the response closed.
func (g *grant) post(ctx context.Context, client *http.Client, endpoint string, form url.Values) (*http.Response, []byte, error) {
	styles := []oauth2.AuthStyle{oauth2.AuthStyle(g.AuthStyle)}
	if styles[0] == oauth2.AuthStyleAutoDetect {
		styles = []oauth2.AuthStyle{oauth2.AuthStyleInParams}
		if g.ClientSecret != "" {
			styles = []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams}
		}
	}
	var (
		resp *http.Response
		body []byte
	)
	for _, style := range styles {
		v := maps.Clone(form)
		if style == oauth2.AuthStyleInParams {
			v.Set("client_id", g.ClientID)
			if g.ClientSecret != "" {
				v.Set("client_secret", g.ClientSecret)
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(v.Encode()))
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if style == oauth2.AuthStyleInHeader {
			// RFC 6749 2.3.1: both are form-encoded before Basic.
			req.SetBasicAuth(url.QueryEscape(g.ClientID), url.QueryEscape(g.ClientSecret))
		}
		resp, err = client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return nil, nil, err
		}
		if resp.StatusCode/100 == 2 {
			break
		}
	}
	return resp, body, nil
}

// parseToken reads a token endpoint's answer: JSON, or the form
// encoding some servers still send. A refusal, or an error in an answer
// with a good status, is an *oauth2.RetrieveError.
func parseToken(resp *http.Response, body []byte) (*oauth2.Token, error) {
	var fields struct {
		AccessToken      string      `json:"access_token"`
		TokenType        string      `json:"token_type"`
		RefreshToken     string      `json:"refresh_token"`
		ExpiresIn        json.Number `json:"expires_in"`
		Error            string      `json:"error"`
		ErrorDescription string      `json:"error_description"`
		ErrorURI         string      `json:"error_uri"`
	}
	bad := resp.StatusCode/100 != 2
	refused := &oauth2.RetrieveError{Response: resp, Body: body}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch media {
	case "application/x-www-form-urlencoded", "text/plain":
		v, err := url.ParseQuery(string(body))
		if err != nil {
			if bad {
				return nil, refused
			}
			return nil, fmt.Errorf("the token endpoint's answer: %w", err)
		}
		fields.AccessToken, fields.TokenType, fields.RefreshToken = v.Get("access_token"), v.Get("token_type"), v.Get("refresh_token")
		fields.ExpiresIn = json.Number(v.Get("expires_in"))
		fields.Error, fields.ErrorDescription, fields.ErrorURI = v.Get("error"), v.Get("error_description"), v.Get("error_uri")
	default:
		if err := json.Unmarshal(body, &fields); err != nil {
			if bad {
				return nil, refused
			}
			return nil, fmt.Errorf("the token endpoint's answer: %w", err)
		}
	}
	if bad || fields.Error != "" {
		refused.ErrorCode, refused.ErrorDescription, refused.ErrorURI = fields.Error, fields.ErrorDescription, fields.ErrorURI
		return nil, refused
	}
	if fields.AccessToken == "" {
		return nil, errors.New("the token endpoint's answer has no access_token")
	}
	tok := &oauth2.Token{AccessToken: fields.AccessToken, TokenType: fields.TokenType, RefreshToken: fields.RefreshToken}
	if secs, err := strconv.ParseInt(fields.ExpiresIn.String(), 10, 64); err == nil && secs > 0 {
		tok.ExpiresIn = secs
		tok.Expiry = time.Now().Add(time.Duration(secs) * time.Second)
	}
	return tok, nil
}

// revokeTimeout bounds a sign-out's talk with the authorization server
// (its metadata and the revocation): the sign-in is forgotten anyway.
const revokeTimeout = 10 * time.Second

// revoke withdraws the grant at its authorization server (RFC 7009): the
// refresh token, which withdraws the grant, then the access token. It
// reports whether the server took the first of them it was sent, else
// why not.
func revoke(ctx context.Context, client *http.Client, g *grant) (bool, string) {
	endpoint, why := revocationEndpoint(ctx, client, g)
	if endpoint == "" {
		return false, why
	}
	type one struct{ token, hint string }
	var toks []one
	if g.Token.RefreshToken != "" {
		toks = append(toks, one{g.Token.RefreshToken, "refresh_token"})
	}
	toks = append(toks, one{g.Token.AccessToken, "access_token"})
	for i, t := range toks {
		err := revokeToken(ctx, client, g, endpoint, t.token, t.hint)
		if i == 0 && err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return false, fmt.Sprintf("the authorization server did not answer within %s", revokeTimeout)
			}
			return false, err.Error()
		}
	}
	return true, ""
}

// revokeToken posts one token to the revocation endpoint with the
// client's authentication. The server answers 200 also for a token it
// no longer knows (RFC 7009 2.2).
func revokeToken(ctx context.Context, client *http.Client, g *grant, endpoint, token, hint string) error {
	resp, body, err := g.post(ctx, client, endpoint, url.Values{"token": {token}, "token_type_hint": {hint}})
	if err != nil {
		return fmt.Errorf("the revocation request failed: %w", err)
	}
	if resp.StatusCode/100 == 2 {
		return nil
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return fmt.Errorf("the authorization server refused the revocation: %s (%s)", e.Error, resp.Status)
	}
	return fmt.Errorf("the authorization server refused the revocation: %s", resp.Status)
}

// revocationEndpoint finds where the grant's authorization server takes
// revocations: the server's resource metadata (RFC 9728; where its
// challenge pointed at the sign-in, else the well-known addresses) names
// the authorization server, whose metadata (RFC 8414) names the
// endpoint. The tokens go there only when that metadata still names the
// token endpoint the grant came from and the endpoint is on the same
// host: a server changed since the sign-in does not get them sent
// elsewhere. "" and why when there is none to use.
func revocationEndpoint(ctx context.Context, client *http.Client, g *grant) (string, string) {
	resource := g.resource()
	issuer := ""
	for _, u := range resourceMetadataURLs(g.ResourceMetadata, g.URL) {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, u, resource, client)
		if err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
			issuer = prm.AuthorizationServers[0]
			break
		}
	}
	if issuer == "" {
		// The 2025-03-26 revision: the server's origin is its
		// authorization server.
		u, err := url.Parse(g.URL)
		if err != nil {
			return "", "the server's address does not parse"
		}
		issuer = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	}
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, client)
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", fmt.Sprintf("the authorization server did not answer within %s", revokeTimeout)
	case err != nil:
		return "", "its metadata could not be read: " + err.Error()
	case asm == nil:
		return "", "the authorization server publishes no metadata"
	case asm.RevocationEndpoint == "":
		return "", "the authorization server offers no revocation"
	case asm.TokenEndpoint != g.TokenURL:
		return "", "the authorization server's metadata no longer names the token endpoint the sign-in used"
	}
	rev, err1 := url.Parse(asm.RevocationEndpoint)
	tok, err2 := url.Parse(g.TokenURL)
	if err1 != nil || err2 != nil || rev.Scheme != tok.Scheme || rev.Host != tok.Host {
		return "", "the revocation endpoint is on another host than the token endpoint"
	}
	return asm.RevocationEndpoint, ""
}

// resourceMetadataURLs are where a server's resource metadata may be, in
// the order the MCP authorization spec asks clients to look: the address
// its challenge named, then the well-known address with the server's
// path, then without.
func resourceMetadataURLs(challenged, server string) []string {
	var out []string
	if challenged != "" {
		out = append(out, challenged)
	}
	u, err := url.Parse(server)
	if err != nil {
		return out
	}
	u.RawQuery, u.Fragment = "", ""
	if p := strings.TrimLeft(u.Path, "/"); p != "" {
		u.Path = "/.well-known/oauth-protected-resource/" + p
		out = append(out, u.String())
	}
	u.Path = "/.well-known/oauth-protected-resource"
	return append(out, u.String())
}
