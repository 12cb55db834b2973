-- name: WalCurrentPosition :one
-- The primary's WAL insert position, in bytes: the commit record of every transaction committed
-- before this call ends at or before it (repository/pg.ReadRouter records it after a user's
-- write, and samples it to know how far behind each replica is). The insert position, not the
-- write position (pg_current_wal_lsn): with synchronous_commit off a commit returns before its
-- record is written, and the write position can still be short of it.
SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint AS position;

-- name: WalReplayedPosition :one
-- How far a replica has replayed the primary's WAL, in bytes; -1 on a server that is not in
-- recovery (a primary named as a replica by mistake never takes reads).
SELECT COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, -1)::bigint AS position;
