package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/reasonix/reasonix/internal/hooks"
	"github.com/reasonix/reasonix/internal/permission"
)

// Error is a problem in a configuration file, located as precisely as the
// file allows. Load joins several of them when a file has several faults.
type Error struct {
	File string
	Line int // 0 when unknown
	Col  int // set for TOML syntax errors only
	// Key is the dotted key at fault; the n-th [[providers]] entry of the
	// file is "providers[n]" (0-based). Empty for syntax errors.
	Key string
	Msg string
	Err error // the underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		fmt.Fprintf(&b, "key %q: ", e.Key)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

func durationType() reflect.Type { return reflect.TypeFor[time.Duration]() }

// merger folds layers onto one Config, recording where each value came
// from and where each provider was defined.
type merger struct {
	env func(string) string
	// ownEnv, when set, is env without the workspace's .env: the
	// person's own files (config.toml, --config) are expanded through
	// it, so a .env a repository brings or a model writes cannot fill a
	// ${VAR:-default} of theirs (a provider's base_url, a hook's command)
	// and redirect their key or run its command; only the project's own
	// file, whose such settings wait for trust, takes .env values.
	ownEnv  func(string) string
	cfg     *Config
	sources map[string]string
	files   []string
	indexes map[string]keyIndex
	// project is the project layer's file, whose hooks need trust and
	// some of whose settings are held until the project is trusted
	// (HeldKey); home is where that trust is recorded; held what was.
	project, home string
	held          []HeldKey
	heldDigest    string
	// trustErr is why the trust file could not be read (Loaded.TrustErr).
	trustErr error
	// projectSeen says the project file was read (held checked there);
	// settingsAllow says, for each Claude Code settings file of the
	// project that was read, which of its allow rules apply (as written);
	// projectTrusted that the project is trusted as it is.
	projectSeen    bool
	settingsAllow  map[string]map[string]bool
	projectTrusted bool
	// provLoc remembers the last definition of each provider so errors
	// found after merging can still point into a file.
	provLoc map[string]*Error
	// plugLoc does the same for [[plugins]] entries.
	plugLoc map[string]*Error
}

func newMerger(env func(string) string) *merger {
	m := &merger{
		env:     env,
		cfg:     Default(),
		sources: map[string]string{},
		indexes: map[string]keyIndex{},
		provLoc: map[string]*Error{},
		plugLoc: map[string]*Error{},
	}
	recordDefaults(reflect.ValueOf(m.cfg).Elem(), "", m.sources)
	return m
}

func recordDefaults(rv reflect.Value, path string, sources map[string]string) {
	t := rv.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		p := joinKey(path, f.Tag.Get("toml"))
		switch {
		case f.Type.Kind() == reflect.Struct:
			recordDefaults(rv.Field(i), p, sources)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			// Providers have no defaults.
		default:
			sources[p] = SourceDefault
		}
	}
}

// fileDecoder decodes one file's raw TOML tree onto the merged Config.
type fileDecoder struct {
	m    *merger
	file string
	ix   keyIndex
}

// mergeFile parses one layer and folds it onto the merged config.
func (m *merger) mergeFile(path string, data []byte) []error {
	src := string(data)
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return []error{&Error{File: path, Line: line, Col: col, Msg: strings.TrimPrefix(de.Error(), "toml: "), Err: err}}
		}
		return []error{&Error{File: path, Msg: err.Error(), Err: err}}
	}
	env := m.env
	if m.ownEnv != nil && (m.project == "" || !sameFile(path, m.project)) {
		env = m.ownEnv
	}
	expandTree(raw, env)
	ix := indexKeys(src)
	m.indexes[path] = ix
	if m.project != "" && sameFile(path, m.project) {
		m.projectSeen = true
		held, errs := m.holdUntrusted(path, data, raw, ix)
		if len(errs) > 0 {
			return errs
		}
		m.held = append(m.held, held...)
	}
	d := &fileDecoder{m: m, file: path, ix: ix}
	errs := d.decodeStruct(raw, reflect.ValueOf(m.cfg).Elem(), "", "")
	errs = append(errs, d.checkRules(raw)...)
	return append(errs, d.checkInstructions(raw)...)
}

// checkInstructions refuses empty entries of the instructions list, which
// would otherwise name the workspace directory itself.
func (d *fileDecoder) checkInstructions(raw map[string]any) []error {
	items, _ := raw["instructions"].([]any)
	var errs []error
	for i, it := range items {
		if s, ok := it.(string); ok && strings.TrimSpace(s) == "" {
			errs = append(errs, d.errorf(fmt.Sprintf("instructions[%d]", i), "empty path: name a rules file, relative to the workspace"))
		}
	}
	return errs
}

