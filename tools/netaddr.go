package tools

import (
	"net/netip"
	"strings"
)

// LocalAddr says what kind of address a is when it is not one of the
// public internet's ("loopback", "link-local", "private", ...), else "".
// A fetch the model asks for must not reach such an address unless a
// person or a rule named it: the machine's own services, the local
// network's and a cloud's metadata service (169.254.169.254, which hands
// out credentials) answer there, and the sandbox keeps commands off them.
func LocalAddr(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.IsPrivate():
		return "private"
	}
	if a.Is4() {
		b := a.As4()
		switch {
		case b[0] == 0:
			return "this-network"
		case b[0] == 100 && b[1]&0xc0 == 64:
			// 100.64.0.0/10, carrier-grade NAT and VPN overlays.
			return "shared"
		case b[0] == 192 && b[1] == 0 && b[2] == 0:
			return "reserved"
		case b[0] == 198 && b[1]&0xfe == 18:
			return "benchmarking"
		case b[0] >= 240:
			return "reserved"
		}
		return ""
	}
	b := a.As16()
	switch {
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8:
		return "documentation"
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b:
		// 64:ff9b::/96 NAT64 maps IPv4 addresses, private ones too.
		return "NAT64"
	case b[0] == 0x20 && b[1] == 0x02:
		// 6to4 embeds an IPv4 address.
		return "6to4"
	}
	return ""
}

// LocalHost reports what kind of local address the host of a URL names
// itself: an address LocalAddr reports, or "loopback" for localhost and
// names under .localhost, which resolve to this machine. A DNS name is
// "" here; where it leads is known only when it is resolved.
func LocalHost(host string) string {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return "loopback"
	}
	if i := strings.IndexByte(h, '%'); i >= 0 {
		// A zone names an interface: fe80::1%eth0.
		h = h[:i]
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return ""
	}
	return LocalAddr(a)
}
