package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// BadJSONError is a JSON record that does not parse: its path, and the
// line and column (1-based, 0 when json gave no offset) where decoding
// stopped. The records under the Reasonix home say what a person
// trusted, so a caller must not take such a file as empty: it trusts
// nothing, and WriteJSON refuses to replace it.
type BadJSONError struct {
	Path         string
	Line, Column int
	Err          error
}

func (e *BadJSONError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: not valid JSON: %v", e.Path, e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("%s: not valid JSON: %v", e.Path, e.Err)
}

func (e *BadJSONError) Unwrap() error { return e.Err }

// badJSON wraps err, a decoding error of data read from path, with the
// place json reports.
func badJSON(path string, data []byte, err error) *BadJSONError {
	var off int64
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	e := &BadJSONError{Path: path, Err: err}
	if off > 0 && off <= int64(len(data)) {
		before := data[:off]
		e.Line = bytes.Count(before, []byte("\n")) + 1
		e.Column = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	}
	return e
}

// ReadJSON decodes the JSON file at path into v. A missing or empty file
// is no error and leaves v as it was, so a record not yet written reads
// as the caller's empty value (an empty file holds no record to lose); a
// file that is not JSON (or not of v's shape) is a *BadJSONError naming
// it, with the line and column.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return badJSON(path, data, err)
	}
	return nil
}

// WriteJSON replaces the file at path with v, indented, atomically and
// readable by the user alone, making its folder (also private) first: the
// small records under the Reasonix home (what a person trusted) are kept
// this way. A file there that does not parse is not replaced (the
// *BadJSONError says where it breaks): a caller that read it as empty
// would otherwise drop every record it held.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(old)) > 0 {
		var raw json.RawMessage
		if err := json.Unmarshal(old, &raw); err != nil {
			return fmt.Errorf("%w; it was not replaced: fix or remove it", badJSON(path, old, err))
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o600)
}
