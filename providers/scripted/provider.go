package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/reasonix/reasonix/providers"
)

func init() {
	providers.Register("scripted", New)
}

// ErrStreamCut is the cause carried by the error chunk of a turn with
// CutAfter, standing in for a dropped connection.
var ErrStreamCut = errors.New("stream cut by script")

// StatusError is returned by Stream for a turn with a Status, mirroring
// the HTTP error a real provider would report.
type StatusError struct {
	Provider   string
	Status     int
	Message    string
	RetryAfter string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.Status, e.Message)
}

// StatusCode returns the HTTP status, so callers can classify errors of
// any provider through an interface{ StatusCode() int }.
func (e *StatusError) StatusCode() int { return e.Status }

// Provider replays a script in process. It is safe for concurrent use.
type Provider struct {
	name string
	q    *Queue
	// cfg is the configuration it was built from (zero from a script).
	cfg providers.Config

	mu   sync.Mutex
	reqs []providers.Request
}

// New builds a scripted provider from cfg.Script, a script file path.
func New(cfg providers.Config) (providers.Provider, error) {
	if cfg.Script == "" {
		return nil, fmt.Errorf("provider %q: kind scripted needs a script path", cfg.Name)
	}
	s, err := Load(cfg.Script)
	if err != nil {
		return nil, fmt.Errorf("provider %q: %w", cfg.Name, err)
	}
	p := NewFromScript(s)
	p.cfg = cfg
	if cfg.Name != "" {
		p.name = cfg.Name
	}
	return p, nil
}

// NewFromScript builds a provider named "scripted" over s.
func NewFromScript(s *Script) *Provider {
	return &Provider{name: "scripted", q: NewQueue(s)}
}

// Name returns the provider's configured name.
func (p *Provider) Name() string { return p.name }

// ContextWindow is the context size of model: the configured
// context_window, else the model's known size (providers.Windowed).
func (p *Provider) ContextWindow(model string) int { return p.cfg.WindowFor(model) }

// Queue exposes the turn queue, e.g. to check Remaining after a test.
func (p *Provider) Queue() *Queue { return p.q }

// Requests returns the requests received so far, in arrival order. They
// share the caller's message slices, clipped to their length at the time
// of the request.
func (p *Provider) Requests() []providers.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providers.Request(nil), p.reqs...)
}

