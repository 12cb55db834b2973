-- +goose Up
-- A job holds a lease exactly while it runs. The queue's fenced writes test "holds a lease"
-- (lease_owner IS NOT NULL) rather than status = 'running': the two are the same by this
-- constraint, and the first leaves the planner only the primary key, where the second tempts it
-- into the running-lease partial index, whose dead entries (one per job run) pile up until vacuum.
ALTER TABLE jobs ADD CONSTRAINT jobs_lease_check
    CHECK ((status = 'running') = (lease_owner IS NOT NULL AND lease_until IS NOT NULL));

-- +goose Down
ALTER TABLE jobs DROP CONSTRAINT jobs_lease_check;
