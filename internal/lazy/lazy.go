// Package lazy holds package-level values built on their first use.
//
// A package-level variable set by sync.OnceValue, a map literal or any
// other call runs code in the package's init on every start of the
// binary, `reasonix version` included, and each package with init code
// costs at least a page fault on its code. A Value written as a composite
// literal is laid out by the linker instead: until Get is called it
// costs the start nothing.
package lazy

import "sync"

// Value is a value Build makes on the first call of Get. Declare it as a
// package-level composite literal, Value[T]{Build: f}, so the compiler
// initialises it statically; Build must not be changed afterwards.
type Value[T any] struct {
	// Build makes the value, once, in the first Get.
	Build func() T

	once sync.Once
	v    T
}

// Get returns the value, building it on the first call. It is safe for
// concurrent use.
func (l *Value[T]) Get() T {
	l.once.Do(l.build)
	return l.v
}

func (l *Value[T]) build() { l.v = l.Build() }

// Values is Value for a builder with two results, as sync.OnceValues is
// for sync.OnceValue.
type Values[T1, T2 any] struct {
	// Build makes the values, once, in the first Get.
	Build func() (T1, T2)

	once sync.Once
	v1   T1
	v2   T2
}

// Get returns the values, building them on the first call. It is safe for
// concurrent use.
func (l *Values[T1, T2]) Get() (T1, T2) {
	l.once.Do(l.build)
	return l.v1, l.v2
}

func (l *Values[T1, T2]) build() { l.v1, l.v2 = l.Build() }
