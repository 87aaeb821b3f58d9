package recall

// The recall tools' argument schemas are derived from their argument
// structs at build time: TestSchemasGenerated (schema_test.go) writes them
// with tools/schemagen to schemas_gen.go as string constants, and fails
// when that file is stale. Regenerate the file with
//
//	go generate ./tools/recall
//
//go:generate go test -run TestSchemasGenerated -update .
