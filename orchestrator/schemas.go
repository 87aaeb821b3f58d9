package orchestrator

// The argument schemas of goal_status, submit_plan and task are derived
// from their argument structs at build time, not at run time:
// TestSchemasGenerated (schema_test.go, which lists each struct and its
// edits) writes them with tools/schemagen to schemas_gen.go as string
// constants, and fails when that file is stale. The task tool's agent enum
// is a placeholder there, which Schema replaces with the loaded agents.
// Regenerate the file with
//
//	go generate ./orchestrator
//
//go:generate go test -run TestSchemasGenerated -update .
