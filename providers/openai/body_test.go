package openai

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers"
)

func TestEncodeBodyShape(t *testing.T) {
	req := providers.Request{
		Messages: []providers.Message{
			{Role: "user", Content: "a<b"},
			{Role: "assistant", ReasoningContent: "why", ToolCalls: []providers.ToolCall{{ID: "c", Type: "function", Function: providers.FunctionCall{Name: "f", Arguments: "{}"}}}},
			{Role: "tool", ToolCallID: "c", Content: "r"},
			{Role: "assistant", Content: "final", ReasoningContent: "dropped"},
		},
		Tools: []providers.ToolSpec{{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}},
	}
	got, err := EncodeBody(req, providers.Config{Models: []string{"m1", "m2"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m1","messages":[{"role":"user","content":"a<b"},` +
		`{"role":"assistant","content":"","reasoning_content":"why","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","content":"r","tool_call_id":"c"},{"role":"assistant","content":"final"}],` +
		`"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}],` +
		`"stream":true,"stream_options":{"include_usage":true}}`
	if string(got) != want {
		t.Fatalf("body\n got %s\nwant %s", got, want)
	}
	// Encoding the messages one by one gives the same bytes, so sessions
	// can pre-encode with providers.EncodeMessage.
	var enc []json.RawMessage
	for _, m := range req.Messages {
		raw, err := providers.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, raw)
	}
	req.Encoded = enc
	again, err := EncodeBody(req, providers.Config{Models: []string{"m1"}})
	if err != nil || string(again) != want {
		t.Fatalf("pre-encoded body differs: %s (%v)", again, err)
	}
}

func TestEncodeBodyOptions(t *testing.T) {
	temp := 0.0
	got, err := EncodeBody(providers.Request{Model: "m", MaxTokens: 7, Temperature: &temp},
		providers.Config{Thinking: "disabled", ReasoningEffort: "low"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(got), `"max_tokens":7,"temperature":0,"thinking":{"type":"disabled"},"reasoning_effort":"low"}`) {
		t.Fatalf("body %s", got)
	}
	if _, err := EncodeBody(providers.Request{Model: "m", Messages: make([]providers.Message, 2), Encoded: make([]json.RawMessage, 1)}, providers.Config{}); err == nil {
		t.Fatal("mismatched Encoded accepted")
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.25"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After-Ms": {"150"}, "Retry-After": {"9"}}, 150 * time.Millisecond},
		{http.Header{}, 0},
	}
	for _, c := range cases {
		if got := retryAfter(c.h, now); got != c.want {
			t.Errorf("%v: got %v want %v", c.h, got, c.want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	base, limit := 100*time.Millisecond, time.Second
	for attempt := 1; attempt <= 8; attempt++ {
		full := min(base<<(attempt-1), limit)
		for range 50 {
			d := backoff(attempt, base, limit)
			if d < full/2 || d > full {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, full/2, full)
			}
		}
	}
}

func TestErrorMessage(t *testing.T) {
	cases := map[string]string{
		`{"error":{"message":"invalid api key","type":"authentication_error"}}`: "invalid api key",
		`{"error":"model not found"}`:                                           "model not found",
		`{"message":"bad things"}`:                                              "bad things",
		`{"detail":"Not Found"}`:                                                "Not Found",
		`{"detail":[{"loc":["body"],"msg":"field required"}]}`:                  `[{"loc":["body"],"msg":"field required"}]`,
		`<html>502 Bad Gateway</html>`:                                          `<html>502 Bad Gateway</html>`,
		``:                                                                      "Bad Gateway",
	}
	for in, want := range cases {
		if got := errorMessage(502, []byte(in)); got != want {
			t.Errorf("%s: got %q want %q", in, got, want)
		}
	}
}
