package recall

import (
	"testing"

	"github.com/reasonix/reasonix/tools/schemagen"
	"github.com/reasonix/reasonix/tools/schematest"
)

// schemaSpecs are the argument structs of the recall tools, in the order
// of schemas_gen.go.
var schemaSpecs = []schemagen.Spec{
	schemagen.For[historyArgs]("historySchema", HistoryTool, schemagen.WithEnum("operation", "search", "around"),
		schemagen.WithEnum("scope", "project", "global"), schemagen.WithType("limit", "integer")),
	schemagen.For[memoryArgs]("memorySchema", MemoryTool, schemagen.WithEnum("operation", opList, opSearch, opRead, opSave, opForget),
		schemagen.WithEnum("scope", "project", "user", "all"), schemagen.WithType("limit", "integer")),
}

// TestSchemasGenerated checks schemas_gen.go is what the specs generate
// today; go generate runs it with -update to rewrite the file.
func TestSchemasGenerated(t *testing.T) {
	schematest.Generated(t, "recall", schemaSpecs)
}

// TestSchemas checks each tool returns its generated schema, a closed
// object a provider accepts.
func TestSchemas(t *testing.T) {
	var entries []schematest.Entry
	for _, tl := range Tools(Options{Workspace: t.TempDir(), Home: t.TempDir()}) {
		entries = append(entries, schematest.Entry{Name: tl.Name(), Schema: tl.Schema()})
	}
	schematest.Check(t, entries)
}