// checkRules parses this file's permission rules now, so a bad rule is
// reported with its file, line and key rather than later, by whoever
// builds the policy from the merged lists, with no location at all.
func (d *fileDecoder) checkRules(raw map[string]any) []error {
	perms, _ := raw["permissions"].(map[string]any)
	var errs []error
	for _, list := range []string{"allow", "ask", "deny", "dangerous"} {
		items, _ := perms[list].([]any)
		for i, it := range items {
			s, ok := it.(string)
			if !ok {
				continue // the decoder has reported the type
			}
			var err error
			if list == "dangerous" {
				// ParsePolicy knows the bare-command form; its own
				// "[permissions] dangerous:" prefix would repeat the key.
				if _, err = permission.ParsePolicy("", nil, nil, nil, []string{s}); errors.Unwrap(err) != nil {
					err = errors.Unwrap(err)
				}
			} else {
				_, err = permission.ParseRule(s)
			}
			if err != nil {
				key := fmt.Sprintf("permissions.%s[%d]", list, i)
				errs = append(errs, &Error{File: d.file, Line: d.ix.lookup(key), Key: key, Msg: err.Error(), Err: err})
			}
		}
	}
	return errs
}

func (d *fileDecoder) errorf(key, format string, args ...any) *Error {
	return &Error{File: d.file, Line: d.ix.lookup(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

func (d *fileDecoder) set(sp string) { d.m.sources[sp] = d.file }

// orderedKeys sorts a table's keys by their line so errors come out in
// file order.
func (d *fileDecoder) orderedKeys(raw map[string]any, kp string) []string {
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := d.ix.lookup(joinKey(kp, keys[i])), d.ix.lookup(joinKey(kp, keys[j]))
		if li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// decodeStruct decodes table raw onto rv. kp is the key path used for
// error locations, sp the path used in Sources; they differ only under
// [[providers]], which errors address by position and sources by name.
func (d *fileDecoder) decodeStruct(raw map[string]any, rv reflect.Value, kp, sp string) []error {
	t := rv.Type()
	fields := map[string]int{}
	known := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("toml")
		fields[name] = i
		known = append(known, name)
	}
	var errs []error
	for _, k := range d.orderedKeys(raw, kp) {
		kpk, spk := joinKey(kp, k), joinKey(sp, k)
		i, ok := fields[k]
		if !ok {
			where := "at the top level"
			if kp != "" && !strings.Contains(kp, "[") {
				where = "in [" + kp + "]"
			} else if kp != "" {
				where = "in " + kp
			}
			errs = append(errs, d.errorf(kpk, "unknown key (known keys %s: %s)", where, strings.Join(known, ", ")))
			continue
		}
		errs = append(errs, d.decodeField(raw[k], rv.Field(i), t.Field(i), kpk, spk)...)
	}
	return errs
}

func (d *fileDecoder) decodeField(v any, fv reflect.Value, sf reflect.StructField, kp, sp string) []error {
	typeErr := func(want string) []error {
		return []error{d.errorf(kp, "expected %s, got %s", want, tomlType(v))}
	}
	switch t := fv.Type(); {
	case t == durationType():
		s, ok := v.(string)
		if !ok {
			return typeErr(`duration string such as "120s"`)
		}
		dur, err := time.ParseDuration(s)
		if err != nil {
			return []error{d.errorf(kp, "invalid duration %q: want a number and a unit, such as \"90s\" or \"10m\"", s)}
		}
		if dur < 0 {
			return []error{d.errorf(kp, "duration %q must not be negative", s)}
		}
		fv.SetInt(int64(dur))
	case t.Kind() == reflect.String:
		s, ok := v.(string)
		if !ok {
			return typeErr("string")
		}
		if enum, ok := sf.Tag.Lookup("enum"); ok && !slices.Contains(strings.Split(enum, ","), s) {
			return []error{d.errorf(kp, "invalid value %q: want one of %s", s, describeEnum(enum))}
		}
		fv.SetString(s)
	case t.Kind() == reflect.Int:
		n, ok := v.(int64)
		if !ok {
			return typeErr("integer")
		}
		if err := checkRange(sf, n); err != "" {
			return []error{d.errorf(kp, "%d is out of range: %s", n, err)}
		}
		fv.SetInt(n)
	case t.Kind() == reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return typeErr("boolean")
		}
		fv.SetBool(b)
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return typeErr("boolean")
		}
		fv.Set(reflect.ValueOf(&b))
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Int:
		n, ok := v.(int64)
		if !ok {
			return typeErr("integer")
		}
		if err := checkRange(sf, n); err != "" {
			return []error{d.errorf(kp, "%d is out of range: %s", n, err)}
		}
		i := int(n)
		fv.Set(reflect.ValueOf(&i))
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Float64:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		default:
			return typeErr("number")
		}
		fv.Set(reflect.ValueOf(&f))
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		list, errs := d.stringList(v, kp)
		if errs != nil {
			return errs
		}
		if sf.Tag.Get("merge") == "concat" {
			cur := fv.Interface().([]string)
			fv.Set(reflect.ValueOf(appendUnique(slices.Clone(cur), list...)))
			d.concatSource(sp)
			return nil
		}
		fv.Set(reflect.ValueOf(list))
	case t.Kind() == reflect.Slice && t.Elem() == reflect.TypeFor[Hook]():
		return d.decodeHooks(v, fv, kp)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		return d.decodeNamed(v, fv, kp, sp)
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct:
		// A table of tables ([providers.model_prices]): each entry is
		// decoded as the struct, keyed by its name.
		table, ok := v.(map[string]any)
		if !ok {
			return typeErr("table of tables")
		}
		if fv.IsNil() {
			fv.Set(reflect.MakeMap(t))
		}
		var errs []error
		for _, k := range d.orderedKeys(table, kp) {
			sub, ok := table[k].(map[string]any)
			if !ok {
				errs = append(errs, d.errorf(joinKey(kp, k), "expected table, got %s", tomlType(table[k])))
				continue
			}
			ev := reflect.New(t.Elem()).Elem()
			if cur := fv.MapIndex(reflect.ValueOf(k)); cur.IsValid() {
				ev.Set(cur)
			}
			errs = append(errs, d.decodeStruct(sub, ev, joinKey(kp, k), joinKey(sp, k))...)
			fv.SetMapIndex(reflect.ValueOf(k), ev)
			d.set(joinKey(sp, k))
		}
		return errs
	case t.Kind() == reflect.Map:
		table, ok := v.(map[string]any)
		if !ok {
			return typeErr("table of strings")
		}
		if fv.IsNil() {
			fv.Set(reflect.MakeMap(t))
		}
		var errs []error
		for _, k := range d.orderedKeys(table, kp) {
			s, ok := table[k].(string)
			if !ok {
				errs = append(errs, d.errorf(joinKey(kp, k), "expected string, got %s", tomlType(table[k])))
				continue
			}
			fv.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(s))
			d.set(joinKey(sp, k))
		}
		return errs
	case t.Kind() == reflect.Struct:
		table, ok := v.(map[string]any)
		if !ok {
			return typeErr("table")
		}
		return d.decodeStruct(table, fv, kp, sp)
	default:
		// Only reachable if a field of an unsupported type is added to
		// the schema; the tests decode every field.
		return []error{d.errorf(kp, "internal error: unsupported field type %s", t)}
	}
	d.set(sp)
	return nil
}

