// Package migrations holds inkwell's goose SQL migrations, embedded into the binary, and the runner
// that applies them. sqlc reads the same files as the schema, so the Go code generated in dao/
// always matches what the database is migrated to.
package migrations

import "embed"

// FS is every migration file, in goose's NNNNN_name.sql format.
//
//go:embed *.sql
var FS embed.FS
