//go:build linux && (amd64 || arm64)

package permission

import (
	"bytes"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// connectScript tries to connect to the unix socket at $1, another at $2
// and the abstract one named $3, and makes a UDP socket.
const connectScript = `
import socket, sys
for name, addr in [("bus", sys.argv[1]), ("other", sys.argv[2]), ("abstract", "\0" + sys.argv[3])]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        print(name, "no-socket"); continue
    try:
        s.connect(addr); print(name, "connected")
    except OSError:
        print(name, "refused")
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close(); print("udp open")
`

// With network = true a command cannot connect to the session bus's
// socket, by any path, while other unix sockets still work; an abstract
// bus is scoped away; and where neither can be done and Reasonix's keys
// are behind the bus, unix sockets cannot be made at all.
func TestSandboxKeepsCommandsFromTheSessionBus(t *testing.T) {
	abi := requireLandlock(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed; the test connects with it")
	}
	dir := t.TempDir()
	bus, other := filepath.Join(dir, "bus"), filepath.Join(dir, "other")
	abstract := "reasonix-test-bus-" + filepath.Base(dir)
	for _, addr := range []string{bus, other, "@" + abstract} {
		l, err := net.Listen("unix", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
	// The bus is named through a symlink, as $XDG_RUNTIME_DIR/bus may be.
	link := filepath.Join(t.TempDir(), "bus-link")
	must(t, exec.Command("ln", "-s", bus, link).Run())
	run := func(opts SandboxOptions, prep func(*Sandbox, *confinement)) string {
		t.Helper()
		opts.Workspace = dir
		cmd := exec.Command(py, "-c", connectScript, bus, other, abstract)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		s := NewSandbox(opts)
		var err error
		if prep == nil {
			err = s.Start(cmd)
		} else {
			c := s.confinement()
			prep(s, &c)
			err = startConfined(cmd, c)
		}
		if err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		return out.String()
	}
	expect := func(name, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w+"\n") {
				t.Errorf("%s: %q missing:\n%s", name, w, out)
			}
		}
	}

	expect("no bus", run(SandboxOptions{Network: true}, nil), "bus connected", "other connected", "abstract connected")
	expect("network off", run(SandboxOptions{Bus: SessionBus{Paths: []string{link}}}, nil), "bus no-socket", "other no-socket")
	if ok, why := hideAvailable(); ok {
		expect("bus hidden", run(SandboxOptions{Network: true, Bus: SessionBus{Paths: []string{link}}}, nil),
			"bus refused", "other connected", "abstract connected", "udp open")
	} else {
		t.Logf("hiding is not available here (%s): the bus's socket is not tested hidden", why)
	}
	if abi >= 6 {
		expect("abstract bus", run(SandboxOptions{Network: true, Bus: SessionBus{Abstract: true}}, nil),
			"abstract refused", "other connected", "udp open")
	}

	// Neither hidden nor scoped: the keys decide.
	var notes []string
	notify := func(s string) { notes = append(notes, s) }
	unguarded := func(s *Sandbox, c *confinement) { s.busUnguarded(c, "no namespaces") }
	keys := SandboxOptions{Network: true, Notify: notify, KeysOnBus: func() bool { return true }}
	expect("keys on the bus", run(keys, unguarded), "bus no-socket", "other no-socket", "abstract no-socket", "udp open")
	none := SandboxOptions{Network: true, Notify: notify, KeysOnBus: func() bool { return false }}
	expect("no keys on the bus", run(none, unguarded), "bus connected", "other connected")
	if len(notes) != 2 || !strings.Contains(notes[0], "cannot create unix sockets") || !strings.Contains(notes[1], "every secret unlocked") {
		t.Errorf("notices: %q", notes)
	}
}
