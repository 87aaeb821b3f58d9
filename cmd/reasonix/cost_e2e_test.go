package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
)

// pricedConfig prices the scripted server's model: 0.1 per million
// cache-hit tokens, 1 per million misses, 2 per million output tokens.
func pricedConfig(e *e2e, extra string) {
	e.writeUserConfig(`[[providers]]
name = "priced"
base_url = "` + e.srv.URL() + `"
model = "test-model"
price = { input_hit = 0.1, input_miss = 1.0, output = 2.0 }
` + extra)
}

func TestE2ECostAndCacheStats(t *testing.T) {
	t.Parallel()
	u := &providers.Usage{PromptTokens: 1000, CompletionTokens: 100, CacheHitTokens: 800, CacheMissTokens: 200}
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "notes.txt"})}, Usage: u},
		scripted.Turn{Text: "remember-the-milk", Usage: u},
	)
	e.write("notes.txt", "remember-the-milk\n")
	pricedConfig(e, "")
	// Per request: (800*0.1 + 200*1 + 100*2) / 1e6 = 0.00048; two requests.
	const want = 0.00096
	r := e.run("", "run", "--output-format", "json", "read the notes")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	out := decodeRun(t, r)
	if out.Usage.CacheHitTokens != 1600 || out.Usage.CacheMissTokens != 400 || out.Usage.CacheHitRatio != 0.8 {
		t.Errorf("usage = %+v", out.Usage)
	}
	if out.Cost == nil || math.Abs(*out.Cost-want) > 1e-12 || out.Currency != "USD" {
		t.Errorf("cost = %v %q, want %v USD", out.Cost, out.Currency, want)
	}

	// The text run ends with the same figures.
	e2 := newE2E(t, scripted.Turn{Text: "hi", Usage: u})
	pricedConfig(e2, "")
	r = e2.run("", "run", "hi")
	if last := lastLine(r.stderr); !strings.Contains(last, "80.0% hit") || !strings.Contains(last, "cost 0.000480 USD") {
		t.Errorf("final line = %q", last)
	}

	// reasonix stats reads the same from the session file.
	r = e.run("", "stats", "--json", out.Session)
	if r.code != 0 {
		t.Fatalf("stats: exit %d\n%s", r.code, r.stderr)
	}
	var st struct {
		Requests int `json:"requests"`
		Turns    []struct {
			Turn     int      `json:"turn"`
			Requests int      `json:"requests"`
			Tools    []string `json:"tools"`
		} `json:"turns"`
		Total struct {
			CacheHitTokens int     `json:"cache_hit_tokens"`
			CacheHitRatio  float64 `json:"cache_hit_ratio"`
			Cost           float64 `json:"cost"`
			Currency       string  `json:"currency"`
		} `json:"total"`
		Prefixes int   `json:"prefixes"`
		Resets   []any `json:"resets"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("stats json: %v\n%s", err, r.stdout)
	}
	if st.Requests != 2 || len(st.Turns) != 1 || st.Turns[0].Requests != 2 || strings.Join(st.Turns[0].Tools, ",") != "read_file" {
		t.Errorf("stats = %+v", st)
	}
	if st.Total.CacheHitTokens != 1600 || st.Total.CacheHitRatio != 0.8 || math.Abs(st.Total.Cost-want) > 1e-12 || st.Total.Currency != "USD" {
		t.Errorf("stats total = %+v", st.Total)
	}
	if st.Prefixes != 1 || len(st.Resets) != 0 {
		t.Errorf("prefixes %d, resets %v: want one prefix, no reset", st.Prefixes, st.Resets)
	}
	r = e.run("", "stats")
	for _, w := range []string{"80.0%", "0.000960 USD", "cache resets: 0"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stats text lacks %q:\n%s", w, r.stdout)
		}
	}
	assertFingerprints(t, e, out.Session)
}

// assertFingerprints checks the prefix fingerprint each request record of
// the session holds against the bytes the server received: the SHA-256 of
// the system message and the tools array as sent.
func assertFingerprints(t *testing.T, e *e2e, id string) {
	t.Helper()
	l, err := store.Load(filepath.Join(e.repo, ".reasonix", "sessions", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.srv.Requests()
	if len(l.Requests) != len(reqs) {
		t.Fatalf("%d request records for %d requests", len(l.Requests), len(reqs))
	}
	for i, body := range reqs {
		var m struct {
			Messages []json.RawMessage `json:"messages"`
			Tools    json.RawMessage   `json:"tools"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if len(m.Messages) > 0 && bytes.Contains(m.Messages[0], []byte(`"role":"system"`)) {
			h.Write(m.Messages[0])
		}
		h.Write(m.Tools)
		if got := hex.EncodeToString(h.Sum(nil)); got != l.Requests[i].Prefix {
			t.Errorf("request %d: fingerprint %s recorded, %s sent", i, l.Requests[i].Prefix, got)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestE2EBudgetStopsGoal(t *testing.T) {
	t.Parallel()
	u := &providers.Usage{PromptTokens: 1000, CompletionTokens: 100, CacheHitTokens: 0, CacheMissTokens: 1000}
	var turns []scripted.Turn
	for range 6 {
		turns = append(turns, scripted.Turn{ToolCalls: []scripted.Call{call("goal_status", map[string]any{"status": "continue", "summary": "still going"})}, Usage: u})
	}
	e := newE2E(t, turns...)
	// Each request costs (1000*1 + 100*2) / 1e6 = 0.0012. Half a cent
	// pays for four (0.0048); a fifth would pass it. (The first request
	// is estimated from the prompt's size, ~1 USD per million bytes/4,
	// well under the budget.)
	pricedConfig(e, "[agent]\nbudget = 0.005\n")
	r := e.run("", "run", "--goal", "polish everything")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "budget reached: this run has cost 0.004800 USD of its 0.005000 USD budget") {
		t.Errorf("no clear budget message:\n%s", r.stderr)
	}
	if n := len(e.srv.Requests()); n != 4 {
		t.Errorf("requests = %d, want 4 (a fifth would pass the budget)", n)
	}
}