// concatSource records one more contributor to an accumulated list.
func (d *fileDecoder) concatSource(sp string) {
	prev := d.m.sources[sp]
	if prev == "" || prev == SourceDefault {
		d.set(sp)
		return
	}
	if !slices.Contains(strings.Split(prev, " + "), d.file) {
		d.m.sources[sp] = prev + " + " + d.file
	}
}

func (d *fileDecoder) stringList(v any, kp string) ([]string, []error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, []error{d.errorf(kp, "expected array of strings, got %s", tomlType(v))}
	}
	out := make([]string, 0, len(arr))
	var errs []error
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			errs = append(errs, d.errorf(kp+"["+strconv.Itoa(i)+"]", "expected string, got %s", tomlType(e)))
			continue
		}
		out = append(out, s)
	}
	return out, errs
}

// decodeNamed merges arrays of tables keyed by name ([[providers]],
// [[plugins]]): an entry naming an existing one overrides it field by
// field, a new name is appended.
func (d *fileDecoder) decodeNamed(v any, fv reflect.Value, kp, sp string) []error {
	var entries []map[string]any
	switch x := v.(type) {
	case []map[string]any:
		entries = x
	case []any:
		for i, e := range x {
			t, ok := e.(map[string]any)
			if !ok {
				return []error{d.errorf(kp+"["+strconv.Itoa(i)+"]", "expected table, got %s", tomlType(e))}
			}
			entries = append(entries, t)
		}
	default:
		return []error{d.errorf(kp, "expected array of tables ([[%s]]), got %s", kp, tomlType(v))}
	}
	what := strings.TrimSuffix(kp, "s") // "provider", "plugin"
	seen := map[string]string{}         // name -> key of its entry in this file
	var errs []error
	for i, e := range entries {
		ekp := kp + "[" + strconv.Itoa(i) + "]"
		name, _ := e["name"].(string)
		if name == "" {
			errs = append(errs, d.errorf(ekp, "%s has no name: every [[%s]] entry needs name = \"...\"", what, kp))
			continue
		}
		if prev, dup := seen[name]; dup {
			errs = append(errs, d.errorf(ekp, "duplicate %s name %q (also defined at line %d)", what, name, d.ix.lookup(prev)))
			continue
		}
		seen[name] = ekp
		j := -1
		for k := range fv.Len() {
			if fv.Index(k).FieldByName("Name").String() == name {
				j = k
				break
			}
		}
		if j < 0 {
			fv.Set(reflect.Append(fv, reflect.New(fv.Type().Elem()).Elem()))
			j = fv.Len() - 1
		}
		ev := fv.Index(j)
		errs = append(errs, d.decodeStruct(e, ev, ekp, joinKey(sp, name))...)
		if p, ok := ev.Addr().Interface().(*Provider); ok {
			// The script path is written relative to the file that names
			// it, not to wherever reasonix happens to run.
			if s, ok := e["script"].(string); ok && s != "" && !filepath.IsAbs(p.Script) {
				p.Script = filepath.Join(filepath.Dir(d.file), p.Script)
			}
			d.m.provLoc[name] = &Error{File: d.file, Line: d.ix.lookup(ekp), Key: ekp}
		} else {
			d.m.plugLoc[name] = &Error{File: d.file, Line: d.ix.lookup(ekp), Key: ekp}
		}
	}
	return errs
}

