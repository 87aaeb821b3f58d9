package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/store"
)

// ProjectTrustFile, in the Reasonix home, records the projects whose own
// settings a person trusted to widen what Reasonix does (HeldKey): each
// workspace with the digest of the settings they reviewed, and the allow
// rules the person added there by answering "always allow" (AllowAlways).
const ProjectTrustFile = "trusted-projects.json"

// HeldKey is a setting a project brings that is not applied until a
// person trusts the project (`reasonix trust`): in its reasonix.toml, it
// would send the conversation and the person's API key to another
// endpoint (providers), weaken the sandbox (bash off, network, more
// writable or readable paths, another workspace root) or loosen the
// permission posture (auto, yolo); in its reasonix.toml or its Claude Code
// settings files (.claude/settings.json, .claude/settings.local.json), an
// allow rule would run calls without asking. A checked-out repository must
// not do any of that by being opened. What only narrows (deny and ask
// rules, a stricter mode, more deny_read) is applied at once, and so is an
// allow rule the person added themselves (AllowAlways).
type HeldKey struct {
	File string
	Line int
	// Key is the setting's dotted key; for an allow rule, the key and the
	// quoted rule (permissions.allow "Bash(npm test:*)").
	Key string
	Why string
}

func (h HeldKey) String() string {
	return fmt.Sprintf("%s:%d: %s (%s)", h.File, h.Line, h.Key, h.Why)
}

// allowWhy is why a project's allow rule is held.
const allowWhy = "runs the calls it matches without asking you"

// claudeSettingsFiles are the project's Claude Code settings files whose
// allow rules wait for trust, relative to the workspace, in the order
// they are read.
func claudeSettingsFiles() []string {
	return []string{filepath.Join(".claude", "settings.json"), filepath.Join(".claude", "settings.local.json")}
}

// heldSetting is a setting held back, with its value (for the digest) and
// why: a key of the project file's table, or one allow rule of it or of a
// Claude Code settings file.
type heldSetting struct {
	key   string // dotted, as the key index names it
	table string // "" for a top-level key
	name  string
	value any
	why   string
	// rule is set for an allow rule: value is one entry of the list at
	// key, at index.
	rule  bool
	index int
	// file is the Claude Code settings file of the rule, relative to the
	// workspace, and line its line; "" for the project's reasonix.toml.
	file string
	line int
}

// widening lists what raw (a project file's decoded table) sets that an
// untrusted project may not; approved says which allow rules the person
// added themselves.
func widening(raw map[string]any, approved func(string) bool) []heldSetting {
	var out []heldSetting
	top := func(name, why string) {
		if v, ok := raw[name]; ok {
			out = append(out, heldSetting{key: name, name: name, value: v, why: why})
		}
	}
	sub := func(table, name string, widens func(any) bool, why string) {
		t, _ := raw[table].(map[string]any)
		if v, ok := t[name]; ok && widens(v) {
			out = append(out, heldSetting{key: table + "." + name, table: table, name: name, value: v, why: why})
		}
	}
	always := func(any) bool { return true }
	top("providers", "model endpoints: the conversation and your API key would go there")
	if _, ok := raw["providers"]; ok {
		// Model references that may name those providers.
		top("default_model", "names a model of this file's providers")
		for _, n := range []string{"planner_model", "subagent_model", "subagent_models"} {
			sub("agent", n, always, "names a model of this file's providers")
		}
	}
	sub("sandbox", "bash", func(v any) bool { return v == "off" }, "turns the sandbox off")
	sub("sandbox", "network", func(v any) bool { return v == true }, "lets commands use the network")
	sub("sandbox", "allow_write", nonEmpty, "more paths commands may write")
	sub("sandbox", "allow_read", nonEmpty, "more paths tools may read")
	sub("sandbox", "workspace_root", always, "moves the workspace, where commands may write")
	sub("permissions", "mode", func(v any) bool { return v == "auto" || v == "yolo" || v == "allow" }, "runs calls without asking")
	perms, _ := raw["permissions"].(map[string]any)
	allow, _ := perms["allow"].([]any)
	for i, v := range allow {
		// Another type is the decoder's to report.
		if s, ok := v.(string); ok && !approved(s) {
			out = append(out, heldSetting{key: "permissions.allow", table: "permissions", name: "allow", value: s, why: allowWhy, rule: true, index: i})
		}
	}
	return out
}

