package durable

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// WriteArticleEvent records an article event in the caller's transaction and wakes the relay at
// commit. The row carries the trace context of ctx (the request's span), which the relay hands on
// through the stream to the consumer.
func WriteArticleEvent(ctx context.Context, q dao.Querier, db dao.DBTX, topic string, a domain.Article) error {
	payload, err := domain.EncodeArticleEvent(domain.ArticleEvent{ArticleID: a.ID, AuthorID: a.AuthorID, Slug: a.Slug, Title: a.Title})
	if err != nil {
		return err
	}
	if _, err := q.OutboxInsert(ctx, db, dao.OutboxInsertParams{Topic: topic, AggregateID: a.ID, Payload: payload, Traceparent: pg.TraceParent(ctx)}); err != nil {
		return pg.Wrapf(err, "write %s event of article %d", topic, a.ID)
	}
	return pg.Wrapf(q.OutboxNotify(ctx, db), "notify outbox relay")
}

// Outbox is the relay's view of the outbox table.
type Outbox struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewOutbox returns the outbox. Its pool is a session pool: Listen holds a LISTEN session.
func NewOutbox(pool pg.SessionPool, q dao.Querier) *Outbox { return &Outbox{pool: pool.Pool, q: q} }

// Claim leases up to n due pending events to owner for lease (SKIP LOCKED, fenced). The lease is
// stamped and compared on PostgreSQL's clock, so relays whose clocks differ never take a live
// lease early.
func (o *Outbox) Claim(ctx context.Context, owner string, n int, lease time.Duration) ([]domain.OutboxEvent, error) {
	rows, err := o.q.OutboxClaim(ctx, o.pool, dao.OutboxClaimParams{Owner: owner, LeaseSeconds: lease.Seconds(), Lim: int32(n)})
	if err != nil {
		return nil, pg.Wrapf(err, "claim outbox events")
	}
	out := make([]domain.OutboxEvent, len(rows))
	for i, r := range rows {
		out[i] = domain.OutboxEvent{ID: r.ID, Topic: r.Topic, AggregateID: r.AggregateID, Payload: r.Payload, Generation: r.LeaseGeneration,
			TraceParent: r.Traceparent.String}
	}
	return out, nil
}

// MarkPublished records that an event reached the stream; false when the lease was lost (or the
// event was applied meanwhile).
func (o *Outbox) MarkPublished(ctx context.Context, id, generation int64) (bool, error) {
	n, err := o.q.OutboxMarkPublished(ctx, o.pool, dao.OutboxMarkPublishedParams{ID: id, Generation: generation})
	return n == 1, pg.Wrapf(err, "mark outbox event %d published", id)
}

// Release gives back the leases of events the relay could not write to the stream, keeping
// cause as their last error; leases another relay took since are left alone (fenced).
func (o *Outbox) Release(ctx context.Context, evs []domain.OutboxEvent, cause string) error {
	ids, gens := make([]int64, len(evs)), make([]int64, len(evs))
	for i, ev := range evs {
		ids[i], gens[i] = ev.ID, ev.Generation
	}
	_, err := o.q.OutboxRelease(ctx, o.pool, dao.OutboxReleaseParams{LastError: cause, Ids: ids, Generations: gens})
	return pg.Wrapf(err, "release %d outbox events", len(evs))
}

// Redrive returns up to n published events older than the window and still not applied to the
// relay (or marks them dead), in one statement (SKIP LOCKED), and reports each.
func (o *Outbox) Redrive(ctx context.Context, p domain.RedrivePolicy, n int) ([]domain.OutboxRedriven, error) {
	rows, err := o.q.OutboxRedrive(ctx, o.pool, dao.OutboxRedriveParams{
		MaxAttempts: int32(p.Retry.MaxAttempts), BackoffBaseSeconds: p.Retry.Base.Seconds(), BackoffMaxSeconds: p.Retry.Max.Seconds(),
		WindowSeconds: p.After.Seconds(), Lim: int32(n),
	})
	if err != nil {
		return nil, pg.Wrapf(err, "re-drive outbox events")
	}
	out := make([]domain.OutboxRedriven, len(rows))
	for i, r := range rows {
		out[i] = domain.OutboxRedriven{ID: r.ID, Status: domain.OutboxStatus(r.Status), Attempts: int(r.Attempts)}
	}
	return out, nil
}