// Stream serves the next eligible turn. A Status turn fails here with a
// *StatusError; every other turn streams reasoning pieces, text pieces
// and a final chunk with the complete tool calls, usage and finish reason.
func (p *Provider) Stream(ctx context.Context, req providers.Request) (<-chan providers.Chunk, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	// Clipping (not copying) keeps recording O(1) per request over a long
	// session while a later append by the caller still cannot show
	// through; history is append-only, so nothing rewrites it in place.
	rec := req
	rec.Messages = req.Messages[:len(req.Messages):len(req.Messages)]
	rec.Encoded = req.Encoded[:len(req.Encoded):len(req.Encoded)]
	p.mu.Lock()
	p.reqs = append(p.reqs, rec)
	p.mu.Unlock()

	turn, _ := p.q.next(func() []byte { return matchBody(req) })
	if turn.DelayMS > 0 {
		if err := sleep(ctx, time.Duration(turn.DelayMS)*time.Millisecond); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	if turn.Status != 0 {
		msg := turn.ErrorBody
		if msg == "" {
			msg = http.StatusText(turn.Status)
		}
		return nil, &StatusError{Provider: p.name, Status: turn.Status, Message: msg, RetryAfter: turn.RetryAfter}
	}
	ch := make(chan providers.Chunk, bufferFor(turn))
	go p.play(ctx, turn, ch)
	return ch, nil
}

// bufferFor sizes the channel to hold the whole turn when it is small, so
// an instant provider never makes the consumer and the player goroutine
// hand off chunk by chunk.
func bufferFor(t Turn) int {
	if t.ChunkSize <= 0 {
		return 4
	}
	n := (len(t.Reasoning)+len(t.Text))/t.ChunkSize + 2
	return min(n, 64)
}

func (p *Provider) play(ctx context.Context, t Turn, ch chan<- providers.Chunk) {
	defer close(ch)
	sent := 0
	delay := time.Duration(t.ChunkDelayMS) * time.Millisecond
	// send reports false when the stream must stop: the context ended or
	// the script cut the stream.
	send := func(c providers.Chunk) bool {
		if delay > 0 && sent > 0 {
			if err := sleep(ctx, delay); err != nil {
				p.fail(ctx, ch, sent, err)
				return false
			}
		}
		select {
		case ch <- c:
		case <-ctx.Done():
			p.fail(ctx, ch, sent, ctx.Err())
			return false
		}
		sent++
		if t.CutAfter > 0 && sent == t.CutAfter {
			p.fail(ctx, ch, sent, ErrStreamCut)
			return false
		}
		return true
	}
	for _, piece := range Pieces(t.Reasoning, t.ChunkSize) {
		if !send(providers.Chunk{Reasoning: piece}) {
			return
		}
	}
	for _, piece := range Pieces(t.Text, t.ChunkSize) {
		if !send(providers.Chunk{Text: piece}) {
			return
		}
	}
	final := providers.Chunk{FinishReason: "stop"}
	if len(t.ToolCalls) > 0 {
		final.FinishReason = "tool_calls"
		final.ToolCalls = make([]providers.ToolCall, len(t.ToolCalls))
		for i, c := range t.ToolCalls {
			final.ToolCalls[i] = providers.ToolCall{
				ID:       c.ID,
				Type:     "function",
				Function: providers.FunctionCall{Name: c.Name, Arguments: CallArguments(c)},
			}
		}
		// Tool-call deltas count as content chunks on the wire; in
		// process the calls arrive whole, so a cut that would land
		// inside them lands here, before any call is delivered.
		if t.CutAfter > sent && t.CutAfter <= sent+toolChunks(t) {
			p.fail(ctx, ch, sent, ErrStreamCut)
			return
		}
	}
	if t.FinishReason != "" {
		final.FinishReason = t.FinishReason
	}
	if t.Usage != nil {
		u := *t.Usage
		final.Usage = &u
	}
	select {
	case ch <- final:
	case <-ctx.Done():
		p.fail(ctx, ch, sent, ctx.Err())
	}
}

// toolChunks counts the wire chunks of a turn's tool calls: one carrying
// each call's id and name, then one per argument piece.
func toolChunks(t Turn) int {
	n := 0
	for _, c := range t.ToolCalls {
		n += 1 + len(Pieces(c.Arguments, t.ChunkSize))
	}
	return n
}

// fail delivers the terminal error chunk. When the context has ended the
// consumer may be gone, so the chunk is only offered, never waited on.
func (p *Provider) fail(ctx context.Context, ch chan<- providers.Chunk, sent int, err error) {
	if ctx.Err() != nil {
		c := providers.Chunk{Err: fmt.Errorf("%s: %w", p.name, err)}
		select {
		case ch <- c:
		default:
		}
		return
	}
	c := providers.Chunk{Err: fmt.Errorf("%s: stream broken after %d chunks: %w", p.name, sent, err)}
	select {
	case ch <- c:
	case <-ctx.Done():
	}
}

// matchBody renders the request the way Match sees it: the JSON encoding
// of the messages, using the caller's pre-encoded bytes when present.
func matchBody(req providers.Request) []byte {
	if len(req.Encoded) > 0 {
		var b bytes.Buffer
		for i, m := range req.Encoded {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(m)
		}
		return b.Bytes()
	}
	b, err := json.Marshal(req.Messages)
	if err != nil {
		return nil
	}
	return b
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PriceFor is the configured price of model (providers.Priced).
func (p *Provider) PriceFor(model string) (providers.Price, bool) { return p.cfg.PriceFor(model) }

// FlattensSchemas reports the flatten_schemas setting (providers.Flattener).
func (p *Provider) FlattensSchemas() bool { return p.cfg.Flattens() }
