package repository

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"inkwell/dao"
)

// inTx runs fn in one transaction, committing when it returns nil and rolling back otherwise.
func inTx(ctx context.Context, pool *pgxpool.Pool, fn func(q *dao.Queries) error) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := fn(dao.New(tx)); err != nil {
			return err
		}
		return nil
	})
}

// wrapf annotates a translated error with what was being done.
func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, translate(err))...)
}
