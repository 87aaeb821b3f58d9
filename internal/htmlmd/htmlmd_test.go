package htmlmd

import (
	"strings"
	"testing"
	"time"
)

func TestConvert(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>T</title><style>p{color:red}</style><script>var secret = 1;</script></head>
<body><!-- a comment --><nav><a href="#top">skip</a></nav>
<h1>Release   notes</h1>
<p>Read <a href="/docs/a?b=1&amp;c=2">the docs</a> and <strong>upgrade</strong> now.<br>Second line &lt;tag&gt; &copy;</p>
<ul><li>one</li><li>two <em>fast</em><ol><li>sub a</li><li>sub b</li></ol></li></ul>
<pre><code>if a &lt; b {
    return
}</code></pre>
<p>Run <code>make install</code>.</p><img src="logo.png" alt="Logo">
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
<SCRIPT type="x">alert(1)</SCRIPT><p>end</p></body></html>`
	got := Convert(page, "https://example.com/dir/page.html")
	for _, want := range []string{
		"# Release notes\n",
		"Read [the docs](https://example.com/docs/a?b=1&c=2) and **upgrade** now.\nSecond line <tag> ©",
		"- one\n- two _fast_\n  1. sub a\n  2. sub b",
		"```\nif a < b {\n    return\n}\n```",
		"Run `make install`.",
		"![Logo](https://example.com/dir/logo.png)",
		"| k | v",
		"| a | 1",
		"end\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q in:\n%s", want, got)
		}
	}
	for _, not := range []string{"secret", "color:red", "alert", "comment", "<p>", "[skip]", "\n\n\n"} {
		if strings.Contains(got, not) {
			t.Errorf("has %q in:\n%s", not, got)
		}
	}
}

func TestConvertBroken(t *testing.T) {
	for _, page := range []string{"", "<", "a < b > c", "<a href=\"x", "<p", "<script>never closed", "<!-- open", "<<<>>>", "</ul></li>"} {
		_ = Convert(page, "::bad")
	}
	if got := Convert("<h2></h2><p>x</p><ul><li></li><li>y</li></ul>", ""); got != "##\n\nx\n\n-\n- y\n" {
		t.Errorf("%q", got)
	}
	if got := Convert("a < b", ""); got != "a < b\n" {
		t.Errorf("%q", got)
	}
}

// TestConvertLinear: a megabyte page converts in well under a second; a
// converter that rescans its output per word would take minutes.
func TestConvertLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("<ul><li><p>")
	for b.Len() < 1<<20 {
		b.WriteString("One sentence. <b>Two</b> &amp; <a href=/x>three</a>. <script>x</script>")
	}
	start := time.Now()
	got := Convert(b.String(), "http://h/")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("1 MB took %s", d)
	}
	if !strings.HasPrefix(got, "- One sentence. **Two** & [three](http://h/x). One") {
		t.Errorf("%.100q", got)
	}
}

func FuzzConvert(f *testing.F) {
	f.Add("<p>a<b>b</b></p>", "https://x.org/")
	f.Fuzz(func(t *testing.T, page, base string) { _ = Convert(page, base) })
}
