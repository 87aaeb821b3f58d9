package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadJSON decodes the JSON file at path into v. A missing file is no
// error and leaves v as it was, so a record not yet written reads as the
// caller's empty value; a file that is not JSON names itself.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WriteJSON replaces the file at path with v, indented, atomically and
// readable by the user alone, making its folder (also private) first: the
// small records under the Reasonix home (what a person trusted) are kept
// this way.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o600)
}
