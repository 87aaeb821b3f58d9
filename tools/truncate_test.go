package tools

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var markerRE = regexp.MustCompile(`\n\[\.\.\. truncated (\d+) bytes \((\d+) lines\) of (\d+); narrow the request to see them \.\.\.\]\n`)

// splitTruncated takes Truncate's output apart into head, tail and the
// marker's numbers.
func splitTruncated(t *testing.T, out string) (head, tail string, dropped, lines, total int) {
	t.Helper()
	locs := markerRE.FindAllStringSubmatchIndex(out, -1)
	if len(locs) != 1 {
		t.Fatalf("want exactly one marker, found %d in %q", len(locs), out)
	}
	l := locs[0]
	atoi := func(i int) int {
		n, err := strconv.Atoi(out[l[2*i]:l[2*i+1]])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return out[:l[0]], out[l[1]:], atoi(1), atoi(2), atoi(3)
}

func TestTruncate(t *testing.T) {
	numbered := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line %04d\n", i)
		}
		return b.String()
	}
	cases := []struct {
		name  string
		s     string
		limit int
	}{
		{"ascii no newlines", strings.Repeat("abcdefghij", 1000), 1000},
		{"many lines", numbered(2000), 3000},
		{"two-byte runes", strings.Repeat("é", 5000), 1001},
		{"three-byte runes", strings.Repeat("€", 5000), 1000},
		{"four-byte runes", strings.Repeat("𝄞", 5000), 999},
		{"mixed widths", strings.Repeat("aé€𝄞\n", 2000), 1234},
		{"one long line then lines", strings.Repeat("x", 5000) + numbered(50), 900},
		{"small limit", strings.Repeat("é", 100), 7},
		{"limit 1", "hello world", 1},
		{"binary", string([]byte{0xff, 0xfe, 0x00, 0x80, 0xc3}) + strings.Repeat("\xff", 500), 300},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := Truncate(c.s, c.limit)
			head, tail, dropped, lines, total := splitTruncated(t, out)
			if !strings.HasPrefix(c.s, head) {
				t.Fatalf("head is not a prefix: %q", head)
			}
			if !strings.HasSuffix(c.s, tail) {
				t.Fatalf("tail is not a suffix: %q", tail)
			}
			// The marker accounts for exactly the bytes that are gone.
			if len(head)+dropped+len(tail) != len(c.s) {
				t.Fatalf("head %d + dropped %d + tail %d != %d", len(head), dropped, len(tail), len(c.s))
			}
			if total != len(c.s) {
				t.Fatalf("marker total %d, want %d", total, len(c.s))
			}
			if want := strings.Count(c.s[len(head):len(c.s)-len(tail)], "\n"); lines != want {
				t.Fatalf("marker lines %d, want %d", lines, want)
			}
			if len(head)+len(tail) > c.limit {
				t.Fatalf("kept %d bytes, limit %d", len(head)+len(tail), c.limit)
			}
			// A valid input never gets a rune split at either cut.
			if utf8.ValidString(c.s) && (!utf8.ValidString(head) || !utf8.ValidString(tail)) {
				t.Fatalf("split rune: head %q tail %q", head, tail)
			}
			if c.limit >= 200 {
				if len(out) > c.limit {
					t.Fatalf("output %d bytes, limit %d", len(out), c.limit)
				}
				// Enough room means real content survives on both sides.
				if len(head) == 0 || len(tail) == 0 {
					t.Fatalf("empty side: head %d tail %d", len(head), len(tail))
				}
			}
		})
	}
}

func TestTruncateKeepsHeadAndTail(t *testing.T) {
	s := "FIRST\n" + strings.Repeat("middle\n", 5000) + "LAST\n"
	out := Truncate(s, 600)
	if !strings.HasPrefix(out, "FIRST\n") || !strings.HasSuffix(out, "LAST\n") {
		t.Fatalf("lost an end:\n%s", out)
	}
	head, tail, _, _, _ := splitTruncated(t, out)
	// Cuts land on line boundaries when one is near.
	if !strings.HasSuffix(head, "\n") || !strings.HasSuffix(tail, "\n") || !strings.HasPrefix(tail, "middle\n") {
		t.Fatalf("cut mid-line: head ends %q, tail starts %q", head[len(head)-8:], tail[:8])
	}
	// The head gets the larger share.
	if len(head) <= len(tail) {
		t.Fatalf("head %d <= tail %d", len(head), len(tail))
	}
}

func TestTruncateNoop(t *testing.T) {
	cases := []struct {
		s     string
		limit int
	}{
		{"", 10},
		{"short", 5},
		{"short", 100},
		{strings.Repeat("x", 100), 0},
		{strings.Repeat("x", 100), -1},
	}
	for _, c := range cases {
		if got := Truncate(c.s, c.limit); got != c.s {
			t.Errorf("Truncate(%d bytes, %d) changed the input to %q", len(c.s), c.limit, got)
		}
	}
}

// Tools truncate their own output and the session truncates every result
// again with the same limit; the second pass must change nothing.
func TestTruncateIdempotent(t *testing.T) {
	for _, limit := range []int{200, 1000, 30000} {
		for _, s := range []string{strings.Repeat("a\n", 40000), strings.Repeat("€", 40000)} {
			once := Truncate(s, limit)
			if twice := Truncate(once, limit); twice != once {
				t.Fatalf("limit %d: second truncation changed %d bytes into %d", limit, len(once), len(twice))
			}
		}
	}
}
