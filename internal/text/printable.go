package text

import (
	"io"
	"unicode/utf8"
)

// Printable returns a writer that passes what is written to w with every
// character that would drive a terminal instead of showing up shown
// plainly: control characters other than tab and newline in caret
// notation (ESC as ^[, a carriage return as ^M, DEL as ^?), C1 controls
// as U+FFFD, and the bidirectional overrides and isolates (which reorder
// what a line appears to say) and the line and paragraph separators
// U+2028 and U+2029 (which break it) as <U+202E> and the like. What a
// model, a tool or a server wrote then cannot move the cursor, retitle
// the window, set the clipboard (OSC 52) or overwrite a command shown
// for approval.
// A character split across writes is held until its end arrives.
func Printable(w io.Writer) io.Writer { return &printable{w: w} }

type printable struct {
	w    io.Writer
	pend []byte // the start of a multi-byte character cut by the last write
	out  []byte
}

// Underlying is the writer Printable was given (a caller asking whether
// its output is a terminal looks there).
func (p *printable) Underlying() io.Writer { return p.w }

func (p *printable) Write(b []byte) (int, error) {
	n := len(b)
	if len(p.pend) > 0 {
		b = append(p.pend, b...)
		p.pend = nil
	}
	if clean(b) {
		if k := incomplete(b); k > 0 {
			p.pend = append([]byte(nil), b[len(b)-k:]...)
			b = b[:len(b)-k]
		}
		_, err := p.w.Write(b)
		return n, err
	}
	out, rest := appendShown(p.out[:0], b)
	if rest < len(b) {
		p.pend = append([]byte(nil), b[rest:]...)
	}
	p.out = out
	_, err := p.w.Write(out)
	return n, err
}

// Visible is s as Printable writes it: control characters other than tab
// and newline in caret notation, C1 controls as U+FFFD, the bidirectional
// overrides and isolates and U+2028 and U+2029 as <U+202E> and the like.
// It is for text shown by a program that draws the screen itself (the
// TUI), where such a character would break a line, vanish or reorder
// what a person reads.
func Visible(s string) string {
	if clean(s) {
		return s
	}
	b := []byte(s)
	out, rest := appendShown(make([]byte, 0, len(b)+16), b)
	// A character s cuts off is left as it is (invalid UTF-8, which a
	// screen shows as U+FFFD).
	return string(append(out, b[rest:]...))
}

// appendShown appends b to out with every character Printable changes
// changed, and says where a multi-byte character b cuts off begins
// (len(b) when none does).
func appendShown(out, b []byte) ([]byte, int) {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\t' || c == '\n':
			out = append(out, c)
			i++
		case c == '\r' && i+1 < len(b) && b[i+1] == '\n':
			// A line ending written CR LF (a Windows file) overwrites
			// nothing: it ends the line as the newline does.
			i++
		case c < 0x20:
			out = append(out, '^', c+'@')
			i++
		case c == 0x7f:
			out = append(out, '^', '?')
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		case !utf8.FullRune(b[i:]):
			return out, i
		default:
			r, size := utf8.DecodeRune(b[i:])
			switch {
			case r >= 0x80 && r <= 0x9f:
				out = append(out, "\uFFFD"...)
			case shownAsCode(r):
				out = append(out, '<', 'U', '+')
				out = appendHex(out, r)
				out = append(out, '>')
			default:
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return out, len(b)
}

// clean reports whether b holds nothing Printable changes (the common
// case: one pass, no copy).
func clean[T string | []byte](b T) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\t' || c == '\n':
		case c < 0x20 || c == 0x7f:
			return false
		case c == 0xc2:
			// U+0080–U+009F are C2 80–C2 9F.
			if i+1 < len(b) && b[i+1] <= 0x9f {
				return false
			}
		case c == 0xe2:
			// U+2028–U+202E are E2 80 A8–AE, U+2066–U+2069 E2 81 A6–A9.
			if i+2 < len(b) && ((b[i+1] == 0x80 && b[i+2] >= 0xa8 && b[i+2] <= 0xae) || (b[i+1] == 0x81 && b[i+2] >= 0xa6 && b[i+2] <= 0xa9)) {
				return false
			}
		}
	}
	return true
}

// incomplete is how many bytes at the end of b begin a character that
// does not end in b.
func incomplete(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}

// shownAsCode reports whether r is shown as its code point: the
// bidirectional embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069) and the line and paragraph separators (U+2028, U+2029),
// which a screen that lays text out itself takes for line breaks.
func shownAsCode(r rune) bool {
	return (r >= 0x2028 && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

func appendHex(b []byte, r rune) []byte {
	const digits = "0123456789ABCDEF"
	for shift := 12; shift >= 0; shift -= 4 {
		b = append(b, digits[(r>>uint(shift))&0xf])
	}
	return b
}
