package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// AppendRule adds rule to the [permissions] list ("allow", "ask" or
// "deny") of the TOML file at path, typically a project reasonix.toml. It
// edits the text in place rather than re-encoding the file, so comments and
// layout survive; it creates the file or the [permissions] table when
// missing, does nothing when the rule is already there, and replaces the
// file atomically. The edit is checked by re-parsing: if anything but the
// one rule would change, the file is left untouched and an error says so.
func AppendRule(path, list, rule string) error {
	if list != "allow" && list != "ask" && list != "deny" {
		return fmt.Errorf("config: unknown permission list %q: want allow, ask or deny", list)
	}
	if strings.TrimSpace(rule) == "" {
		return errors.New("config: empty permission rule")
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config: %w", err)
	}
	src := string(data)
	var before map[string]any
	if err := toml.Unmarshal([]byte(src), &before); err != nil {
		return fmt.Errorf("config: %s does not parse, so no rule was added: %w", path, err)
	}
	want, present, ok := withRule(before, list, rule)
	if !ok {
		return fmt.Errorf("config: %s: permissions.%s is not a list of strings; no rule was added", path, list)
	}
	if present {
		return nil
	}

	out := insertRule(src, list, rule)
	var after map[string]any
	if err := toml.Unmarshal([]byte(out), &after); err != nil || !reflect.DeepEqual(after, want) {
		return fmt.Errorf("config: cannot add the rule to %s automatically (its [permissions] are written in a form this editor does not handle); add %s = [%s] under [permissions] by hand", path, list, quote(rule))
	}
	if err := writeAtomic(path, []byte(out), 0o644); err != nil {
		return err
	}
	return nil
}

// insertRule returns src with rule added as text: into the existing list,
// as a new key under an existing [permissions] header, or as a new table at
// the end.
func insertRule(src, list, rule string) string {
	ix := indexKeys(src)
	q := quote(rule)
	if loc, ok := ix["permissions."+list]; ok && loc.value >= 0 && loc.value < len(src) && src[loc.value] == '[' {
		_, last := containerEnd(src, loc.value)
		switch src[last] {
		case '[':
		case ',':
			q = " " + q
		default:
			q = ", " + q
		}
		return src[:last+1] + q + src[last+1:]
	}
	line := list + " = [" + q + "]\n"
	if loc, ok := ix["permissions"]; ok && loc.value < 0 {
		at := lineEnd(src, loc.off)
		if at == len(src) && !strings.HasSuffix(src, "\n") {
			line = "\n" + line
		}
		return src[:at] + line + src[at:]
	}
	var b strings.Builder
	b.WriteString(src)
	if src != "" {
		if !strings.HasSuffix(src, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("[permissions]\n" + line)
	return b.String()
}

// withRule returns a copy of the decoded tree with rule appended to
// permissions.<list>, whether it was already present, and false when the
// existing value has a shape a rule cannot be added to.
func withRule(tree map[string]any, list, rule string) (map[string]any, bool, bool) {
	out := make(map[string]any, len(tree)+1)
	for k, v := range tree {
		out[k] = v
	}
	perms := map[string]any{}
	if p, ok := tree["permissions"]; ok {
		m, ok := p.(map[string]any)
		if !ok {
			return nil, false, false
		}
		for k, v := range m {
			perms[k] = v
		}
	}
	var items []any
	if v, ok := perms[list]; ok {
		arr, ok := v.([]any)
		if !ok {
			return nil, false, false
		}
		if slices.Contains(arr, any(rule)) {
			return nil, true, true
		}
		items = slices.Clone(arr)
	}
	perms[list] = append(items, rule)
	out["permissions"] = perms
	return out, false, true
}
