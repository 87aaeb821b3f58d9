package builtin

// The built-in tools' argument schemas are derived from their argument
// structs at build time, not at run time: TestSchemasGenerated
// (schema_test.go, which lists each struct and its edits) writes them with
// tools/schemagen to schemas_gen.go as string constants, and fails when
// that file is stale. Regenerate the file with
//
//	go generate ./tools/builtin
//
//go:generate go test -run TestSchemasGenerated -update .
