package orchestrator

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitRawAndTextDiff(t *testing.T) {
	raw := ":100644 100644 1111111 2222222 M\x00a b.txt\x00:000000 100644 0000000 3333333 A\x00bin\x00\x00"
	patch := "diff --git a/a b.txt b/a b.txt\nindex 1111111..2222222 100644\n--- a/a b.txt\n+++ b/a b.txt\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/bin b/bin\nnew file mode 100644\nindex 0000000..3333333\nGIT binary patch\nliteral 2\nJcmZQz0ssI600RI3\n\nliteral 0\nHcmV?d00001\n\n"
	names, p := splitRaw(raw + patch)
	if !reflect.DeepEqual(names, []string{"a b.txt", "bin"}) || p != patch {
		t.Fatalf("names %q, patch %q", names, p)
	}
	if n, p := splitRaw(""); n != nil || p != "" {
		t.Errorf("empty: %q %q", n, p)
	}
	g := &gitTree{sub: "pkg"}
	ch := g.changesOf([]string{"pkg/x.go", "top.txt"}, patch)
	if !reflect.DeepEqual(ch.files, []string{"x.go", "top.txt"}) {
		t.Errorf("files %q, want workspace-relative where inside it", ch.files)
	}
	if strings.Contains(ch.diff, "GIT binary patch") || strings.Contains(ch.diff, "JcmZQz") ||
		!strings.Contains(ch.diff, "+b\n") || !strings.HasSuffix(ch.diff, "index 0000000..3333333\nBinary files differ\n") {
		t.Errorf("diff for the brief:\n%s", ch.diff)
	}
	long := strings.Repeat("diff --git a/f b/f\n+"+strings.Repeat("x", 1000)+"\n", 40)
	if d := g.changesOf(nil, long).diff; len(d) > diffLimit+40 || !strings.HasSuffix(d, "[diff clipped]\n") {
		t.Errorf("a long diff is %d bytes, not clipped", len(d))
	}
}
