package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// redacted replaces secret values in Describe output.
const redacted = "****"

// Describe renders the merged configuration as TOML-like text, each value
// followed by "# from <source>". With redact, API keys and headers whose
// names look like credentials are shown as "****" so the output can be
// pasted into bug reports.
func (l *Loaded) Describe(redact bool) string {
	d := describer{sources: l.Sources, redact: redact}
	d.b.WriteString("# merged configuration")
	if len(l.Files) > 0 {
		d.b.WriteString(" from " + strings.Join(l.Files, ", "))
	}
	d.b.WriteString("\n")
	rv := reflect.ValueOf(l.Config).Elem()
	t := rv.Type()
	// TOML puts bare keys before any table header, so scalars go first.
	for i := range t.NumField() {
		if k := t.Field(i).Type.Kind(); k != reflect.Struct && k != reflect.Slice {
			d.field(rv.Field(i), t.Field(i).Tag.Get("toml"), t.Field(i).Tag.Get("toml"), false)
		}
	}
	for i := range t.NumField() {
		f, name := t.Field(i), t.Field(i).Tag.Get("toml")
		if f.Type.Kind() != reflect.Struct {
			continue
		}
		d.b.WriteString("\n[" + name + "]\n")
		d.table(rv.Field(i), name, false)
		// Nested tables ([tools.shell]) follow their parent's keys.
		st := f.Type
		for j := range st.NumField() {
			if st.Field(j).Type.Kind() == reflect.Struct && st.Field(j).Type != durationType() {
				sub := name + "." + st.Field(j).Tag.Get("toml")
				d.b.WriteString("\n[" + sub + "]\n")
				d.table(rv.Field(i).Field(j), sub, false)
			}
		}
	}
	for _, p := range l.Config.Providers {
		d.b.WriteString("\n[[providers]]\n")
		d.table(reflect.ValueOf(p), "providers."+p.Name, true)
	}
	for _, h := range l.Config.Hooks {
		fmt.Fprintf(&d.b, "\n[[hooks]]  # from %s\n", h.Source)
		fmt.Fprintf(&d.b, "event = %s\nmatcher = %s\ncommand = %s\ntimeout = %d\n", quote(h.Event), quote(h.Matcher), quote(h.Command), h.Timeout)
	}
	for _, p := range l.Config.Plugins {
		d.b.WriteString("\n[[plugins]]\n")
		d.table(reflect.ValueOf(p), "plugins."+p.Name, true)
	}
	return d.b.String()
}

type describer struct {
	b       strings.Builder
	sources map[string]string
	redact  bool
}

func (d *describer) table(rv reflect.Value, path string, skipZero bool) {
	t := rv.Type()
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("toml")
		if name == "-" {
			continue
		}
		if t.Field(i).Type.Kind() == reflect.Struct && t.Field(i).Type != durationType() {
			// A table inside a [[providers]] entry (price) is written
			// inline; top-level tables get their own headers instead.
			if skipZero && !rv.Field(i).IsZero() {
				p := joinKey(path, name)
				d.b.WriteString(quoteKey(name) + " = " + d.inlineStruct(rv.Field(i)) + "  # from " + d.prefixSource(p) + "\n")
			}
			continue
		}
		d.field(rv.Field(i), name, joinKey(path, name), skipZero && name != "name")
	}
}

func (d *describer) field(v reflect.Value, name, path string, skipZero bool) {
	if v.Kind() == reflect.Pointer && v.IsNil() || skipZero && v.IsZero() {
		return
	}
	var val, src string
	if v.Kind() == reflect.Map {
		val, src = d.mapValue(v, path)
	} else {
		val, src = formatValue(v), d.source(path)
		if d.redact && name == "api_key" && v.String() != "" {
			val = quote(redacted)
		}
	}
	d.b.WriteString(dottedKey(name) + " = " + val + "  # from " + src + "\n")
}

func (d *describer) source(path string) string {
	if s := d.sources[path]; s != "" {
		return s
	}
	return SourceDefault
}

// mapValue renders a map as an inline table; its source lists every layer
// that contributed an entry, since maps merge by key.
func (d *describer) mapValue(v reflect.Value, path string) (string, string) {
	keys := make([]string, 0, v.Len())
	for _, k := range v.MapKeys() {
		keys = append(keys, k.String())
	}
	slices.Sort(keys)
	var parts, srcs []string
	for _, k := range keys {
		val := quote(v.MapIndex(reflect.ValueOf(k)).String())
		if e := v.MapIndex(reflect.ValueOf(k)); e.Kind() == reflect.Struct {
			val = d.inlineStruct(e)
		}
		if d.redact && secretName(k) {
			val = quote(redacted)
		}
		parts = append(parts, quoteKey(k)+" = "+val)
		if s := d.source(joinKey(path, k)); !slices.Contains(srcs, s) {
			srcs = append(srcs, s)
		}
	}
	if len(parts) == 0 {
		return "{}", d.source(path)
	}
	return "{ " + strings.Join(parts, ", ") + " }", strings.Join(srcs, " + ")
}

// inlineStruct renders a struct's set fields as an inline table; a
// client_secret (a plugin's oauth) is redacted like api_key.
func (d *describer) inlineStruct(v reflect.Value) string {
	t := v.Type()
	var parts []string
	for i := range t.NumField() {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		key := t.Field(i).Tag.Get("toml")
		val := formatValue(f)
		if d.redact && key == "client_secret" {
			val = quote(redacted)
		}
		parts = append(parts, quoteKey(key)+" = "+val)
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// prefixSource is the source of the first key recorded under path (the
// keys of an inline table are recorded one by one).
func (d *describer) prefixSource(path string) string {
	if s := d.sources[path]; s != "" {
		return s
	}
	var keys []string
	for k := range d.sources {
		if strings.HasPrefix(k, path+".") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		return d.sources[keys[0]]
	}
	return SourceDefault
}

// secretName reports whether a header name looks like it carries a
// credential.
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"auth", "key", "token", "secret", "cookie", "password", "credential"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func formatValue(v reflect.Value) string {
	if v.Type() == durationType() {
		return quote(formatDuration(time.Duration(v.Int())))
	}
	switch v.Kind() {
	case reflect.String:
		return quote(v.String())
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Pointer:
		return formatValue(v.Elem())
	case reflect.Float64:
		s := strconv.FormatFloat(v.Float(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEIN") {
			s += ".0" // keep it a TOML float
		}
		return s
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = formatValue(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return "?"
}

// formatDuration drops the zero units time.Duration.String spells out, so
// 120s reads "2m" rather than "2m0s".
func formatDuration(dur time.Duration) string {
	s := dur.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// dottedKey quotes each part of a dotted key (tools.allow) as TOML needs.
func dottedKey(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = quoteKey(p)
	}
	return strings.Join(parts, ".")
}