// MarkOutboxApplied records, in the consumer's transaction, that the outbox event eventID was
// applied, so it is never re-driven. Ids of other events (not from the outbox) change nothing.
func MarkOutboxApplied(ctx context.Context, q dao.Querier, db dao.DBTX, eventID string) error {
	id, ok := domain.ParseOutboxEventID(eventID)
	if !ok {
		return nil
	}
	_, err := q.OutboxMarkApplied(ctx, db, id)
	return pg.Wrapf(err, "mark outbox event %d applied", id)
}

// MarkApplied records that eventID was applied with no effect of its own (a topic its consumer
// ignores): the event is done.
func (o *Outbox) MarkApplied(ctx context.Context, eventID string) error {
	return MarkOutboxApplied(ctx, o.q, o.pool, eventID)
}

// Backlog counts events waiting to be published.
func (o *Outbox) Backlog(ctx context.Context) (int64, error) {
	n, err := o.q.OutboxBacklog(ctx, o.pool)
	return n, pg.Wrapf(err, "count outbox backlog")
}

// OutboxHealth is what the metrics show of the outbox.
type OutboxHealth struct {
	Dead int64
	// OldestUnapplied is the age of the oldest event not applied yet (0: none), on PostgreSQL's
	// clock.
	OldestUnapplied time.Duration
}

// Health reads the dead count and the oldest unapplied event's age.
func (o *Outbox) Health(ctx context.Context) (OutboxHealth, error) {
	r, err := o.q.OutboxHealth(ctx, o.pool)
	if err != nil {
		return OutboxHealth{}, pg.Wrapf(err, "read outbox health")
	}
	return OutboxHealth{Dead: r.Dead, OldestUnapplied: time.Duration(r.OldestUnappliedSeconds * float64(time.Second))}, nil
}

// List returns up to limit events, newest first, of one status (any when status is empty).
func (o *Outbox) List(ctx context.Context, status domain.OutboxStatus, limit int) ([]domain.OutboxEntry, error) {
	rows, err := o.q.OutboxList(ctx, o.pool, dao.OutboxListParams{Status: pgtype.Text{String: string(status), Valid: status != ""}, Lim: int32(limit)})
	if err != nil {
		return nil, pg.Wrapf(err, "list outbox events")
	}
	out := make([]domain.OutboxEntry, len(rows))
	for i, r := range rows {
		out[i] = domain.OutboxEntry{
			ID: r.ID, Topic: r.Topic, AggregateID: r.AggregateID, Status: domain.OutboxStatus(r.Status), Attempts: int(r.Attempts),
			CreatedAt: r.CreatedAt, PublishedAt: timePtr(r.PublishedAt), AppliedAt: timePtr(r.AppliedAt),
			NextAttemptAt: r.NextAttemptAt, LastError: r.LastError.String,
		}
	}
	return out, nil
}

func timePtr(t pgtype.Timestamptz) *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.Time
	return &v
}

// Retry makes a dead event pending again with a fresh set of attempts.
func (o *Outbox) Retry(ctx context.Context, id int64) error {
	n, err := o.q.OutboxRetry(ctx, o.pool, id)
	if err != nil {
		return pg.Wrapf(err, "retry outbox event %d", id)
	}
	if n == 0 {
		return fmt.Errorf("outbox event %d is not dead (or does not exist): %w", id, domain.ErrNotFound)
	}
	return nil
}

// Discard deletes a dead event.
func (o *Outbox) Discard(ctx context.Context, id int64) error {
	n, err := o.q.OutboxDiscard(ctx, o.pool, id)
	if err != nil {
		return pg.Wrapf(err, "discard outbox event %d", id)
	}
	if n == 0 {
		return fmt.Errorf("outbox event %d is not dead (or does not exist): %w", id, domain.ErrNotFound)
	}
	return nil
}

// Listen calls wake for every outbox notification until ctx ends (a wake-up only; the relay
// polls anyway).
func (o *Outbox) Listen(ctx context.Context, wake func()) error {
	return listen(ctx, o.pool, "inkwell_outbox", func(string) { wake() })
}
