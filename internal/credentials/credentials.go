// Package credentials keeps the API keys `reasonix setup` is given: in the
// operating system's credential store where one can be reached without
// cgo (the macOS keychain through /usr/bin/security, the Secret Service
// through secret-tool on Linux), else in a 0600 file under the Reasonix
// home. An index file under the home records which names are stored where,
// so a lookup at start-up costs one small file read and, only for a key
// that is in the keychain, one command.
package credentials

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/reasonix/reasonix/internal/flock"
	"github.com/reasonix/reasonix/internal/store"
)

// File is the index (and, for the file store, the values) under the home.
const File = "credentials.json"

// Service is the name keys are filed under in the OS store.
const Service = "reasonix"

// Kinds of store ([credentials_store] in the config).
const (
	Auto    = "auto"
	Keyring = "keyring"
	FileKey = "file"
)

// Store is a credential store rooted at a Reasonix home.
type Store struct {
	home string
	kind string
	os   osStore
}

// osStore is the OS credential store of this platform.
type osStore interface {
	available() bool
	name() string
	get(name string) (string, error)
	set(name, value string) error
	del(name string) error
}

// Open returns the store of kind (auto, keyring, file; "" is auto) under
// home. Nothing is read until it is used. The OS store's program is not
// looked for on PATH inside workspace, where confined commands may have
// written one (internal/lookpath).
func Open(home, kind, workspace string) *Store {
	if kind == "" {
		kind = Auto
	}
	return &Store{home: home, kind: kind, os: platformStore(workspace)}
}

// entry is one name in the index: where it is kept and, in the file store,
// its value.
type entry struct {
	Store string `json:"store"`
	Value string `json:"value,omitempty"`
}

func (s *Store) path() string { return filepath.Join(s.home, File) }

func (s *Store) read() (map[string]entry, error) {
	data, err := os.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]entry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	m := map[string]entry{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("credentials: %s: %w", s.path(), err)
	}
	return m, nil
}

func (s *Store) write(m map[string]entry) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.home, 0o700); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if err := store.WriteFileAtomic(s.path(), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	return nil
}

// useOS reports whether new keys go to the OS store.
func (s *Store) useOS() bool {
	switch s.kind {
	case Keyring:
		return true
	case FileKey:
		return false
	}
	return s.os.available()
}

// Where describes where Set puts keys, for messages.
func (s *Store) Where() string {
	if s.useOS() {
		return s.os.name()
	}
	return s.path() + " (mode 0600)"
}

// InOSStore reports whether a stored value is kept in the OS store, or
// the next Set would put one there: the bash sandbox then keeps commands
// from the way to it (the D-Bus session bus on Linux).
func (s *Store) InOSStore() bool {
	m, _ := s.read()
	for _, e := range m {
		if e.Store == Keyring {
			return true
		}
	}
	return s.useOS()
}

// Get returns the stored value of name.
func (s *Store) Get(name string) (string, bool) {
	m, err := s.read()
	if err != nil {
		return "", false
	}
	e, ok := m[name]
	if !ok {
		return "", false
	}
	if e.Store == FileKey {
		return e.Value, e.Value != ""
	}
	v, err := s.os.get(name)
	return v, err == nil && v != ""
}

// Set stores value under name and returns where it went.
func (s *Store) Set(name, value string) (where string, err error) {
	err = s.update(func(m map[string]entry) error {
		if s.useOS() {
			err := s.os.set(name, value)
			if err == nil {
				m[name] = entry{Store: Keyring}
				where = s.os.name()
				return nil
			}
			if s.kind == Keyring {
				return fmt.Errorf("credentials: %s: %w", s.os.name(), err)
			}
			// auto: the OS store refused; the file still works.
		}
		m[name] = entry{Store: FileKey, Value: value}
		where = s.path()
		return nil
	})
	if err != nil {
		return "", err
	}
	return where, nil
}

// Delete forgets name wherever it is kept.
func (s *Store) Delete(name string) error {
	return s.update(func(m map[string]entry) error {
		if e, ok := m[name]; ok && e.Store == Keyring {
			_ = s.os.del(name)
		}
		delete(m, name)
		return nil
	})
}

// update reads the index, lets change alter it and writes it back, all
// under the index lock: two processes that store at once (a `reasonix
// setup` while a run keeps a refreshed sign-in) each see the other's
// entry instead of writing back an index read before it was added.
// Readers need no lock: the index is replaced by a rename.
func (s *Store) update(change func(map[string]entry) error) error {
	unlock, err := s.lock(indexLockFile)
	if err != nil {
		return err
	}
	defer unlock()
	m, err := s.read()
	if err != nil {
		return err
	}
	if err := change(m); err != nil {
		return err
	}
	return s.write(m)
}

// LockFile serialises the processes that read, change and store a value
// together (the refresh of an MCP server's sign-in).
const LockFile = "credentials.lock"

// indexLockFile is held while the index is read, changed and written
// back (Set, Delete). It is another file than LockFile because a holder
// of that one stores what it refreshed; taking the index lock inside it
// keeps one order, so the two never wait on each other in a circle.
const indexLockFile = "credentials.json.lock"

// Lock holds an exclusive lock on the store, across processes, until
// unlock is called: one refresh of a rotating token at a time, so another
// run does not spend a refresh token this one just replaced. Set and
// Delete may be called while it is held: they take the index's own lock.
func (s *Store) Lock() (unlock func(), err error) { return s.lock(LockFile) }

// lock waits for an exclusive lock on the file name under the home.
func (s *Store) lock(name string) (unlock func(), err error) {
	if err := os.MkdirAll(s.home, 0o700); err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.home, name), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if err := flock.Lock(f, true); err != nil {
		f.Close()
		return nil, fmt.Errorf("credentials: lock %s: %w", name, err)
	}
	return func() {
		flock.Unlock(f)
		f.Close()
	}, nil
}

// Names lists the stored names.
func (s *Store) Names() []string {
	m, _ := s.read()
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Lookup returns getenv with the store behind it: a variable set in the
// environment (or .env) wins, else a stored key of that name.
func Lookup(getenv func(string) string, s *Store) func(string) string {
	return func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		if v, ok := s.Get(k); ok {
			return v
		}
		return ""
	}
}
