package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Int is an integer argument that also accepts a numeric string ("30") and
// a whole float (30.0). Models often quote numbers or write them as floats;
// rejecting that wastes a turn on a retry that says nothing new. null and
// "" decode as 0, the same as a missing argument.
type Int int

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(int(f)) {
			return fmt.Errorf("expected an integer, got %s", b)
		}
		v = int(f)
	}
	*n = Int(v)
	return nil
}

// Bool is a boolean argument that also accepts "true"/"false" (any case)
// and 1/0, quoted or not, for the same reason as Int. null and "" decode
// as false, the same as a missing argument.
type Bool bool

// UnmarshalJSON implements json.Unmarshaler.
func (v *Bool) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	switch strings.ToLower(s) {
	case "true", "1":
		*v = true
	case "false", "0", "", "null":
		*v = false
	default:
		return fmt.Errorf("expected true or false, got %s", b)
	}
	return nil
}

// DecodeStrict is DecodeArgs plus a check for argument names the tool does
// not know. encoding/json silently drops them, so a misspelled optional
// argument ("old_str", "max_count") would otherwise be ignored without the
// model ever learning why the call did not do what it asked.
//
// The accepted names are known, or when none are given the json names of
// v's struct fields (embedded structs included; fields tagged "-" are not
// arguments). The error lists the accepted names so the model can correct
// the call in one step.
func DecodeStrict(raw json.RawMessage, v any, known ...string) error {
	if err := DecodeArgs(raw, v); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return nil
	}
	if len(known) == 0 {
		known = argNames(reflect.TypeOf(v))
	}
	var unknown []string
	for k := range m {
		if !contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	expected := strings.Join(known, ", ")
	if len(known) == 0 {
		expected = "no arguments"
	}
	return fmt.Errorf("invalid arguments: unknown argument(s) %s; expected %s",
		strings.Join(unknown, ", "), expected)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// argNameCache maps a struct type to its argument names, computed once.
var argNameCache sync.Map // reflect.Type -> []string

// argNames returns the json names of t's fields in declaration order, t
// being a struct or a pointer to one; nil for any other type.
func argNames(t reflect.Type) []string {
	if t == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	if c, ok := argNameCache.Load(t); ok {
		return c.([]string)
	}
	var names []string
	collectArgNames(t, &names)
	argNameCache.Store(t, names)
	return names
}

func collectArgNames(t reflect.Type, names *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectArgNames(ft, names)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !contains(*names, name) {
			*names = append(*names, name)
		}
	}
}
