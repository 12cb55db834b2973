package repository

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"inkwell/dao"
	"inkwell/domain"
)

// JobQueue is the PostgreSQL job queue. Every write after a claim names the claim's generation,
// so a worker that lost its lease (it was reaped and claimed again) changes nothing.
type JobQueue struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewJobQueue returns the queue.
func NewJobQueue(pool *pgxpool.Pool, q dao.Querier) *JobQueue { return &JobQueue{pool: pool, q: q} }

// jobsChannel is the LISTEN/NOTIFY channel enqueues signal; the payload is the queue name.
const jobsChannel = "inkwell_jobs"

// Enqueue adds a job on its own. It reports false when a job with the same unique key exists.
func (j *JobQueue) Enqueue(ctx context.Context, nj domain.NewJob) (bool, error) {
	var added bool
	err := inTx(ctx, j.pool, func(q *dao.Queries) error {
		var err error
		added, err = EnqueueTx(ctx, q, nj)
		return err
	})
	return added, err
}

// EnqueueTx adds a job inside the caller's transaction, so the job exists exactly when the
// business write it belongs to commits. It also wakes listening workers at commit.
func EnqueueTx(ctx context.Context, q *dao.Queries, nj domain.NewJob) (bool, error) {
	if nj.MaxAttempts <= 0 {
		nj.MaxAttempts = domain.DefaultMaxAttempts
	}
	if nj.RunAt.IsZero() {
		nj.RunAt = time.Now()
	}
	if len(nj.Payload) == 0 {
		nj.Payload = []byte("{}")
	}
	_, err := q.JobEnqueue(ctx, dao.JobEnqueueParams{
		Queue: nj.Queue, Kind: nj.Kind, Payload: nj.Payload, Priority: int32(nj.Priority), AvailableAt: nj.RunAt,
		MaxAttempts: int32(nj.MaxAttempts), UniqueKey: pgtype.Text{String: nj.UniqueKey, Valid: nj.UniqueKey != ""},
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // the unique key exists already
	}
	if err != nil {
		return false, wrapf(err, "enqueue %s/%s", nj.Queue, nj.Kind)
	}
	if _, err := q.JobNotify(ctx, nj.Queue); err != nil {
		return false, wrapf(err, "notify queue %s", nj.Queue)
	}
	return true, nil
}

// Claim leases up to n ready jobs of queue to owner until leaseUntil.
func (j *JobQueue) Claim(ctx context.Context, queue, owner string, n int, now, leaseUntil time.Time) ([]domain.Job, error) {
	rows, err := j.q.JobClaim(ctx, dao.JobClaimParams{Queue: queue, Now: now, Lim: int32(n), Owner: owner, LeaseUntil: leaseUntil})
	if err != nil {
		return nil, wrapf(err, "claim from %s", queue)
	}
	out := make([]domain.Job, len(rows))
	for i, r := range rows {
		out[i] = jobFromRow(r)
	}
	return out, nil
}

// Ack marks a job done; false when the lease was lost (0 rows).
func (j *JobQueue) Ack(ctx context.Context, id, generation int64, now time.Time) (bool, error) {
	n, err := j.q.JobAck(ctx, dao.JobAckParams{ID: id, Generation: generation, Now: now})
	return n == 1, wrapf(err, "ack job %d", id)
}

// Fail records a failed attempt: ready again at retryAt, or dead when permanent or out of
// attempts; false when the lease was lost.
func (j *JobQueue) Fail(ctx context.Context, id, generation int64, lastErr string, permanent bool, retryAt, now time.Time) (bool, error) {
	n, err := j.q.JobFail(ctx, dao.JobFailParams{ID: id, Generation: generation, LastError: lastErr, Permanent: permanent, RetryAt: retryAt, Now: now})
	return n == 1, wrapf(err, "fail job %d", id)
}

// Renew extends a lease; false when it was lost.
func (j *JobQueue) Renew(ctx context.Context, id, generation int64, leaseUntil, now time.Time) (bool, error) {
	n, err := j.q.JobRenew(ctx, dao.JobRenewParams{ID: id, Generation: generation, LeaseUntil: leaseUntil, Now: now})
	return n == 1, wrapf(err, "renew job %d", id)
}

// Reap returns expired leases to ready (or buries jobs out of attempts) and says how many.
func (j *JobQueue) Reap(ctx context.Context, now time.Time) (int, error) {
	rows, err := j.q.JobReap(ctx, now)
	return len(rows), wrapf(err, "reap expired leases")
}

// List returns jobs for operators, dead ones first.
func (j *JobQueue) List(ctx context.Context, queue string, status domain.JobStatus, limit int) ([]domain.Job, error) {
	rows, err := j.q.JobList(ctx, dao.JobListParams{
		Queue: pgtype.Text{String: queue, Valid: queue != ""}, Status: pgtype.Text{String: string(status), Valid: status != ""}, Lim: int32(limit),
	})
	if err != nil {
		return nil, wrapf(err, "list jobs")
	}
	out := make([]domain.Job, len(rows))
	for i, r := range rows {
		out[i] = jobFromRow(r)
	}
	return out, nil
}

// Retry makes a dead job ready again with a fresh set of attempts.
func (j *JobQueue) Retry(ctx context.Context, id int64) error {
	n, err := j.q.JobRetry(ctx, id)
	if err != nil {
		return wrapf(err, "retry job %d", id)
	}
	if n == 0 {
		return fmt.Errorf("job %d is not dead (or does not exist): %w", id, domain.ErrNotFound)
	}
	return nil
}

// Discard deletes a dead or done job.
func (j *JobQueue) Discard(ctx context.Context, id int64) error {
	n, err := j.q.JobDiscard(ctx, id)
	if err != nil {
		return wrapf(err, "discard job %d", id)
	}
	if n == 0 {
		return fmt.Errorf("job %d is not dead or done (or does not exist): %w", id, domain.ErrNotFound)
	}
	return nil
}

// Get returns one job.
func (j *JobQueue) Get(ctx context.Context, id int64) (domain.Job, error) {
	row, err := j.q.JobGet(ctx, id)
	if err != nil {
		return domain.Job{}, wrapf(err, "get job %d", id)
	}
	return jobFromRow(row), nil
}

// Listen calls wake with the queue name of every enqueue notification until ctx ends.
// Notifications are only a wake-up; workers poll anyway, so a missed one (a dropped connection,
// a restart) delays a job by at most one poll interval.
func (j *JobQueue) Listen(ctx context.Context, wake func(queue string)) error {
	return listen(ctx, j.pool, jobsChannel, wake)
}

// listen holds one pooled connection LISTENing on channel and calls wake per notification.
func listen(ctx context.Context, pool *pgxpool.Pool, channel string, wake func(payload string)) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return wrapf(err, "acquire listener connection")
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return wrapf(err, "listen on %s", channel)
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				_, _ = conn.Exec(context.Background(), "UNLISTEN *")
				return nil
			}
			_ = conn.Conn().Close(context.Background()) // the pool replaces a broken connection
			return wrapf(err, "wait for notification on %s", channel)
		}
		wake(n.Payload)
	}
}

