package permission

import (
	"slices"
	"testing"
)

// FindSessionBus reads every unix path and abstract address the
// variable lists (escapes decoded), and adds the standard places the
// D-Bus libraries fall back to.
func TestFindSessionBus(t *testing.T) {
	for _, c := range []struct {
		addr, runtime string
		uid           int
		want          []string
		abstract      bool
	}{
		{"", "", -1, nil, false},
		{"", "/run/user/1000", 1000, []string{"/run/user/1000/bus"}, false},
		{"unix:path=/run/user/1000/bus", "/run/user/1000", 1000, []string{"/run/user/1000/bus"}, false},
		{"unix:path=/tmp/dbus-x%2cy,guid=abc", "", 0, []string{"/tmp/dbus-x,y", "/run/user/0/bus"}, false},
		{"unix:abstract=/tmp/dbus-Q,guid=1;unix:path=/var/b/../bus", "/xdg", -1, []string{"/var/bus", "/xdg/bus"}, true},
		{"unix:runtime=yes", "/xdg", -1, []string{"/xdg/bus"}, false},
		{"tcp:host=localhost,port=1234;autolaunch:", "", -1, nil, false},
		{"unix:path=relative/bus", "", -1, nil, false},
		{"unix:path=/a/%zzbus", "", -1, []string{"/a/%zzbus"}, false},
	} {
		env := map[string]string{"DBUS_SESSION_BUS_ADDRESS": c.addr, "XDG_RUNTIME_DIR": c.runtime}
		got := FindSessionBus(func(k string) string { return env[k] }, c.uid)
		if !slices.Equal(got.Paths, c.want) || got.Abstract != c.abstract {
			t.Errorf("%q (runtime %q, uid %d): %+v, want %q abstract %v", c.addr, c.runtime, c.uid, got, c.want, c.abstract)
		}
	}
}
