// Package openai streams completions from OpenAI-compatible
// /chat/completions endpoints. DeepSeek, vLLM, Qwen, MiMo and OpenAI
// itself are configurations of this one kind: the decoder accepts each
// server's quirks, round-trips DeepSeek's reasoning_content and maps its
// cache-hit usage, and transient failures are retried with backoff.
package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/providers"
)

func init() {
	providers.Register("openai", New)
}

// Defaults applied when the configuration leaves a field zero.
const (
	DefaultBaseURL        = "https://api.openai.com/v1"
	DefaultMaxAttempts    = 4
	DefaultRetryBaseDelay = 500 * time.Millisecond
	DefaultRetryMaxDelay  = 30 * time.Second
	// DefaultConnectTimeout, DefaultFirstByteTimeout and DefaultIdleTimeout
	// apply when the provider's configuration leaves them at zero.
	DefaultConnectTimeout   = 10 * time.Second
	DefaultFirstByteTimeout = 60 * time.Second
	DefaultIdleTimeout      = 120 * time.Second
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// maxDrain and drainWait bound what is read after a complete answer to
// keep the connection reusable; a server still sending more is not worth
// waiting on.
const (
	maxDrain  = 4 << 10
	drainWait = 250 * time.Millisecond
)

// StatusError is an HTTP error answer from the server.
type StatusError struct {
	Provider string
	Status   int
	// Message is the server's error message, or the start of the body
	// when it is not the usual {"error":{"message":...}}.
	Message string
	// RetryAfter is what the server asked to wait, zero if nothing.
	RetryAfter time.Duration
	// Attempts is how many requests were made before giving up.
	Attempts int
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.Status, e.Message)
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (gave up after %d attempts)", e.Attempts)
	}
	return s
}

// StatusCode returns the HTTP status, so callers can classify errors of
// any provider through an interface{ StatusCode() int }.
func (e *StatusError) StatusCode() int { return e.Status }

// Retryable reports whether the status is one a later attempt may cure.
func (e *StatusError) Retryable() bool { return retryableStatus(e.Status) }

// StreamError reports a stream that failed after it started: the
// connection broke, the server sent an error event, or a chunk was
// malformed. The answer delivered before it is partial.
type StreamError struct {
	Provider string
	// Bytes counts the reasoning, text and argument bytes received.
	Bytes int
	Err   error
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("%s: stream broken after %d bytes of answer: %v", e.Provider, e.Bytes, e.Err)
}

// Unwrap returns the underlying cause.
func (e *StreamError) Unwrap() error { return e.Err }

// Provider streams from one configured OpenAI-compatible endpoint. It is
// safe for concurrent use.
type Provider struct {
	cfg    providers.Config
	name   string
	url    string
	apiKey string
	client *http.Client
	// transport and dialer are the client's; Preconnect dials ahead
	// through them.
	transport *http.Transport
	dialer    *dialer
}

// New builds a provider from cfg. The API key is cfg.APIKey, else the
// environment variable cfg.APIKeyEnv names.
func New(cfg providers.Config) (providers.Provider, error) {
	return NewProvider(cfg)
}

