// Package migrations holds inkwell's goose SQL migrations, embedded into the binary, and the runner
// that applies them. sqlc reads the same files as the schema, so the Go code generated in dao/
// always matches what the database is migrated to.
package migrations

import (
	"embed"
	"fmt"
)

// FS is every migration file, in goose's NNNNN_name.sql format.
//
//go:embed *.sql
var FS embed.FS

// LatestVersion is the highest version among the embedded migrations.
func LatestVersion() int64 {
	entries, _ := FS.ReadDir(".")
	var latest int64
	for _, e := range entries {
		var v int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &v); err == nil && v > latest {
			latest = v
		}
	}
	return latest
}
