package repair

import (
	"bytes"
	"encoding/json"
)

// Storm breaker defaults: of the last Window calls, at most Limit may be
// the same call; the next identical one is not run.
const (
	DefaultWindow = 12
	DefaultLimit  = 3
)

// Breaker stops a model that repeats the same call (same tool, same
// arguments) instead of changing approach. It keeps a sliding window of
// the calls admitted; a call that is not read-only changes the world, so
// it clears earlier entries of other calls (re-reading a file after an
// edit is fresh). Reset at each new user turn. Not safe for concurrent
// use: the loop admits the calls of a message in order, before running
// any of them.
type Breaker struct {
	Window, Limit int
	recent        []string // keys of the admitted calls, oldest first
}

// Admit reports whether the call may run, and records it when it may.
func (b *Breaker) Admit(name, args string, readOnly bool) bool {
	window, limit := b.Window, b.Limit
	if window <= 0 {
		window = DefaultWindow
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	key := name + "\x00" + canonical(args)
	n := 0
	for _, k := range b.recent {
		if k == key {
			n++
		}
	}
	if n >= limit {
		return false
	}
	if !readOnly {
		// The world changed: earlier reads (and other writes) are fresh
		// again; only this call's own earlier runs still count, so the
		// same edit or command repeated is still caught.
		kept := b.recent[:0]
		for _, k := range b.recent {
			if k == key {
				kept = append(kept, k)
			}
		}
		b.recent = kept
	}
	b.recent = append(b.recent, key)
	if len(b.recent) > window {
		b.recent = b.recent[len(b.recent)-window:]
	}
	return true
}

// Reset forgets every call (a new user turn).
func (b *Breaker) Reset() { b.recent = b.recent[:0] }

// canonical renders arguments with sorted keys and no spacing, so the
// same arguments written differently are the same call.
func canonical(args string) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader([]byte(args)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return args
	}
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return string(b)
}
