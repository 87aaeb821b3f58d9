package skills

// The skill tool's argument schema is derived from skillArgs at build
// time, not at run time: TestSchemasGenerated (schema_test.go, which lists
// the struct and its edits) writes it with tools/schemagen to
// schemas_gen.go as a string constant, and fails when that file is stale.
// Regenerate the file with
//
//	go generate ./skills
//
//go:generate go test -run TestSchemasGenerated -update .
