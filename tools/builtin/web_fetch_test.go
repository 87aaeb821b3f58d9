package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/tools"
)

func webServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>T</title><script>var x=1</script></head><body><h1>Release notes</h1><p>Read <a href="/docs">the docs</a> and <strong>upgrade</strong>.</p></body></html>`)
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"version": "1.2.3"}`)
	})
	mux.HandleFunc("/blob", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(make([]byte, 300))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("x", 5000))
	})
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/data.json", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		// Same server, another host name: the gate judged 127.0.0.1 only.
		http.Redirect(w, r, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+"/data.json", http.StatusFound)
	})
	t.Cleanup(srv.Close)
	return srv
}

func fetch(t *testing.T, args string) (tools.Result, error) {
	t.Helper()
	return webFetchTool{}.Execute(context.Background(), tools.NewEnv(t.TempDir()), json.RawMessage(args))
}

func TestWebFetch(t *testing.T) {
	srv := webServer(t)
	cases := []struct {
		path string
		args string
		want []string
		not  []string
	}{
		{"/page", "", []string{"# Release notes", "[the docs](" + srv.URL + "/docs)", "**upgrade**", "Status: 200 OK"}, []string{"<h1>", "var x"}},
		{"/data.json", "", []string{`{"version": "1.2.3"}`}, nil},
		{"/blob", "", []string{"300 bytes of image/png; not shown"}, nil},
		{"/big", `,"max_bytes":100`, []string{"(body cut at 100 bytes)", strings.Repeat("x", 100)}, []string{strings.Repeat("x", 101)}},
		{"/same", "", []string{"URL: " + srv.URL + "/data.json", "1.2.3"}, nil},
		{"/away", "", []string{"redirected to another host: http://localhost:", "not followed"}, []string{"1.2.3"}},
	}
	for _, c := range cases {
		res, err := fetch(t, `{"url":"`+srv.URL+c.path+`"`+c.args+`}`)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(res.Content, w) {
				t.Errorf("%s: result lacks %q:\n%s", c.path, w, res.Content)
			}
		}
		for _, n := range c.not {
			if strings.Contains(res.Content, n) {
				t.Errorf("%s: result has %q:\n%s", c.path, n, res.Content)
			}
		}
	}
	if res, err := fetch(t, `{"url":"`+srv.URL+`/nothing"}`); err != nil || !res.IsError || !strings.Contains(res.Content, "404") {
		t.Errorf("404: %v %+v", err, res)
	}
	if _, err := fetch(t, `{"url":"`+srv.URL+`/loop"}`); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("redirect loop: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := (webFetchTool{}).Execute(ctx, tools.NewEnv(t.TempDir()), json.RawMessage(`{"url":"`+srv.URL+`/slow"}`)); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("a cancelled fetch: %v after %s", err, time.Since(start))
	}
}

func TestWebFetchAccess(t *testing.T) {
	acc, err := webFetchTool{}.Access(json.RawMessage(`{"url":"https://example.com/a?b=1"}`))
	if err != nil || acc.Kind != tools.KindNetwork || acc.URL != "https://example.com/a?b=1" {
		t.Errorf("access %+v %v", acc, err)
	}
	for _, bad := range []string{`{"url":"file:///etc/passwd"}`, `{"url":"ftp://x.org/"}`, `{"url":"/relative"}`, `{"url":""}`, `{"url":"https://u:p@x.org/"}`} {
		if _, err := (webFetchTool{}).Access(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