// claudeAllow reads the allow rules of the project's Claude Code settings
// files in ws: those an untrusted project may not make (all but the ones
// approved says the person added), and every rule of each file read, by
// its path. The user's own file (~/.claude/settings.json, when ws is the
// home directory) is not the project's. A file that does not parse is
// skipped: the settings package reports it, and the run stops.
func claudeAllow(ws string, approved func(string) bool) ([]heldSetting, map[string][]string) {
	var held []heldSetting
	read := map[string][]string{}
	uh, _ := os.UserHomeDir()
	for _, rel := range claudeSettingsFiles() {
		path := filepath.Join(ws, rel)
		if uh != "" && sameFile(path, filepath.Join(uh, ".claude", "settings.json")) {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var root struct {
			Permissions struct {
				Allow []any `json:"allow"`
			} `json:"permissions"`
		}
		if json.Unmarshal(data, &root) != nil {
			continue
		}
		var lines map[string]int
		var rules []string
		for i, v := range root.Permissions.Allow {
			s, ok := v.(string)
			if !ok {
				continue
			}
			rules = append(rules, s)
			if _, err := permission.ParseRule(s); approved(s) || errors.Is(err, permission.ErrUnknownTool) {
				// A rule for a tool Reasonix lacks decides nothing.
				continue
			}
			if lines == nil {
				lines = JSONLines(data)
			}
			held = append(held, heldSetting{key: "permissions.allow", value: s, why: allowWhy, rule: true, index: i,
				file: filepath.ToSlash(rel), line: lines[fmt.Sprintf("permissions.allow[%d]", i)]})
		}
		read[path] = rules
	}
	return held, read
}

func nonEmpty(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) > 0
}

// digest is what a trust decision is about: the held settings' values
// (the held rules of each allow list, in order).
func digest(held []heldSetting) string {
	m := map[string]any{}
	for _, h := range held {
		k := h.key
		if h.file != "" {
			k = h.file + " " + k
		}
		if h.rule {
			l, _ := m[k].([]any)
			m[k] = append(l, h.value)
		} else {
			m[k] = h.value
		}
	}
	b, _ := json.Marshal(m) // map keys are sorted
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// trustRecord is what the trust store holds for one workspace: the digest
// of the settings the person trusted ("" when they never did, or revoked
// it), and the allow rules they added there by answering "always allow".
// Written as the digest alone when there are no such rules, the form the
// store had before it kept them.
type trustRecord struct {
	Digest  string   `json:"digest,omitempty"`
	Allowed []string `json:"allowed,omitempty"`
	// Rules are the project's own allow rules the person trusted, each
	// by itself: a rule added later waits alone, leaving the rest of the
	// project applied. Claude Code appends to .claude/settings.local.json
	// at every "always allow" answered there; were the rules part of the
	// digest, each would hold the project's endpoints and sandbox
	// settings until trusted again.
	Rules []string `json:"rules,omitempty"`
}

func (r trustRecord) MarshalJSON() ([]byte, error) {
	if len(r.Allowed) == 0 && len(r.Rules) == 0 {
		return json.Marshal(r.Digest)
	}
	type plain trustRecord
	return json.Marshal(plain(r))
}

func (r *trustRecord) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*r = trustRecord{Digest: s}
		return nil
	}
	type plain trustRecord
	return json.Unmarshal(b, (*plain)(r))
}

// approves reports whether the person added rule themselves.
func (r trustRecord) approves(rule string) bool { return slices.Contains(r.Allowed, rule) }

// trusts reports whether rule applies without waiting: the person added
// it, or trusted it as the project's.
func (r trustRecord) trusts(rule string) bool {
	return r.approves(rule) || slices.Contains(r.Rules, rule)
}

