//go:build !linux || mips || mipsle || mips64 || mips64le

package permission

import (
	"os"
	"slices"
	"sync"
)

// hiddenState elsewhere: the sandbox cannot hide files here, so the list
// only informs (doctor); the glob rules' walk is made once.
type hiddenState struct {
	walk func() []string
}

func newHiddenState(h *Hidden) *hiddenState {
	return &hiddenState{walk: sync.OnceValue(func() []string {
		var found []string
		h.walk(func(string) {}, func(p string) { found = append(found, p) })
		return found
	})}
}

func (h *Hidden) files() []hiddenFile {
	var out []hiddenFile
	var walked []string
	if len(h.globs) > 0 {
		walked = h.st.walk()
	}
	for _, p := range append(slices.Clone(h.fixed), walked...) {
		if _, err := os.Lstat(p); err == nil && !slices.ContainsFunc(out, func(f hiddenFile) bool { return f.path == p }) {
			out = append(out, hiddenFile{path: p})
		}
	}
	return out
}
