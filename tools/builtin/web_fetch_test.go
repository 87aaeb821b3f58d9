package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
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

// TestWebFetchLocalAddresses: a host name that resolves to an address of
// this machine or its network (an attacker's domain pointed at 127.0.0.1,
// a rebinding between the gate's look and the connection, the cloud
// metadata name) reaches nothing; a URL that names a local address
// itself, which the gate asks a person about, does.
func TestWebFetchLocalAddresses(t *testing.T) {
	t.Parallel()
	srv := webServer(t)
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	names := map[string][]netip.Addr{
		"rebind.example":           {netip.MustParseAddr("127.0.0.1")},
		"mapped.example":           {netip.MustParseAddr("::ffff:127.0.0.1")},
		"metadata.google.internal": {netip.MustParseAddr("169.254.169.254")},
		"lan.example":              {netip.MustParseAddr("10.1.2.3")},
		"localhost":                {netip.MustParseAddr("127.0.0.1")},
	}
	tool := webFetchTool{lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := names[host]; ok {
			return a, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}}
	run := func(u string) (tools.Result, error) {
		return tool.Execute(context.Background(), tools.NewEnv(t.TempDir()), json.RawMessage(`{"url":"`+u+`"}`))
	}
	for host, kind := range map[string]string{"rebind.example": "loopback", "mapped.example": "loopback",
		"metadata.google.internal": "link-local", "lan.example": "private"} {
		res, err := run("http://" + host + ":" + port + "/data.json")
		if err == nil || !strings.Contains(err.Error(), "a "+kind+" address") || strings.Contains(res.Content, "1.2.3") {
			t.Errorf("%s: %v %q", host, err, res.Content)
		}
	}
	for _, u := range []string{srv.URL + "/data.json", "http://localhost:" + port + "/data.json"} {
		if res, err := run(u); err != nil || !strings.Contains(res.Content, "1.2.3") {
			t.Errorf("%s, named by the URL: %v %q", u, err, res.Content)
		}
	}
}

func TestLocalHost(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"localhost": "loopback", "LOCALHOST.": "loopback", "app.localhost": "loopback", "127.0.0.1": "loopback",
		"127.1.2.3": "loopback", "[::1]": "loopback", "::ffff:127.0.0.1": "loopback", "169.254.169.254": "link-local",
		"fe80::1%eth0": "link-local", "10.0.0.1": "private", "192.168.1.1": "private", "172.16.0.1": "private",
		"fd00::1": "private", "0.0.0.0": "unspecified", "::": "unspecified", "100.100.100.200": "shared",
		"239.1.1.1": "multicast", "example.com": "", "8.8.8.8": "", "2606:4700::1111": "", "localhost.example.com": "",
		"64:ff9b::a9fe:a9fe": "NAT64", "2002:7f00:1::": "6to4",
	} {
		if got := tools.LocalHost(host); got != want {
			t.Errorf("LocalHost(%q) = %q, want %q", host, got, want)
		}
	}
}
