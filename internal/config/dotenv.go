package config

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"strconv"
	"strings"

	"github.com/reasonix/reasonix/internal/regular"
)

// DotEnvFile is the file in the working directory whose variables fill
// ${VAR} expansion and api_key_env lookups.
const DotEnvFile = ".env"

// readDotEnv parses a .env file: KEY=VALUE lines, an optional "export "
// before the key, # comments, and values in single quotes (taken as
// written) or double quotes (with \n, \t, \" and \\ escapes). A missing
// file is no error. The file belongs to other tools too (compose files,
// direnv), so a line this parser does not understand is skipped and its
// number returned, for doctor, rather than stopping the run.
func readDotEnv(path string) (map[string]string, []int, []error) {
	data, err := regular.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, []error{&Error{File: path, Msg: err.Error(), Err: err}}
	}
	out := map[string]string{}
	var skipped []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !validEnvName(key) {
			skipped = append(skipped, n)
			continue
		}
		val = strings.TrimSpace(val)
		switch {
		case len(val) >= 2 && val[0] == '\'' && val[len(val)-1] == '\'':
			val = val[1 : len(val)-1]
		case len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"':
			u, err := strconv.Unquote(val)
			if err != nil {
				skipped = append(skipped, n)
				continue
			}
			val = u
		default:
			// An unquoted value ends at a comment.
			if i := strings.Index(val, " #"); i >= 0 {
				val = strings.TrimSpace(val[:i])
			}
		}
		if strings.HasPrefix(val, "\"") || strings.HasPrefix(val, "'") {
			// An opening quote without its closing one: a multi-line
			// value this parser does not take.
			if len(val) < 2 || val[len(val)-1] != val[0] {
				skipped = append(skipped, n)
				continue
			}
		}
		out[key] = val
	}
	return out, skipped, nil
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// withDotEnv returns env with the .env values behind it: a variable set in
// the environment wins. REASONIX_* variables are never taken from a .env,
// so a checked-out repository cannot point Reasonix at another endpoint
// with the user's key.
func withDotEnv(env func(string) string, dot map[string]string) func(string) string {
	if len(dot) == 0 {
		return env
	}
	return func(k string) string {
		if v := env(k); v != "" || strings.HasPrefix(k, "REASONIX_") {
			return v
		}
		return dot[k]
	}
}
