package durable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// JobQueue is the PostgreSQL job queue. Every write after a claim names the claim's generation,
// so a worker that lost its lease (it was reaped and claimed again) changes nothing.
type JobQueue struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// QueuePool is the connection pool the job queue works through. It is not the API's pool, so
// that workers and requests cannot take each other's connections, and its sessions plan
// statements once (pg.PlanStatementsOnce). The queue's statements are written so that their plan
// never depends on their parameters (primary key lookups and partial-index scans), and letting
// PostgreSQL plan the claim afresh for every call cost about 0.6 ms of a 1.3 ms worker cycle —
// most of the throughput (docs/BENCHMARKS.md). TestJobQueueGenericPlans holds the statements to
// index scans.
type QueuePool struct{ *pgxpool.Pool }

// NewJobQueue returns the queue.
func NewJobQueue(pool QueuePool, q dao.Querier) *JobQueue {
	return &JobQueue{pool: pool.Pool, q: q}
}

// jobsChannel is the LISTEN/NOTIFY channel enqueues signal; the payload is the queue name.
const jobsChannel = "inkwell_jobs"

// Enqueue adds a job on its own. It reports false when a job with the same unique key exists.
func (j *JobQueue) Enqueue(ctx context.Context, nj domain.NewJob) (bool, error) {
	var added bool
	err := pg.InTx(ctx, j.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		var err error
		added, err = EnqueueTx(ctx, j.q, tx, nj)
		return err
	})
	return added, err
}