// split parts held into the project file's settings, which a trust covers
// as one digest, and allow rules, each trusted by itself.
func split(held []heldSetting) (settings, rules []heldSetting) {
	for _, h := range held {
		if h.rule {
			rules = append(rules, h)
		} else {
			settings = append(settings, h)
		}
	}
	return settings, rules
}

// waiting is what of held (found with rec.trusts) waits for trust: every
// rule in it, and the settings unless the person trusted exactly these
// values.
func (r trustRecord) waiting(held []heldSetting) []heldSetting {
	settings, rules := split(held)
	if len(settings) > 0 && r.Digest != digest(settings) {
		return held
	}
	return rules
}

type trustRecords map[string]trustRecord // workspace -> record

// readProjectTrust reads the trust records. A file that cannot be read
// or does not parse (store.BadJSONError) is an error naming it, with
// empty records beside it: nothing is trusted, and the caller must not
// write the empty records back over the file.
func readProjectTrust(home string) (trustRecords, error) {
	var t trustRecords
	if err := store.ReadJSON(filepath.Join(home, ProjectTrustFile), &t); err != nil {
		return trustRecords{}, err // it names the file
	}
	if t == nil {
		t = trustRecords{}
	}
	return t, nil
}

// holdUntrusted removes from raw, the project file's table (data its
// text), the settings an untrusted project may not make, unless the person
// trusted exactly these values (with the allow rules of the project's
// Claude Code settings files) for this workspace; it returns what it
// removed and what is held of those files, or the mistakes in the file.
// raw is nil when the project has no reasonix.toml: its Claude Code
// settings files may still hold allow rules.
func (m *merger) holdUntrusted(path string, data []byte, raw map[string]any, ix keyIndex) ([]HeldKey, []error) {
	ws, _ := filepath.Abs(filepath.Dir(path))
	recs, err := readProjectTrust(m.home)
	if err != nil {
		m.trustErr = err
	}
	rec := recs[ws]
	var found []heldSetting
	if raw != nil {
		found = widening(raw, rec.trusts)
	}
	claude, read := claudeAllow(ws, rec.trusts)
	found = append(found, claude...)
	held := rec.waiting(found)
	waits := map[string]bool{}
	for _, h := range held {
		if h.rule {
			waits[h.file+"\x00"+h.value.(string)] = true
		}
	}
	m.settingsAllow = map[string]map[string]bool{}
	for path, rules := range read {
		rel, _ := filepath.Rel(ws, path)
		applies := map[string]bool{}
		for _, r := range rules {
			applies[r] = !waits[filepath.ToSlash(rel)+"\x00"+r]
		}
		m.settingsAllow[path] = applies
	}
	m.projectTrusted = rec.Digest != "" && len(held) == 0
	if len(held) == 0 {
		// Applied, so decoded (and checked) with the rest of the file.
		return nil, nil
	}
	if raw != nil {
		// What is held is still checked, so a mistake in it is reported
		// with its place as anywhere else; only here, where the caller's
		// decode will not see it, so a trusted project's file is decoded
		// once.
		if errs := newMerger(m.env).mergeFile(path, data); len(errs) > 0 {
			return nil, errs
		}
	}
	m.heldDigest = digest(held)
	dropHeld(raw, held)
	return heldKeys(ws, held, ix), nil
}

// dropHeld removes the held settings of the project file from its table.
func dropHeld(raw map[string]any, held []heldSetting) {
	heldRule := map[int]bool{}
	for _, h := range held {
		switch {
		case h.file != "":
		case h.rule:
			heldRule[h.index] = true
		case h.table == "":
			delete(raw, h.name)
		default:
			if t, ok := raw[h.table].(map[string]any); ok {
				delete(t, h.name)
			}
		}
	}
	if len(heldRule) == 0 {
		return
	}
	perms := raw["permissions"].(map[string]any) // widening found the rules there
	var kept []any
	for i, v := range perms["allow"].([]any) {
		if !heldRule[i] {
			kept = append(kept, v)
		}
	}
	if kept == nil {
		delete(perms, "allow")
	} else {
		perms["allow"] = kept
	}
}

