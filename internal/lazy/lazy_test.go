package lazy

import (
	"sync"
	"sync/atomic"
	"testing"
)

var counted atomic.Int32

var table = Value[map[string]int]{Build: func() map[string]int {
	counted.Add(1)
	return map[string]int{"a": 1}
}}

func TestValueBuildsOnceOnFirstUse(t *testing.T) {
	if n := counted.Load(); n != 0 {
		t.Fatalf("built %d times before the first Get", n)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if table.Get()["a"] != 1 {
				t.Error("wrong value")
			}
		})
	}
	wg.Wait()
	if n := counted.Load(); n != 1 {
		t.Fatalf("built %d times, want 1", n)
	}
}