// EnqueueTx adds a job inside the caller's transaction, so the job exists exactly when the
// business write it belongs to commits. It also wakes listening workers at commit. The job
// carries the trace context of ctx, so its run joins the enqueuing request's trace.
func EnqueueTx(ctx context.Context, q dao.Querier, db dao.DBTX, nj domain.NewJob) (bool, error) {
	if nj.MaxAttempts <= 0 {
		nj.MaxAttempts = domain.DefaultMaxAttempts
	}
	if len(nj.Payload) == 0 {
		nj.Payload = []byte("{}")
	}
	_, err := q.JobEnqueue(ctx, db, dao.JobEnqueueParams{
		Queue: nj.Queue, Kind: nj.Kind, Payload: nj.Payload, Priority: int32(nj.Priority),
		AvailableAt: pgtype.Timestamptz{Time: nj.RunAt, Valid: !nj.RunAt.IsZero()},
		MaxAttempts: int32(nj.MaxAttempts), UniqueKey: pgtype.Text{String: nj.UniqueKey, Valid: nj.UniqueKey != ""},
		DeleteWhenDone: nj.DeleteWhenDone, Traceparent: pg.TraceParent(ctx),
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // the unique key exists already
	}
	if err != nil {
		return false, pg.Wrapf(err, "enqueue %s/%s", nj.Queue, nj.Kind)
	}
	if _, err := q.JobNotify(ctx, db, NotifyPayload(nj.Queue, nj.RunAt)); err != nil {
		return false, pg.Wrapf(err, "notify queue %s", nj.Queue)
	}
	return true, nil
}

// Claim leases up to n ready jobs of queue to owner for lease (by the database's clock).
func (j *JobQueue) Claim(ctx context.Context, queue, owner string, n int, lease time.Duration) ([]domain.Job, error) {
	_, claimed, err := j.AckAndClaim(ctx, nil, domain.JobClaim{Queue: queue, Owner: owner, Limit: n, Lease: lease})
	return claimed, err
}

// Ack marks a job done; false when the lease was lost (the generation no longer matches).
func (j *JobQueue) Ack(ctx context.Context, id, generation int64) (bool, error) {
	acked, _, err := j.AckAndClaim(ctx, []domain.Job{{ID: id, Generation: generation}}, domain.JobClaim{})
	if err != nil {
		return false, err
	}
	return acked[0], nil
}

// AckAndClaim marks the done jobs done and claims up to c.Limit more in one statement, so a
// worker's whole cycle — a batch of outcomes and the next batch of work — costs one round trip
// and one commit. acked[i] is false when done[i]'s lease was lost (it was reaped and claimed
// again, and its new holder decides the outcome). On error nothing was recorded or claimed.
func (j *JobQueue) AckAndClaim(ctx context.Context, done []domain.Job, c domain.JobClaim) (acked []bool, claimed []domain.Job, err error) {
	if len(done) == 0 && c.Limit <= 0 {
		return nil, nil, nil
	}
	ids := make([]int64, len(done))
	gens := make([]int64, len(done))
	for i, d := range done {
		ids[i], gens[i] = d.ID, d.Generation
	}
	rows, err := j.q.JobAckAndClaim(ctx, j.pool, dao.JobAckAndClaimParams{
		Ids: ids, Generations: gens,
		Queue: c.Queue, Lim: int32(max(c.Limit, 0)), Owner: c.Owner, LeaseSecs: c.Lease.Seconds(),
	})
	if err != nil {
		return nil, nil, pg.Wrapf(err, "ack %d jobs and claim up to %d from %q", len(done), c.Limit, c.Queue)
	}
	stillHeld := map[int64]bool{}
	if len(rows) > 0 {
		for _, id := range rows[0].AckedIds {
			stillHeld[id] = true
		}
	}
	acked = make([]bool, len(done))
	for i, d := range done {
		acked[i] = stillHeld[d.ID]
	}
	claimed = make([]domain.Job, 0, len(rows))
	for _, r := range rows {
		if r.ID.Valid {
			claimed = append(claimed, claimedJob(r))
		}
	}
	return acked, claimed, nil
}

// Fail records a failed attempt: ready again retryAfter from now (by the database's clock), or
// dead when permanent or out of attempts; false when the lease was lost.
func (j *JobQueue) Fail(ctx context.Context, id, generation int64, lastErr string, permanent bool, retryAfter time.Duration) (bool, error) {
	n, err := j.q.JobFail(ctx, j.pool, dao.JobFailParams{
		ID: id, Generation: generation, LastError: lastErr, Permanent: permanent, RetryAfterSecs: retryAfter.Seconds()})
	return n == 1, pg.Wrapf(err, "fail job %d", id)
}

// Renew extends a lease to lease from now (by the database's clock); false when it was lost.
func (j *JobQueue) Renew(ctx context.Context, id, generation int64, lease time.Duration) (bool, error) {
	n, err := j.q.JobRenew(ctx, j.pool, dao.JobRenewParams{ID: id, Generation: generation, LeaseSecs: lease.Seconds()})
	return n == 1, pg.Wrapf(err, "renew job %d", id)
}

// reapBatch is how many expired leases one reap statement returns: each batch commits on its own,
// so the row locks a reap holds stay few and short however many leases expired together.
const reapBatch = 500

// Reap returns leases expired by the database's clock to ready (or buries jobs out of
// attempts) and says how many. It works in batches of reapBatch until a batch comes back short.
func (j *JobQueue) Reap(ctx context.Context) (int, error) {
	return j.reapInBatches(ctx, reapBatch)
}

func (j *JobQueue) reapInBatches(ctx context.Context, batch int) (int, error) {
	total := 0
	for {
		rows, err := j.q.JobReap(ctx, j.pool, int32(batch))
		total += len(rows)
		if err != nil || len(rows) < batch {
			return total, pg.Wrapf(err, "reap expired leases")
		}
	}
}

// List returns jobs for operators, dead ones first.
func (j *JobQueue) List(ctx context.Context, queue string, status domain.JobStatus, limit int) ([]domain.Job, error) {
	rows, err := j.q.JobList(ctx, j.pool, dao.JobListParams{
		Queue: pgtype.Text{String: queue, Valid: queue != ""}, Status: pgtype.Text{String: string(status), Valid: status != ""}, Lim: int32(limit),
	})
	if err != nil {
		return nil, pg.Wrapf(err, "list jobs")
	}
	out := make([]domain.Job, len(rows))
	for i, r := range rows {
		out[i] = jobFromRow(r)
	}
	return out, nil
}

// Retry makes a dead job ready again with a fresh set of attempts.
func (j *JobQueue) Retry(ctx context.Context, id int64) error {
	n, err := j.q.JobRetry(ctx, j.pool, id)
	if err != nil {
		return pg.Wrapf(err, "retry job %d", id)
	}
	if n == 0 {
		return fmt.Errorf("job %d is not dead (or does not exist): %w", id, domain.ErrNotFound)
	}
	return nil
}

// Discard deletes a dead or done job.
func (j *JobQueue) Discard(ctx context.Context, id int64) error {
	n, err := j.q.JobDiscard(ctx, j.pool, id)
	if err != nil {
		return pg.Wrapf(err, "discard job %d", id)
	}
	if n == 0 {
		return fmt.Errorf("job %d is not dead or done (or does not exist): %w", id, domain.ErrNotFound)
	}
	return nil
}

// Get returns one job.
func (j *JobQueue) Get(ctx context.Context, id int64) (domain.Job, error) {
	row, err := j.q.JobGet(ctx, j.pool, id)
	if err != nil {
		return domain.Job{}, pg.Wrapf(err, "get job %d", id)
	}
	return jobFromRow(row), nil
}

// Listen calls wake with the queue name of every enqueue notification until ctx ends.
// Notifications are only a wake-up; workers poll anyway, so a missed one (a dropped connection,
// a restart) delays a job by at most one poll interval.
func (j *JobQueue) Listen(ctx context.Context, wake func(queue string)) error {
	return j.ListenDue(ctx, func(queue string, _ time.Time) { wake(queue) })
}

// ListenDue is Listen with the due time of each enqueued job: zero for a job due now, else the
// time a job enqueued for later (a scheduled publication, #32) comes due, so a worker can wake
// then rather than at its next poll.
func (j *JobQueue) ListenDue(ctx context.Context, wake func(queue string, due time.Time)) error {
	return listen(ctx, j.pool, jobsChannel, func(payload string) { wake(ParseNotifyPayload(payload)) })
}

// NotifyPayload is the enqueue notification of a job of queue due at runAt: the queue's name, and
// for a job due later, a tab and runAt in Unix microseconds. A release before #32 compares the
// whole payload with its queue's name, so it is woken by jobs due now only and polls for the rest.
func NotifyPayload(queue string, runAt time.Time) string {
	if runAt.IsZero() {
		return queue
	}
	return queue + "\t" + strconv.FormatInt(runAt.UnixMicro(), 10)
}

// ParseNotifyPayload reads a NotifyPayload: the queue and the due time (zero when none, or when
// the time is unreadable: the worker then looks at once).
func ParseNotifyPayload(payload string) (queue string, due time.Time) {
	queue, raw, ok := strings.Cut(payload, "\t")
	if !ok {
		return queue, time.Time{}
	}
	us, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return queue, time.Time{}
	}
	return queue, time.UnixMicro(us)
}

