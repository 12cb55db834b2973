// Package pg is the PostgreSQL plumbing every storage room shares: the unit of work (one
// transaction whose post-commit hooks run only after COMMIT), retries of transactions that lost a
// race, the translation of driver errors into domain errors, and the pools with their plan
// settings. It holds no queries of its own: the rooms (repository, repository/search, …) run
// sqlc's statements on a pool or on a pg.Tx.
package pg
