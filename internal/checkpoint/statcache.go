package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// statKey is what the stat cache compares to decide a file is unchanged.
type statKey struct {
	size  int64
	mtime int64 // UnixNano
	ctime int64 // UnixNano, 0 where unavailable
	ino   uint64
}

// statEntry is one cached file: its stat and the hash of its content. The
// blob of every hash in the cache is in the store: entries are written
// after their blobs, and Prune drops the entries of the blobs it removes.
type statEntry struct {
	key  statKey
	hash string
}

const statHeader = "reasonix statcache 1"

// loadStatCache reads the stat cache. A missing or damaged cache is an
// empty one: it only saves work.
func (s *Store) loadStatCache() map[string]statEntry {
	data, err := os.ReadFile(filepath.Join(s.dir, statFile))
	if err != nil {
		return map[string]statEntry{}
	}
	text := string(data) // one copy; the fields below are slices of it
	first, rest, _ := strings.Cut(text, "\n")
	if first != statHeader {
		return map[string]statEntry{}
	}
	m := make(map[string]statEntry, strings.Count(rest, "\n"))
	for len(rest) > 0 {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		// hash size mtime ctime ino path (quoted when it must be)
		var f [6]string
		for i := range 5 {
			var ok bool
			if f[i], line, ok = strings.Cut(line, " "); !ok {
				return map[string]statEntry{}
			}
		}
		f[5] = line
		var e statEntry
		var err1, err2, err3, err4, err5 error
		e.hash = f[0]
		e.key.size, err1 = strconv.ParseInt(f[1], 10, 64)
		e.key.mtime, err2 = strconv.ParseInt(f[2], 10, 64)
		e.key.ctime, err3 = strconv.ParseInt(f[3], 10, 64)
		e.key.ino, err4 = strconv.ParseUint(f[4], 10, 64)
		p := f[5]
		if strings.HasPrefix(p, `"`) {
			p, err5 = strconv.Unquote(p)
		}
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || p == "" || !validHash(e.hash) {
			return map[string]statEntry{}
		}
		m[p] = e
	}
	return m
}

// saveStatCache replaces the stat cache. Concurrent writers each write a
// complete, valid cache; the last rename wins.
func (s *Store) saveStatCache(m map[string]statEntry) error {
	return writeAtomic(filepath.Join(s.dir, statFile), encodeStatCache(m), true)
}

// encodeStatCache is the stat cache file's content.
func encodeStatCache(m map[string]statEntry) []byte {
	var b bytes.Buffer
	n := len(statHeader) + 1
	for p := range m {
		n += 64 + 4*21 + len(p) + 8
	}
	b.Grow(n)
	b.WriteString(statHeader + "\n")
	for p, e := range m {
		b.WriteString(e.hash)
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(e.key.size, 10))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(e.key.mtime, 10))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(e.key.ctime, 10))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatUint(e.key.ino, 10))
		b.WriteByte(' ')
		if strings.ContainsAny(p, "\n\r") || strings.HasPrefix(p, `"`) {
			p = strconv.Quote(p)
		}
		b.WriteString(p)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// validHash reports whether h is a lowercase hex SHA-256.
func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// sameCache reports whether two stat caches hold the same entries.
func sameCache(a, b map[string]statEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for p, e := range a {
		if f, ok := b[p]; !ok || f != e {
			return false
		}
	}
	return true
}
