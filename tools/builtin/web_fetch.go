package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
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

type webFetchTool struct{}

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

func (webFetchTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
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
	client := &http.Client{
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