// listen holds one pooled connection LISTENing on channel and calls wake per notification.
func listen(ctx context.Context, pool *pgxpool.Pool, channel string, wake func(payload string)) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return pg.Wrapf(err, "acquire listener connection")
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return pg.Wrapf(err, "listen on %s", channel)
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				_, _ = conn.Exec(context.Background(), "UNLISTEN *")
				return nil
			}
			_ = conn.Conn().Close(context.Background()) // the pool replaces a broken connection
			return pg.Wrapf(err, "wait for notification on %s", channel)
		}
		wake(n.Payload)
	}
}

// claimedJob is a job row as the claim returned it (its columns are nullable only because the
// claim may return none).
func claimedJob(r dao.JobAckAndClaimRow) domain.Job {
	return jobFromRow(dao.Job{
		ID: r.ID.Int64, Queue: r.Queue.String, Kind: r.Kind.String, Payload: r.Payload, Status: r.Status.String,
		Priority: r.Priority.Int32, AvailableAt: r.AvailableAt.Time, LeaseOwner: r.LeaseOwner, LeaseUntil: r.LeaseUntil,
		LeaseGeneration: r.LeaseGeneration.Int64, Attempts: r.Attempts.Int32, MaxAttempts: r.MaxAttempts.Int32,
		LastError: r.LastError, UniqueKey: r.UniqueKey, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time, FinishedAt: r.FinishedAt,
		Traceparent: r.Traceparent,
	})
}

func jobFromRow(r dao.Job) domain.Job {
	return domain.Job{
		ID: r.ID, Queue: r.Queue, Kind: r.Kind, Payload: r.Payload, Status: domain.JobStatus(r.Status), Priority: int(r.Priority),
		AvailableAt: r.AvailableAt, LeaseOwner: r.LeaseOwner.String, LeaseUntil: r.LeaseUntil.Time, Generation: r.LeaseGeneration,
		Attempts: int(r.Attempts), MaxAttempts: int(r.MaxAttempts), LastError: r.LastError.String, UniqueKey: r.UniqueKey.String,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, TraceParent: r.Traceparent.String,
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
	rows, err := j.q.JobStats(ctx, j.pool)
	if err != nil {
		return nil, pg.Wrapf(err, "job stats")
	}
	out := make([]QueueStat, len(rows))
	for i, r := range rows {
		out[i] = QueueStat{Queue: r.Queue, Status: r.Status, Jobs: r.Jobs, OldestReady: r.OldestAvailable}
	}
	return out, nil
}

// EnqueueIn adds a job in the caller's unit of work (a use case's: the end of a suspension is
// scheduled with the suspension).
func (j *JobQueue) EnqueueIn(ctx context.Context, stx service.Tx, nj domain.NewJob) (bool, error) {
	return EnqueueTx(ctx, j.q, pg.TxOf(stx), nj)
}
