package migrations

import "database/sql"

// DB is the runner's connection pool, for tests that look at its sessions.
func (r *Runner) DB() *sql.DB { return r.db }