// heldKeys describes held for a person: the project file's settings in
// its order, as they read it, then each Claude Code settings file's rules.
func heldKeys(ws string, held []heldSetting, ix keyIndex) []HeldKey {
	out := make([]HeldKey, 0, len(held))
	for _, h := range held {
		k := HeldKey{File: filepath.Join(ws, ProjectFile), Key: h.key, Why: h.why}
		switch {
		case h.file != "":
			k.File, k.Line = filepath.Join(ws, filepath.FromSlash(h.file)), h.line
		case h.rule:
			k.Line = heldLine(ix, fmt.Sprintf("%s[%d]", h.key, h.index))
		default:
			k.Line = heldLine(ix, h.key)
		}
		if h.rule {
			k.Key += " " + strconv.Quote(h.value.(string))
		}
		out = append(out, k)
	}
	project := filepath.Join(ws, ProjectFile)
	sort.SliceStable(out, func(i, j int) bool {
		pi, pj := out[i].File == project, out[j].File == project
		if pi != pj {
			return pi
		}
		// A settings file's rules are in its order already.
		return pi && out[i].Line < out[j].Line
	})
	return out
}

// heldLine is the line of a held key; a table array's is its first entry's.
func heldLine(ix keyIndex, key string) int {
	if l := ix.lookup(key); l > 0 {
		return l
	}
	return ix.lookup(key + "[0]")
}

// TrustProject records that the person trusts the project at workspace:
// the settings its project file and Claude Code settings files now make
// that an untrusted project may not (see [HeldKey]), which it returns,
// and the looser posture its agent files and Claude Code settings may ask
// for. A later change to those settings needs trusting again.
func TrustProject(home, workspace string) ([]HeldKey, error) {
	return trustProject(home, workspace, "")
}

// TrustProjectAsShown is TrustProject for the settings a person was
// shown, as loaded (Loaded.HeldDigest): when the files changed them since,
// it records nothing and says so, so a change made while the question was
// open is not trusted unseen.
func TrustProjectAsShown(home, workspace, shown string) ([]HeldKey, error) {
	return trustProject(home, workspace, shown)
}

func trustProject(home, workspace, shown string) ([]HeldKey, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return nil, err
	}
	t, err := readProjectTrust(home)
	if err != nil {
		return nil, keptAsItIs(err)
	}
	rec := t[ws]
	// Everything the project makes that the person did not add, read
	// once: what waits now is that less the rules trusted before.
	all, ix, err := projectHeld(ws, rec.approves)
	if err != nil {
		return nil, err
	}
	held := rec.waiting(slices.DeleteFunc(slices.Clone(all), func(h heldSetting) bool {
		return h.rule && rec.trusts(h.value.(string))
	}))
	if shown != "" && digest(held) != shown {
		return nil, fmt.Errorf("the settings of %s changed while you were asked; nothing was trusted: look at them again", ws)
	}
	// All of it trusted as it is: the settings as one digest, each allow
	// rule by itself (rules trusted before and since removed are
	// forgotten). Recorded even with nothing held: the trust also lets
	// the project's agent files and Claude Code settings loosen the
	// posture.
	settings, rules := split(all)
	rec.Digest, rec.Rules = digest(settings), nil
	for _, r := range rules {
		if v := r.value.(string); !slices.Contains(rec.Rules, v) {
			rec.Rules = append(rec.Rules, v)
		}
	}
	t[ws] = rec
	if err := writeProjectTrust(home, t); err != nil {
		return nil, err
	}
	if len(held) == 0 {
		return nil, nil
	}
	return heldKeys(ws, held, ix), nil
}

