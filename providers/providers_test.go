package providers

import (
	"encoding/json"
	"testing"
)

func TestToolSpecMarshalJSON(t *testing.T) {
	cases := []struct {
		name string
		spec ToolSpec
		want string
	}{
		{
			name: "function wrapper",
			spec: ToolSpec{Name: "grep", Description: "search <files>", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			want: `{"type":"function","function":{"name":"grep","description":"search \u003cfiles\u003e","parameters":{"type":"object","properties":{}}}}`,
		},
		{
			name: "nil parameters encode as null",
			spec: ToolSpec{Name: "noop"},
			want: `{"type":"function","function":{"name":"noop","description":"","parameters":null}}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.Marshal(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
			// A slice of specs uses the same method (value receiver).
			arr, err := json.Marshal([]ToolSpec{c.spec})
			if err != nil || string(arr) != "["+c.want+"]" {
				t.Fatalf("slice: %s (%v)", arr, err)
			}
		})
	}
	if _, err := json.Marshal(ToolSpec{Name: "bad", Parameters: json.RawMessage(`{`)}); err == nil {
		t.Fatal("invalid parameters schema marshalled without error")
	}
}

func TestUsageAdd(t *testing.T) {
	u := Usage{PromptTokens: 1, CompletionTokens: 2, CacheHitTokens: 3, CacheMissTokens: 4, ReasoningTokens: 5}
	u.Add(Usage{PromptTokens: 10, CompletionTokens: 20, CacheHitTokens: 30, CacheMissTokens: 40, ReasoningTokens: 50})
	u.Add(Usage{})
	want := Usage{PromptTokens: 11, CompletionTokens: 22, CacheHitTokens: 33, CacheMissTokens: 44, ReasoningTokens: 55}
	if u != want {
		t.Fatalf("got %+v want %+v", u, want)
	}
}
