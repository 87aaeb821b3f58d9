package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"héllo", 2, "h…"}, // é is two bytes: not cut in half
		{"中文字符", 4, "中…"},
		{"x", 0, "x"[:0] + "…"},
		{"abc", -1, "…"},
	} {
		got := Clip(c.in, c.n)
		if got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) is not valid UTF-8", c.in, c.n)
		}
	}
}

func FuzzClip(f *testing.F) {
	f.Add("中文字符 and more", 5)
	f.Add("plain", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n > 1<<20 || n < -1<<20 {
			return
		}
		got := Clip(s, n)
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
		if len(s) > n && len(got) > max(n, 0)+len("…") {
			t.Fatalf("Clip(%q, %d) = %q is too long", s, n, got)
		}
	})
}

func TestOneLine(t *testing.T) {
	if got := OneLine("  a\n\tb  c \r\n"); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
}

func TestSentence(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Reviews code. Use it after edits.", "Reviews code."},
		{"Use e.g. Go 1.26 tools!  Then more", "Use e.g. Go 1.26 tools!"},
		{"No end at all", "No end at all"},
		{"审查代码。然后报告", "审查代码。"},
		{"A very long first sentence that goes on", "A very long…"},
	} {
		n := 100
		if strings.HasPrefix(c.in, "A very") {
			n = 11
		}
		if got := Sentence(c.in, n); got != c.want {
			t.Errorf("Sentence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 turns", 1: "1 turn", 2: "2 turns", 11: "11 turns"} {
		if got := Plural(n, "turn"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestPrintable(t *testing.T) {
	var b strings.Builder
	w := Printable(&b)
	in := []string{
		"plain line\n\tindented\n",
		"\x1b]52;c;Y3VybCBldmlsfHNo\x07 clipboard\n",
		"rm -rf ~\recho hello\n",
		"\x1b[2J\x1b[H cleared \x7f\n",
		"C1 \u009b31m here\n",
		"safe \u202eevil\u202c text\n",
		"中文 é 👍\n",
	}
	for _, s := range in {
		_, _ = w.Write([]byte(s))
	}
	// A character cut between writes.
	thumb := []byte("👍\u0085\n")
	for _, c := range thumb {
		_, _ = w.Write([]byte{c})
	}
	want := "plain line\n\tindented\n" +
		"^[]52;c;Y3VybCBldmlsfHNo^G clipboard\n" +
		"rm -rf ~^Mecho hello\n" +
		"^[[2J^[[H cleared ^?\n" +
		"C1 \uFFFD31m here\n" +
		"safe <U+202E>evil<U+202C> text\n" +
		"中文 é 👍\n" +
		"👍\uFFFD\n"
	if b.String() != want {
		t.Errorf("Printable wrote\n%q\nwant\n%q", b.String(), want)
	}
}

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain line\n\tindented":              "plain line\n\tindented",
		"rm -rf ~\recho hello":                "rm -rf ~^Mecho hello",
		"\x1b]0;title\x07 \x1b[2K\x7f":        "^[]0;title^G ^[[2K^?",
		"C1 \u009b31m \u0085":                 "C1 \uFFFD31m \uFFFD",
		"safe \u202eevil\u202c \u2066x\u2069": "safe <U+202E>evil<U+202C> <U+2066>x<U+2069>",
		"中文 é 👍 \u2028\u2029":                 "中文 é 👍 <U+2028><U+2029>",
		"cut \xe2\x80":                        "cut \xe2\x80",
		"^M stays":                            "^M stays",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
		var b strings.Builder
		_, _ = Printable(&b).Write([]byte(in))
		if p := b.String(); !strings.HasPrefix(want, p) {
			t.Errorf("Printable wrote %q for %q, Visible %q", p, in, want)
		}
	}
}

func TestVisibleKeepsWindowsLineEndings(t *testing.T) {
	if got := Visible("a\r\nb\r\n\rc\r"); got != "a\nb\n^Mc^M" {
		t.Errorf("Visible = %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"run", "run", 0}, {"", "plan", 4}, {"rnu", "run", 1}, // a swap is one edit
		{"docter", "doctor", 1}, {"modles", "models", 1}, {"ctx", "context", 4},
		{"配置", "配罝", 1}, // runes, not bytes
	} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := EditDistance(c.b, c.a); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}