func jobFromRow(r dao.Job) domain.Job {
	return domain.Job{
		ID: r.ID, Queue: r.Queue, Kind: r.Kind, Payload: r.Payload, Status: domain.JobStatus(r.Status), Priority: int(r.Priority),
		AvailableAt: r.AvailableAt, LeaseOwner: r.LeaseOwner.String, LeaseUntil: r.LeaseUntil.Time, Generation: r.LeaseGeneration,
		Attempts: int(r.Attempts), MaxAttempts: int(r.MaxAttempts), LastError: r.LastError.String, UniqueKey: r.UniqueKey.String,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

// QueueStat is one (queue, status) group of jobs.
type QueueStat struct {
	Queue, Status string
	Jobs          int64
	OldestReady   time.Time
}

// Stats counts jobs per queue and status, and the oldest ready job's availability time.
func (j *JobQueue) Stats(ctx context.Context) ([]QueueStat, error) {
	rows, err := j.q.JobStats(ctx)
	if err != nil {
		return nil, wrapf(err, "job stats")
	}
	out := make([]QueueStat, len(rows))
	for i, r := range rows {
		out[i] = QueueStat{Queue: r.Queue, Status: r.Status, Jobs: r.Jobs, OldestReady: r.OldestAvailable}
	}
	return out, nil
}

// SchemaVersion is the highest migration version applied to the database.
func SchemaVersion(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var v int64
	err := pool.QueryRow(ctx, "SELECT COALESCE(max(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&v)
	return v, err
}