// NewProvider is New returning the concrete type.
func NewProvider(cfg providers.Config) (*Provider, error) {
	name := cfg.Name
	if name == "" {
		name = "openai"
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("provider %q: base_url %q is not an http(s) URL", name, cfg.BaseURL)
	}
	url := base
	if !strings.HasSuffix(url, "/chat/completions") {
		url += "/chat/completions"
	}
	key := cfg.APIKey
	if key == "" && cfg.APIKeyEnv != "" {
		key = os.Getenv(cfg.APIKeyEnv)
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.RetryBaseDelay <= 0 {
		cfg.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if cfg.RetryMaxDelay <= 0 {
		cfg.RetryMaxDelay = DefaultRetryMaxDelay
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.FirstByteTimeout <= 0 {
		cfg.FirstByteTimeout = DefaultFirstByteTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	d := &dialer{Dialer: net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}}
	transport.DialContext = d.DialContext
	transport.TLSHandshakeTimeout = cfg.ConnectTimeout
	return &Provider{
		cfg:    cfg,
		name:   name,
		url:    url,
		apiKey: key,
		// No client timeout: it would cut long streams. cfg.Timeout is
		// applied per request through the context instead.
		client:    &http.Client{Transport: transport},
		transport: transport,
		dialer:    d,
	}, nil
}

// Name returns the configured provider name.
func (p *Provider) Name() string { return p.name }

// Stream sends req and returns the streamed answer. Failures before the
// stream starts are returned here, after retrying 408, 429, 5xx and
// connection failures and timeouts; a stream that breaks before it
// delivered anything is retried the same way. A failure after part of the
// answer was delivered arrives as a final chunk with Err set and is never
// retried.
func (p *Provider) Stream(ctx context.Context, req providers.Request) (<-chan providers.Chunk, error) {
	body, err := EncodeBody(req, p.cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	parent := ctx
	var cancel context.CancelFunc
	if p.cfg.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, p.cfg.Timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	for attempt := 1; ; attempt++ {
		resp, br, wd, err := p.send(ctx, body)
		if err == nil {
			ch := make(chan providers.Chunk, 16)
			go p.read(parent, ctx, cancel, body, attempt, resp.Body, br, wd, ch)
			return ch, nil
		}
		if ctx.Err() != nil {
			cancel()
			return nil, p.ctxError(ctx)
		}
		if !p.retry(ctx, err, attempt) {
			if ctx.Err() != nil {
				defer cancel()
				return nil, p.ctxError(ctx)
			}
			cancel()
			var se *StatusError
			if !errors.As(err, &se) && attempt > 1 {
				return nil, fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
			}
			return nil, err
		}
	}
}

// retry reports whether another attempt follows a failed one, after
// waiting the backoff (or what the server asked); false when the error is
// final, attempts are used up or ctx ended during the wait.
func (p *Provider) retry(ctx context.Context, err error, attempt int) bool {
	{ // kept as a block: the loop body it came from
		var se *StatusError
		isStatus := errors.As(err, &se)
		if isStatus {
			se.Attempts = attempt
		}
		if (isStatus && !se.Retryable()) || attempt >= p.cfg.MaxAttempts {
			return false
		}
		var wait time.Duration
		if isStatus {
			wait = se.RetryAfter
		}
		if wait > 0 {
			wait = min(wait, p.cfg.RetryMaxDelay)
		} else {
			wait = backoff(attempt, p.cfg.RetryBaseDelay, p.cfg.RetryMaxDelay)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

// ctxError explains a request ended by its context, naming the timeout
// when it was ours rather than the caller's.
func (p *Provider) ctxError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && p.cfg.Timeout > 0 {
		return fmt.Errorf("%s: request timed out after %v: %w", p.name, p.cfg.Timeout, ctx.Err())
	}
	return fmt.Errorf("%s: %w", p.name, ctx.Err())
}

// backoff is exponential with jitter: the nth retry waits between half
// and all of base·2ⁿ⁻¹, capped, so concurrent sessions hitting the same
// rate limit spread out.
func backoff(attempt int, base, limit time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	return half + rand.N(half+1)
}

func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// send makes one attempt. On success the body has delivered its first
// byte, so a connection that fails before answering counts as a failed
// attempt rather than a broken stream.
func (p *Provider) send(ctx context.Context, body []byte) (*http.Response, *bufio.Reader, *watchdog, error) {
	actx, acancel := context.WithCancelCause(ctx)
	wd := newWatchdog(p, acancel)
	resp, br, err := p.sendAttempt(actx, body, wd)
	if err != nil {
		wd.stop()
		if cause := context.Cause(actx); cause != nil && errors.Is(cause, errWatchdog) {
			err = cause
		}
		acancel(nil)
		return nil, nil, nil, err
	}
	return resp, br, wd, nil
}

func (p *Provider) sendAttempt(ctx context.Context, body []byte, wd *watchdog) (*http.Response, *bufio.Reader, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: build request: %w", p.name, err)
	}
	h := hreq.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	h.Set("User-Agent", "reasonix")
	if p.apiKey != "" {
		h.Set("Authorization", "Bearer "+p.apiKey)
	}
	for k, v := range p.cfg.Headers {
		h.Set(k, v)
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
			return nil, nil, fmt.Errorf("%s: could not connect within %v (connect_timeout): %w", p.name, p.cfg.ConnectTimeout, err)
		}
		return nil, nil, fmt.Errorf("%s: %w", p.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, nil, &StatusError{
			Provider:   p.name,
			Status:     resp.StatusCode,
			Message:    errorMessage(resp.StatusCode, raw),
			RetryAfter: retryAfter(resp.Header, time.Now()),
		}
	}
	br := bufio.NewReaderSize(wd.wrap(resp.Body), 32<<10)
	if _, err := br.Peek(1); err != nil {
		resp.Body.Close()
		if err == io.EOF {
			err = errors.New("empty response")
		}
		return nil, nil, fmt.Errorf("%s: %w", p.name, err)
	}
	return resp, br, nil
}

// read decodes the stream into ch and closes it. A server that ignored
// "stream": true and answered with one JSON document is decoded too. A
// stream that breaks before any chunk was delivered is sent again, like a
// failed start, while attempts remain.
func (p *Provider) read(parent, ctx context.Context, cancel context.CancelFunc, reqBody []byte, attempt int,
	body io.ReadCloser, br *bufio.Reader, wd *watchdog, ch chan<- providers.Chunk) {
	defer close(ch)
	defer cancel()
	delivered := false
	emit := func(c providers.Chunk) bool {
		select {
		case ch <- c:
			delivered = true
			return true
		case <-ctx.Done():
			return false
		}
	}
	var err error
	for {
		d := decoder{provider: p.name}
		if first, _ := br.Peek(1); len(first) == 1 && first[0] == '{' {
			err = d.readDocument(br, emit)
		} else {
			err = d.readStream(br, emit)
		}
		if err == nil {
			// What follows [DONE] is a blank line and the end of the chunked
			// body; closing the body before reading them makes the transport
			// drop the connection instead of reusing it for the next request.
			// A server that keeps the response open after the answer must not
			// hold the consumer (ch closes after this), so the wait is bounded.
			wd.stop()
			t := time.AfterFunc(drainWait, cancel)
			_, _ = io.Copy(io.Discard, io.LimitReader(br, maxDrain))
			t.Stop()
			body.Close()
			wd.release()
			return
		}
		if cause := wd.cause(); cause != nil && ctx.Err() == nil {
			err = cause
		}
		wd.stop()
		body.Close()
		wd.release()
		if delivered || ctx.Err() != nil || errors.Is(err, errStopped) {
			break
		}
		// Nothing reached the consumer: try again, as for a failed start.
		var resp *http.Response
		for {
			if !p.retry(ctx, err, attempt) {
				break
			}
			attempt++
			var serr error
			resp, br, wd, serr = p.send(ctx, reqBody)
			if serr == nil {
				break
			}
			err = serr
			resp = nil
		}
		if resp == nil {
			if ctx.Err() == nil && attempt > 1 {
				err = fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
			}
			break
		}
		body = resp.Body
	}
	if ctx.Err() != nil {
		err = p.ctxError(ctx)
	} else if errors.Is(err, errStopped) {
		return
	}
	// The consumer normally waits for this last chunk, even after our own
	// timeout fired; a caller that cancelled may have stopped reading, so
	// it is only offered then, never waited on.
	select {
	case ch <- providers.Chunk{Err: err}:
	default:
		select {
		case ch <- providers.Chunk{Err: err}:
		case <-parent.Done():
		}
	}
}

// errWatchdog marks the errors of the first-byte and idle timeouts.
var errWatchdog = errors.New("provider timeout")

// watchdog enforces first_byte_timeout and idle_timeout on one attempt: a
// timer armed when the request is sent, reset by every read that returns
// data, which cancels the attempt with an error naming the timeout.
type watchdog struct {
	p      *Provider
	cancel context.CancelCauseFunc
	timer  *time.Timer
	mu     sync.Mutex
	got    bool // a byte arrived: silence is now idle_timeout
	fired  error
}

func newWatchdog(p *Provider, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{p: p, cancel: cancel}
	w.timer = time.AfterFunc(p.cfg.FirstByteTimeout, w.fire)
	return w
}

func (w *watchdog) fire() {
	w.mu.Lock()
	var err error
	if w.got {
		err = fmt.Errorf("%s: the stream was silent for %v (idle_timeout): %w", w.p.name, w.p.cfg.IdleTimeout, errWatchdog)
	} else {
		err = fmt.Errorf("%s: no answer within %v of sending the request (first_byte_timeout): %w", w.p.name, w.p.cfg.FirstByteTimeout, errWatchdog)
	}
	w.fired = err
	w.mu.Unlock()
	w.cancel(err)
}

// cause is the timeout that fired, or nil.
func (w *watchdog) cause() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

func (w *watchdog) stop() { w.timer.Stop() }

// release ends the attempt's context once its body is closed.
func (w *watchdog) release() { w.cancel(nil) }

func (w *watchdog) wrap(r io.ReadCloser) io.Reader { return watchedReader{w, r} }

type watchedReader struct {
	w *watchdog
	r io.Reader
}

func (wr watchedReader) Read(b []byte) (int, error) {
	n, err := wr.r.Read(b)
	if n > 0 {
		wr.w.mu.Lock()
		wr.w.got = true
		if wr.w.fired == nil {
			wr.w.timer.Reset(wr.w.p.cfg.IdleTimeout)
		}
		wr.w.mu.Unlock()
	}
	return n, err
}

// readDocument decodes a non-streamed chat.completion (or an error
// document sent with status 200) into the same chunks a stream yields.
func (d *decoder) readDocument(r io.Reader, emit func(providers.Chunk) bool) error {
	var doc struct {
		Choices []struct {
			Index        int     `json:"index"`
			Message      wireMsg `json:"message"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
		Error *wireError `json:"error"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return &StreamError{Provider: d.provider, Err: fmt.Errorf("malformed response: %w", err)}
	}
	c := wireChunk{Usage: doc.Usage, Error: doc.Error}
	for _, ch := range doc.Choices {
		wc := wireChoice{Index: ch.Index, FinishReason: ch.FinishReason}
		wc.Delta.Content = ch.Message.Content
		wc.Delta.ReasoningContent = ch.Message.ReasoningContent
		for i, tc := range ch.Message.ToolCalls {
			idx := i
			var td wireToolDelta
			td.Index = &idx
			td.ID = tc.ID
			td.Function.Name = tc.Function.Name
			td.Function.Arguments = tc.Function.Arguments
			wc.Delta.ToolCalls = append(wc.Delta.ToolCalls, td)
		}
		c.Choices = append(c.Choices, wc)
	}
	if err := d.apply(&c, emit); err != nil {
		return err
	}
	return d.final(emit)
}

type wireMsg struct {
	Content          text `json:"content"`
	ReasoningContent text `json:"reasoning_content"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments text   `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// errorMessage extracts the server's explanation from an error body:
// OpenAI's {"error":{"message"}}, {"error":"..."}, {"message"} or
// FastAPI's {"detail"}; otherwise the start of the body itself.
func errorMessage(status int, raw []byte) string {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &doc) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case len(doc.Error) > 0 && json.Unmarshal(doc.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case len(doc.Error) > 0 && json.Unmarshal(doc.Error, &s) == nil && s != "":
			return s
		case doc.Message != "":
			return doc.Message
		case len(doc.Detail) > 0 && json.Unmarshal(doc.Detail, &s) == nil && s != "":
			return s
		case len(doc.Detail) > 0:
			return string(doc.Detail)
		}
	}
	msg := strings.TrimSpace(string(raw))
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return msg
}

// retryAfter reads how long the server asked to wait: OpenAI's
// retry-after-ms, else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// ContextWindow is the context size of model (providers.Windowed).
func (p *Provider) ContextWindow(model string) int { return p.cfg.WindowFor(model) }

// PriceFor is the price of model (providers.Priced).
func (p *Provider) PriceFor(model string) (providers.Price, bool) { return p.cfg.PriceFor(model) }

// FlattensSchemas reports the flatten_schemas setting (providers.Flattener).
func (p *Provider) FlattensSchemas() bool { return p.cfg.Flattens() }