// decodeHooks appends this file's [[hooks]] entries to those of the
// layers below: hooks add up, they never override one another.
func (d *fileDecoder) decodeHooks(v any, fv reflect.Value, kp string) []error {
	entries, err := tables(v)
	if err != "" {
		return []error{d.errorf(kp, "%s", err)}
	}
	list := fv.Addr().Interface().(*[]Hook)
	var errs []error
	for i, e := range entries {
		ekp := kp + "[" + strconv.Itoa(i) + "]"
		var h Hook
		if es := d.decodeStruct(e, reflect.ValueOf(&h).Elem(), ekp, ekp); len(es) > 0 {
			errs = append(errs, es...)
			continue
		}
		switch {
		case !hooks.Known(h.Event):
			errs = append(errs, d.errorf(ekp+".event", "unknown hook event %q: want one of %s", h.Event, strings.Join(hooks.Events, ", ")))
			continue
		case strings.TrimSpace(h.Command) == "":
			errs = append(errs, d.errorf(ekp+".command", "a hook needs a command"))
			continue
		}
		h.Source, h.Line, h.Project = d.file, d.ix.lookup(ekp), d.m.project != "" && sameFile(d.file, d.m.project)
		*list = append(*list, h)
	}
	return errs
}

// tables reads an array of tables.
func tables(v any) ([]map[string]any, string) {
	switch x := v.(type) {
	case []map[string]any:
		return x, ""
	case []any:
		var out []map[string]any
		for _, e := range x {
			t, ok := e.(map[string]any)
			if !ok {
				return nil, "expected an array of tables, got " + tomlType(e) + " in it"
			}
			out = append(out, t)
		}
		return out, ""
	}
	return nil, "expected an array of tables ([[hooks]]), got " + tomlType(v)
}

func sameFile(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

func checkRange(sf reflect.StructField, n int64) string {
	if s, ok := sf.Tag.Lookup("min"); ok {
		if lo, _ := strconv.ParseInt(s, 10, 64); n < lo {
			if hi, ok := sf.Tag.Lookup("max"); ok {
				return "want " + s + ".." + hi
			}
			return "want at least " + s
		}
	}
	if s, ok := sf.Tag.Lookup("max"); ok {
		if hi, _ := strconv.ParseInt(s, 10, 64); n > hi {
			if lo, ok := sf.Tag.Lookup("min"); ok {
				return "want " + lo + ".." + s
			}
			return "want at most " + s
		}
	}
	return ""
}

func describeEnum(enum string) string {
	var out []string
	for _, v := range strings.Split(enum, ",") {
		out = append(out, strconv.Quote(v))
	}
	return strings.Join(out, ", ")
}

// tomlType names the TOML type of a decoded value for error messages.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case time.Time:
		return "datetime"
	case []any, []map[string]any:
		return "array"
	case map[string]any:
		return "table"
	}
	return fmt.Sprintf("%T", v)
}

func appendUnique(list []string, add ...string) []string {
	for _, s := range add {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}
