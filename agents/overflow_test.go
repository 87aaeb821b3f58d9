package agents

import (
	"errors"
	"fmt"
	"testing"
)

type statusErr struct {
	code int
	msg  string
}

func (e statusErr) Error() string   { return e.msg }
func (e statusErr) StatusCode() int { return e.code }

func TestContextOverflow(t *testing.T) {
	for _, c := range []struct {
		err   error
		limit int
		ok    bool
	}{
		{statusErr{400, "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens"}, 65536, true},
		{fmt.Errorf("run: %w", statusErr{400, "openrouter: HTTP 400: This endpoint's maximum context length is 163840 tokens."}), 163840, true},
		{statusErr{400, "the request exceeds the available context size, try increasing it"}, 0, true},
		{statusErr{400, "The input (9000 tokens) is longer than the model's context length (8192 tokens)."}, 8192, true},
		{statusErr{400, "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 129024]"}, 129024, true},
		{statusErr{400, "Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens"}, 4096, true},
		{statusErr{400, "invalid tool schema"}, 0, false},
		{statusErr{500, "maximum context length is 10 tokens"}, 0, false},
		{errors.New("maximum context length is 10 tokens"), 0, false},
	} {
		limit, ok := contextOverflow(c.err)
		if limit != c.limit || ok != c.ok {
			t.Errorf("%v: got %d %v, want %d %v", c.err, limit, ok, c.limit, c.ok)
		}
	}
}
