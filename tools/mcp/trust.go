package mcp

import (
	"fmt"
	"path/filepath"

	"github.com/reasonix/reasonix/internal/store"
)

// TrustFile is the file under the Reasonix home that remembers which
// project-defined servers a person approved.
const TrustFile = "mcp-trust.json"

// Trust remembers, per project directory and server name, the definition
// hash ([Config.Hash]) a person approved, so a repository's .mcp.json
// server runs only as it was when approved.
type Trust struct {
	path string
}

type trustData struct {
	// Projects maps a project directory to server name to hash.
	Projects map[string]map[string]string `json:"projects"`
}

// OpenTrust returns the trust record kept under home.
func OpenTrust(home string) *Trust { return &Trust{path: filepath.Join(home, TrustFile)} }

func (t *Trust) read() (trustData, error) {
	var d trustData
	if err := store.ReadJSON(t.path, &d); err != nil {
		return d, fmt.Errorf("mcp trust: %w", err)
	}
	if d.Projects == nil {
		d.Projects = map[string]map[string]string{}
	}
	return d, nil
}

// Trusted reports whether a person approved this definition of the
// server in this project. A record that cannot be read (a corrupt one
// names its place) trusts nothing, and the error says why.
func (t *Trust) Trusted(project string, c Config) (bool, error) {
	d, err := t.read()
	if err != nil {
		return false, err
	}
	return d.Projects[project][c.Name] == c.Hash(), nil
}

// Approve records a person's approval of the server's current definition.
func (t *Trust) Approve(project string, c Config) error {
	d, err := t.read()
	if err != nil {
		return err
	}
	if d.Projects[project] == nil {
		d.Projects[project] = map[string]string{}
	}
	d.Projects[project][c.Name] = c.Hash()
	if err := store.WriteJSON(t.path, d); err != nil {
		return fmt.Errorf("mcp trust: %w", err)
	}
	return nil
}