// AllowAlways adds rule to the [permissions] allow list of the project
// file of workspace (AppendRule), as the person answered "always allow",
// and records it in the trust store as theirs: a rule the person added is
// applied without trusting the project and is no part of what a trust is
// about, so it works at the next start of an untrusted project and leaves
// a trusted one trusted. Only that exact rule text is the person's; what
// else the project allows still waits for trust.
func AllowAlways(home, workspace, rule string) error {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return err
	}
	t, err := readProjectTrust(home)
	if err != nil {
		// Not even the rule is saved: it would wait for a trust that
		// cannot be recorded.
		return keptAsItIs(err)
	}
	rec := t[ws]
	if err := AppendRule(filepath.Join(ws, ProjectFile), "allow", rule); err != nil {
		return err
	}
	// A trust's digest is of the project file's settings, not of its
	// rules, so a trusted project stays trusted.
	if !rec.approves(rule) {
		rec.Allowed = append(rec.Allowed, rule)
	}
	t[ws] = rec
	return writeProjectTrust(home, t)
}

// ProjectTrusted reports whether a person has trusted the project at
// workspace (`reasonix trust`), whatever its settings are now. When the
// trust file cannot be read it reports false, with the error for the
// caller to show: nothing is trusted then.
func ProjectTrusted(home, workspace string) (bool, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return false, err
	}
	t, err := readProjectTrust(home)
	return t[ws].Digest != "", err
}

// UntrustProject forgets the trust recorded for workspace; it reports
// whether there was any. The allow rules the person added there
// themselves (AllowAlways) stay theirs.
func UntrustProject(home, workspace string) (bool, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return false, err
	}
	t, err := readProjectTrust(home)
	if err != nil {
		return false, keptAsItIs(err)
	}
	rec, ok := t[ws]
	if !ok || rec.Digest == "" {
		return false, nil
	}
	rec.Digest, rec.Rules = "", nil
	if len(rec.Allowed) == 0 {
		delete(t, ws)
	} else {
		t[ws] = rec
	}
	return true, writeProjectTrust(home, t)
}

// projectHeld is what the project at ws holds until trusted, as Load
// finds it: its reasonix.toml expanded as Load expands it, the
// workspace's .env behind the environment, so the digest is that of the
// values Load holds (a mistake in the .env is Load's to report), and its
// Claude Code settings files' allow rules; with the project file's key
// index.
func projectHeld(ws string, approved func(string) bool) ([]heldSetting, keyIndex, error) {
	path := filepath.Join(ws, ProjectFile)
	var held []heldSetting
	var ix keyIndex
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, nil, fmt.Errorf("trust: %w", err)
	default:
		dot, _, _ := readDotEnv(filepath.Join(ws, DotEnvFile))
		env := withDotEnv(os.Getenv, dot)
		if errs := newMerger(env).mergeFile(path, data); len(errs) > 0 {
			return nil, nil, errors.Join(errs...)
		}
		var raw map[string]any
		if err := toml.Unmarshal(data, &raw); err != nil {
			return nil, nil, err
		}
		expandTree(raw, env)
		held = widening(raw, approved)
		ix = indexKeys(string(data))
	}
	claude, _ := claudeAllow(ws, approved)
	return append(held, claude...), ix, nil
}

// keptAsItIs says that a change to the trust records was not made
// because the file could not be read (err names it).
func keptAsItIs(err error) error {
	return fmt.Errorf("%w; nothing was recorded and the file is left as it is: fix or remove it", err)
}

func writeProjectTrust(home string, t trustRecords) error {
	if err := store.WriteJSON(filepath.Join(home, ProjectTrustFile), t); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	return nil
}

// HeldSummary names the held keys in one line, by file (reasonix.toml,
// .claude/settings.json).
func HeldSummary(held []HeldKey) string {
	var parts []string
	last := ""
	for _, h := range held {
		name := filepath.Base(h.File)
		if d := filepath.Base(filepath.Dir(h.File)); d == ".claude" {
			name = d + "/" + name
		}
		if name != last {
			parts = append(parts, name+": "+h.Key)
			last = name
			continue
		}
		parts[len(parts)-1] += ", " + h.Key
	}
	return strings.Join(parts, "; ")
}
