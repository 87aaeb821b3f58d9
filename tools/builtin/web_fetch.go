package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/reasonix/reasonix/internal/htmlmd"
	"github.com/reasonix/reasonix/tools"
)

const (
	// webFetchMaxBytes caps what one fetch reads off the wire; a larger
	// body is cut there and said to be.
	webFetchMaxBytes = 1 << 20
	// webFetchTimeout bounds one whole fetch, redirects included.
	webFetchTimeout = 30 * time.Second
	// webFetchMaxRedirects is how many same-host redirects are followed.
	webFetchMaxRedirects = 5
)

type webFetchTool struct {
	// lookup, when set, resolves host names instead of the system's
	// resolver (tests).
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

type webFetchArgs struct {
	URL      string    `json:"url"`
	MaxBytes tools.Int `json:"max_bytes,omitempty"`
}

func (webFetchTool) Name() string { return "web_fetch" }

// ReadOnly is false: a fetch reaches outside the machine and the URL itself
// can carry data out, so the gate asks unless a WebFetch rule allows it.
func (webFetchTool) ReadOnly() bool { return false }

func (webFetchTool) Description() string {
	return "Fetch an http(s) URL: HTML comes back as Markdown, text and JSON as they are, other types described. " +
		"Reads at most max_bytes (default and max 1 MB) in 30 s. Redirects are followed on the same host only; " +
		"another host's is reported: fetch it in a new call."
}

// Schema is webFetchSchema (schemas_gen.go), generated from webFetchArgs;
// see schema_test.go.
func (webFetchTool) Schema() json.RawMessage { return json.RawMessage(webFetchSchema) }

// Access names the URL, so WebFetch(domain:…) rules match its host.
func (webFetchTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a webFetchArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	u, err := parseFetchURL(a.URL)
	if err != nil {
		return tools.Access{}, err
	}
	return tools.Access{Kind: tools.KindNetwork, URL: u.String()}, nil
}

// parseFetchURL accepts absolute http and https URLs with a host.
func parseFetchURL(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("missing required argument \"url\"")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("invalid url %q: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q: only http and https URLs can be fetched", s)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("url %q has no host", s)
	}
	if u.User != nil {
		return nil, fmt.Errorf("url %q: credentials in URLs are not sent", s)
	}
	return u, nil
}

// errOtherHost stops the client at a redirect to another host: the gate
// judged only the first URL's host, and WebFetch rules are per host, so a
// same-host hop gets the decision the first URL got and any other does not.
type errOtherHost struct{ to string }

func (e errOtherHost) Error() string { return "redirect to another host: " + e.to }

func (w webFetchTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a webFetchArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Result{}, err
	}
	u, err := parseFetchURL(a.URL)
	if err != nil {
		return tools.Result{}, err
	}
	limit := int64(webFetchMaxBytes)
	if a.MaxBytes > 0 && int64(a.MaxBytes) < limit {
		limit = int64(a.MaxBytes)
	}
	ctx, cancel := context.WithTimeout(ctx, webFetchTimeout)
	defer cancel()
	host := strings.ToLower(u.Hostname())
	guard := &fetchGuard{named: tools.LocalHost(host) != "", lookup: w.lookup}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = guard.proxy
	transport.DialContext = guard.dial
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > webFetchMaxRedirects {
				return fmt.Errorf("more than %d redirects", webFetchMaxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to a non-http URL: %s", req.URL.Redacted())
			}
			if !strings.EqualFold(req.URL.Hostname(), host) {
				return errOtherHost{to: req.URL.String()}
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tools.Result{}, fmt.Errorf("cannot fetch %s: %w", u.Redacted(), err)
	}
	req.Header.Set("User-Agent", "reasonix-web-fetch")
	req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		var other errOtherHost
		if errors.As(err, &other) {
			msg := fmt.Sprintf("%s redirected to another host: %s\nThe redirect was not followed. To fetch it, call web_fetch with that URL (the permission rules are checked for its host).", u, other.to)
			return tools.Result{Content: msg, Summary: "redirect to another host"}, nil
		}
		var local errLocalAddr
		if errors.As(err, &local) {
			return tools.Result{}, fmt.Errorf("cannot fetch %s: %w", u, local)
		}
		if ctx.Err() == context.DeadlineExceeded {
			return tools.Result{}, fmt.Errorf("fetching %s took longer than %s", u, webFetchTimeout)
		}
		return tools.Result{}, fmt.Errorf("cannot fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return tools.Result{}, fmt.Errorf("reading %s: %w", u, err)
	}
	cut := int64(len(body)) > limit
	if cut {
		body = body[:limit]
	}
	final := resp.Request.URL.String()
	var head strings.Builder
	fmt.Fprintf(&head, "URL: %s\nStatus: %s\n", final, resp.Status)
	ctype := resp.Header.Get("Content-Type")
	if ctype != "" {
		fmt.Fprintf(&head, "Content-Type: %s\n", ctype)
	}
	if cut {
		fmt.Fprintf(&head, "(body cut at %d bytes)\n", limit)
	}
	content := describeBody(ctype, body, final)
	out := head.String() + "\n" + content
	res := tools.Result{Content: tools.Truncate(out, env.Limit()), Summary: resp.Status}
	if resp.StatusCode >= 400 {
		res.IsError = true
	}
	return res, nil
}

