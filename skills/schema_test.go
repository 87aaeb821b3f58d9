package skills

import (
	"bytes"
	"testing"

	"github.com/reasonix/reasonix/tools/schemagen"
	"github.com/reasonix/reasonix/tools/schematest"
)

// schemaSpecs is the argument struct the skill tool's schema is generated
// from, with its edits, into schemas_gen.go.
var schemaSpecs = []schemagen.Spec{
	schemagen.For[skillArgs]("skillSchema", ToolName, schemagen.WithEnum("action", "list", "load")),
}

// TestSchemasGenerated checks schemas_gen.go is what the specs generate
// today; go generate runs it with -update to rewrite the file. The file is
// the golden file: the schema is part of the cached prompt prefix, so its
// diff must be reviewed.
func TestSchemasGenerated(t *testing.T) {
	schematest.Generated(t, "skills", schemaSpecs)
}

// TestSchemas checks the tool returns the generated schema, a closed
// object a provider accepts.
func TestSchemas(t *testing.T) {
	got := NewTool(nil, nil, nil).Schema()
	schematest.Check(t, []schematest.Entry{{Name: ToolName, Schema: got}})
	want, err := schemaSpecs[0].Build()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Schema returns\n%s\nnot\n%s", got, want)
	}
}

func TestSchemasStableAcrossProcesses(t *testing.T) {
	schematest.StableAcrossProcesses(t, func() []byte {
		src, err := schemagen.Source("skills", "test", schemaSpecs)
		if err != nil {
			t.Fatal(err)
		}
		return src
	})
}
