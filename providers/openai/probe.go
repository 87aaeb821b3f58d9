package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ProbeTimeout bounds one [Probe] when its context has no deadline.
const ProbeTimeout = 15 * time.Second

// Probe checks that an OpenAI-compatible endpoint answers with key: it
// lists the models (GET /models) and returns their ids. A server without
// that route (404, 405) is asked for one token of a chat completion with
// model instead, and Probe then returns nil models. The error says what
// failed in words a person can act on (unreachable, key refused, ...).
func Probe(ctx context.Context, baseURL, key, model string) ([]string, error) {
	ids, _, err := ProbeWindows(ctx, baseURL, key, model)
	return ids, err
}

// ProbeWindows is [Probe] that also returns the context window of each
// model whose listing states one (vLLM's max_model_len, OpenRouter's
// context_length), by id: a self-hosted server's window is known to no
// preset, and without it nothing is compacted on its own.
func ProbeWindows(ctx context.Context, baseURL, key, model string) ([]string, map[string]int, error) {
	ctx, cancel := probeContext(ctx)
	defer cancel()
	base := strings.TrimRight(baseURL, "/")
	ids, windows, status, body, err := listModels(ctx, base, key)
	if err != nil || status == http.StatusOK {
		return ids, windows, err
	}
	if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
		return nil, nil, probeError(base+"/models", status, body)
	}
	if model == "" {
		return nil, nil, fmt.Errorf("%s has no /models route; give the model name to test it", base)
	}
	req, _ := json.Marshal(map[string]any{
		"model":      model,
		"messages":   []map[string]string{{"role": "user", "content": "Say OK."}},
		"max_tokens": 1,
	})
	status, body, err = probeDo(ctx, http.MethodPost, base+"/chat/completions", key, req)
	if err != nil {
		return nil, nil, err
	}
	if status != http.StatusOK {
		return nil, nil, probeError(base+"/chat/completions", status, body)
	}
	return nil, nil, nil
}

// ListModels returns the ids of the models an OpenAI-compatible endpoint
// lists (GET /models), bounded by ProbeTimeout when ctx has no deadline.
func ListModels(ctx context.Context, baseURL, key string) ([]string, error) {
	ctx, cancel := probeContext(ctx)
	defer cancel()
	base := strings.TrimRight(baseURL, "/")
	ids, _, status, body, err := listModels(ctx, base, key)
	if err != nil || status == http.StatusOK {
		return ids, err
	}
	if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
		return nil, fmt.Errorf("%s has no /models route", base)
	}
	return nil, probeError(base+"/models", status, body)
}

// listModels asks base's /models; the ids (and the windows the listing
// states) are set when it answered 200.
func listModels(ctx context.Context, base, key string) ([]string, map[string]int, int, []byte, error) {
	status, body, err := probeDo(ctx, http.MethodGet, base+"/models", key, nil)
	if err != nil || status != http.StatusOK {
		return nil, nil, status, body, err
	}
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			MaxModelLen   int    `json:"max_model_len"`  // vLLM
			ContextLength int    `json:"context_length"` // OpenRouter
		} `json:"data"`
		Models []struct { // Ollama's native shape, in case
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, nil, status, body, fmt.Errorf("%s/models answered, but not with a model list (%v); is the base URL right?", base, err)
	}
	ids := make([]string, 0, len(list.Data))
	windows := map[string]int{}
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
			if w := max(m.MaxModelLen, m.ContextLength); w > 0 {
				windows[m.ID] = w
			}
		}
	}
	for _, m := range list.Models {
		if m.Name != "" {
			ids = append(ids, m.Name)
		}
	}
	return ids, windows, status, body, nil
}

func probeDo(ctx context.Context, method, url, key string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("bad base URL: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("cannot reach %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return resp.StatusCode, b, nil
}

func probeError(url string, status int, body []byte) error {
	msg := errorMessage(status, body)
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%s refused the key (HTTP %d): %s", url, status, msg)
	}
	return fmt.Errorf("%s answered HTTP %s: %s", url, strconv.Itoa(status), msg)
}

// probeContext bounds ctx by ProbeTimeout unless it has a deadline.
func probeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, ProbeTimeout)
}
