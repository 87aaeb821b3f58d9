package skills

import (
	"testing"

	"github.com/reasonix/reasonix/tools/schematest"
)

func skillSchemas() []schematest.Entry {
	return []schematest.Entry{{Name: ToolName, Schema: NewTool(nil, nil, nil).Schema()}}
}

// TestSchemasGolden pins the skill tool's schema bytes, part of the cached
// prompt prefix. Regenerate with go test ./skills -run Golden -update.
func TestSchemasGolden(t *testing.T) {
	entries := skillSchemas()
	schematest.Check(t, entries)
	schematest.Golden(t, "testdata/schemas.golden", schematest.Format(entries))
}

func TestSchemasStableAcrossProcesses(t *testing.T) {
	schematest.StableAcrossProcesses(t, func(bool) []byte { return schematest.Format(skillSchemas()) })
}
