package permission

import "testing"

// Quiet runs its function only while no confined command lives or has
// left anything unswept; with no sandbox (nil) always.
func TestOrphansQuiet(t *testing.T) {
	t.Parallel()
	ran := 0
	var none *Orphans
	if !none.Quiet(func() { ran++ }) || ran != 1 {
		t.Fatalf("nil Orphans: ran %d", ran)
	}
	o := NewOrphans(nil)
	if !o.Quiet(func() { ran++ }) || ran != 2 {
		t.Fatalf("before any command: ran %d", ran)
	}
	o.mu.Lock()
	o.live = 1
	o.mu.Unlock()
	if o.Quiet(func() { ran++ }) || ran != 2 {
		t.Fatalf("with a command alive: ran %d", ran)
	}
	o.mu.Lock()
	o.live, o.untracked = 0, true
	o.mu.Unlock()
	if o.Quiet(func() { ran++ }) || ran != 2 {
		t.Fatalf("after an untracked command: ran %d", ran)
	}
}