// describeBody renders a body by its media type: HTML as Markdown, text
// kinds as they are, anything else as a one-line description.
func describeBody(ctype string, body []byte, base string) string {
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil || mt == "" {
		mt = http.DetectContentType(body)
		mt, _, _ = mime.ParseMediaType(mt)
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return htmlmd.Convert(strings.ToValidUTF8(string(body), "\uFFFD"), base)
	case strings.HasPrefix(mt, "text/"), mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"), mt == "application/javascript":
		if !utf8.Valid(body) {
			return strings.ToValidUTF8(string(body), "\uFFFD")
		}
		return string(body)
	}
	return fmt.Sprintf("(%d bytes of %s; not shown: only HTML and text content is returned)", len(body), mt)
}

// fetchGuard keeps one fetch off the addresses of this machine and its
// networks (tools.LocalAddr) unless its URL named such a host itself, so
// that the gate, which asks a person about those, judged it. The check is
// made on the address each connection goes to, after the name was
// resolved: a name that resolves to 127.0.0.1, or to a public address at
// the gate's look and a private one at the connection's (DNS rebinding),
// reaches nothing local.
type fetchGuard struct {
	// named is true when the URL's host is itself a local address or
	// localhost.
	named  bool
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)

	mu sync.Mutex
	// proxies are the proxies (host:port) the environment sends this
	// fetch through; the guard lets a connection reach them and checks
	// the target's name itself.
	proxies map[string]bool
}

// errLocalAddr refuses a connection to a local address the URL did not
// name.
type errLocalAddr struct{ host, addr, kind string }

func (e errLocalAddr) Error() string {
	return fmt.Sprintf("%s resolves to %s, a %s address: a fetch reaches this machine's or its network's services only at an address its URL names (which a person or a WebFetch rule for that host allows)", e.host, e.addr, e.kind)
}

func (g *fetchGuard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}, nil
	}
	if g.lookup != nil {
		return g.lookup(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// check returns the first of addrs the fetch may reach, or why none.
func (g *fetchGuard) check(host string, addrs []netip.Addr) ([]netip.Addr, error) {
	var ok []netip.Addr
	var refused error
	for _, a := range addrs {
		if kind := tools.LocalAddr(a); kind != "" && !g.named {
			if refused == nil {
				refused = errLocalAddr{host: host, addr: a.Unmap().String(), kind: kind}
			}
			continue
		}
		ok = append(ok, a)
	}
	if len(ok) == 0 {
		if refused == nil {
			refused = fmt.Errorf("%s has no address", host)
		}
		return nil, refused
	}
	return ok, nil
}

// proxy is the transport's Proxy: the environment's choice, whose
// address the dialer then lets through. Through a proxy the guard cannot
// see where the connection goes, so it resolves the target's name itself
// first and refuses a local answer; a name it cannot resolve (behind a
// proxy that resolves for its clients) is the proxy's to judge, as is a
// rebinding between the two looks.
func (g *fetchGuard) proxy(req *http.Request) (*url.URL, error) {
	p, err := http.ProxyFromEnvironment(req)
	if err != nil || p == nil {
		return p, err
	}
	if addrs, err := g.resolve(req.Context(), req.URL.Hostname()); err == nil {
		if _, err := g.check(req.URL.Hostname(), addrs); err != nil {
			return nil, err
		}
	}
	port := p.Port()
	if port == "" {
		port = "80"
		if p.Scheme == "https" {
			port = "443"
		}
	}
	g.mu.Lock()
	if g.proxies == nil {
		g.proxies = map[string]bool{}
	}
	g.proxies[net.JoinHostPort(p.Hostname(), port)] = true
	g.mu.Unlock()
	return p, nil
}

// dial connects to the first address of addr's host the guard lets the
// fetch reach.
func (g *fetchGuard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	g.mu.Lock()
	viaProxy := g.proxies[addr]
	g.mu.Unlock()
	if viaProxy {
		return d.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	ok, err := g.check(host, addrs)
	if err != nil {
		return nil, err
	}
	var first error
	for _, a := range ok {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}
