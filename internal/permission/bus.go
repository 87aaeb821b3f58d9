package permission

import (
	"path/filepath"
	"strconv"
	"strings"
)

// The D-Bus session bus is the way to the Secret Service (GNOME Keyring,
// KWallet), which hands every unlocked secret of the user to any process
// of the user that asks over the bus: Reasonix's own keys and MCP sign-ins
// when internal/credentials keeps them there, and the person's other
// passwords. A bash command must not reach it. Without [sandbox] network
// it cannot: the socket filter refuses unix sockets and Landlock scopes
// abstract ones. With network = true each command starts with the bus's
// socket file hidden under an empty file (the mount namespace of
// hide_linux.go), so connecting to it is refused whatever address the
// command names, and an abstract bus is scoped away by Landlock (ABI 6).
// Where neither can be done, and Reasonix's keys are in the Secret
// Service, unix sockets are refused as without network.

// SessionBus is where the user's D-Bus session bus listens, as the
// environment says: the socket paths a command could connect to (those
// that exist are hidden at each command) and whether an address is an
// abstract socket, which no file stands for.
type SessionBus struct {
	Paths    []string
	Abstract bool
}

// FindSessionBus reads the session bus's addresses from
// DBUS_SESSION_BUS_ADDRESS, and adds the places the D-Bus libraries
// try when it is unset or names another: $XDG_RUNTIME_DIR/bus and
// /run/user/UID/bus. Paths are absolute and clean; nothing is read from
// the disk.
func FindSessionBus(getenv func(string) string, uid int) SessionBus {
	var b SessionBus
	add := func(p string) {
		if !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		for _, q := range b.Paths {
			if q == p {
				return
			}
		}
		b.Paths = append(b.Paths, p)
	}
	runtimeDir := getenv("XDG_RUNTIME_DIR")
	// Several addresses are separated by ';', each "transport:k=v,k=v"
	// with values percent-escaped.
	for _, addr := range strings.Split(getenv("DBUS_SESSION_BUS_ADDRESS"), ";") {
		transport, params, ok := strings.Cut(addr, ":")
		if !ok || transport != "unix" {
			// tcp: and nonce-tcp: authenticate with the cookies of
			// ~/.dbus-keyrings, on the read deny list; others
			// (autolaunch:, launchd:) name no socket here.
			continue
		}
		for _, kv := range strings.Split(params, ",") {
			k, v, _ := strings.Cut(kv, "=")
			v = busUnescape(v)
			switch k {
			case "path":
				add(v)
			case "abstract":
				b.Abstract = true
			case "runtime":
				if v == "yes" && runtimeDir != "" {
					add(filepath.Join(runtimeDir, "bus"))
				}
			}
		}
	}
	if runtimeDir != "" {
		add(filepath.Join(runtimeDir, "bus"))
	}
	if uid >= 0 {
		add(filepath.Join("/run/user", strconv.Itoa(uid), "bus"))
	}
	return b
}

// busUnescape decodes a D-Bus address value's %XX escapes; a malformed
// escape is kept as written.
func busUnescape(v string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	var sb strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '%' && i+2 < len(v) {
			if n, err := strconv.ParseUint(v[i+1:i+3], 16, 8); err == nil {
				sb.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		sb.WriteByte(v[i])
	}
	return sb.String()
}

// busProtection says how commands are kept from the session bus of
// opts.Bus, for SandboxProtections; ok is false when no bus is there.
func busProtection(opts SandboxOptions) (p Protection, ok bool) {
	socks := busSockets(opts.Bus.Paths)
	if len(socks) == 0 && !opts.Bus.Abstract {
		return p, false
	}
	p.Name = "D-Bus session bus (Secret Service)"
	if !opts.Network && seccompAvailable() {
		p.Active, p.Detail = true, "unreachable: commands cannot create unix sockets"
		return p, true
	}
	var why string
	if len(socks) > 0 {
		ok, w := hideAvailable()
		if ok {
			p.Active, p.Detail = true, "each command starts with "+pathList(socks)+" hidden (a mount namespace)"
		} else {
			why = "it cannot be hidden here: " + w
		}
	}
	if opts.Bus.Abstract && why == "" {
		if landlockABI() >= 6 {
			p.Active, p.Detail = true, strings.TrimPrefix(p.Detail+"; abstract address scoped away (Landlock)", "; ")
		} else {
			p.Active, why = false, "its abstract address needs Landlock ABI 6 to be scoped away"
		}
	}
	if why == "" {
		return p, true
	}
	if opts.KeysOnBus != nil && opts.KeysOnBus() && seccompAvailable() {
		p.Active, p.Detail = true, why+"; Reasonix's keys are in the Secret Service, so commands cannot create unix sockets"
		return p, true
	}
	p.Active, p.Detail = false, why+"; commands can ask the Secret Service for every secret unlocked in it"
	return p, true
}
