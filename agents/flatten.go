package agents

import (
	"encoding/json"
	"fmt"

	"github.com/reasonix/reasonix/internal/flatten"
	"github.com/reasonix/reasonix/providers"
)

// flattenSpecs advertises every tool schema past the flatten limits
// (deeper than two levels, more than ten leaves) in its flat dot-path
// form, and re-encodes the tools array once, so the prefix stays
// byte-stable.
func (s *Session) flattenSpecs() error {
	specs := append([]providers.ToolSpec(nil), s.specs...)
	for i, sp := range specs {
		if flat, ok := flatten.Flatten(sp.Parameters); ok {
			specs[i].Parameters = flat
			if s.flat == nil {
				s.flat = map[string]bool{}
			}
			s.flat[sp.Name] = true
		}
	}
	if len(s.flat) == 0 {
		return nil
	}
	tj, err := providers.EncodeTools(specs)
	if err != nil {
		return fmt.Errorf("session: encode flattened tool schemas: %w", err)
	}
	s.specs, s.toolsJSON = specs, tj
	return nil
}

// nest rebuilds the nested arguments of a tool advertised flat. Arguments
// that cannot be re-nested are passed on as sent, and the tool's own
// decoder says what is wrong with them.
func (s *Session) nest(name string, args json.RawMessage) json.RawMessage {
	if !s.flat[name] || !json.Valid(args) {
		return args
	}
	nested, err := flatten.Nest(args)
	if err != nil {
		return args
	}
	return nested
}
