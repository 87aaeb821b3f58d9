package config

import "testing"

func TestIndexKeys(t *testing.T) {
	src := `top = 1
s = """
[not.a.table]
fake = 2
"""
[a]
b.c = "x" # comment
"quoted.key" = 1
arr = [
  1,
  2,
]
[[p]]
name = "one"
[p.h]
k = "v"
[[p]]
name = 'two'
lit = '''
x = 3
'''
after = true
`
	ix := indexKeys(src)
	want := map[string]int{
		"top":          1,
		"s":            2,
		"a":            6,
		"a.b.c":        7,
		"a.quoted.key": 8,
		"a.arr":        9,
		"p[0]":         13,
		"p[0].name":    14,
		"p[0].h":       15,
		"p[0].h.k":     16,
		"p[1].name":    18,
		"p[1].lit":     19,
		"p[1].after":   22,
	}
	for k, line := range want {
		if got := ix.lookup(k); got != line {
			t.Errorf("line of %q = %d, want %d", k, got, line)
		}
	}
	for _, k := range []string{"not.a.table", "fake", "a.fake", "p[1].x"} {
		if _, ok := ix[k]; ok {
			t.Errorf("key %q inside a multi-line string was indexed", k)
		}
	}
	// Lookups fall back to the enclosing key.
	if got := ix.lookup("a.arr[1]"); got != 9 {
		t.Errorf("lookup of a list element = %d, want 9", got)
	}
	if got := ix.lookup("missing"); got != 0 {
		t.Errorf("lookup of a missing key = %d, want 0", got)
	}
}

func TestQuote(t *testing.T) {
	cases := map[string]string{
		`plain`:    `"plain"`,
		`a"b`:      `"a\"b"`,
		`a\b`:      `"a\\b"`,
		"t\tn\n":   `"t\tn\n"`,
		"\x01":     `"\u0001"`,
		"ünï":      `"ünï"`,
		"\x7f end": `"\u007f end"`,
	}
	for in, want := range cases {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}
