package repository

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the highest migration version applied to the database.
func SchemaVersion(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var v int64
	err := pool.QueryRow(ctx, "SELECT COALESCE(max(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&v)
	return v, err
}
