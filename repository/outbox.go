package repository

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
)

// writeArticleEvent records an article event in the caller's transaction and wakes the relay at
// commit.
func writeArticleEvent(ctx context.Context, db dao.DBTX, topic string, a domain.Article) error {
	payload, err := json.Marshal(domain.ArticleEvent{ArticleID: a.ID, AuthorID: a.AuthorID, Slug: a.Slug, Title: a.Title})
	if err != nil {
		return err
	}
	if _, err := queries.OutboxInsert(ctx, db, dao.OutboxInsertParams{Topic: topic, AggregateID: a.ID, Payload: payload}); err != nil {
		return wrapf(err, "write %s event of article %d", topic, a.ID)
	}
	return wrapf(queries.OutboxNotify(ctx, db), "notify outbox relay")
}

// Outbox is the relay's view of the outbox table.
type Outbox struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewOutbox returns the outbox.
func NewOutbox(pool *pgxpool.Pool, q dao.Querier) *Outbox { return &Outbox{pool: pool, q: q} }

// Claim leases up to n unpublished events to owner until leaseUntil (SKIP LOCKED, fenced).
func (o *Outbox) Claim(ctx context.Context, owner string, n int, now, leaseUntil time.Time) ([]domain.OutboxEvent, error) {
	rows, err := o.q.OutboxClaim(ctx, o.pool, dao.OutboxClaimParams{Now: now, Lim: int32(n), Owner: owner, LeaseUntil: leaseUntil})
	if err != nil {
		return nil, wrapf(err, "claim outbox events")
	}
	out := make([]domain.OutboxEvent, len(rows))
	for i, r := range rows {
		out[i] = domain.OutboxEvent{ID: r.ID, Topic: r.Topic, AggregateID: r.AggregateID, Payload: r.Payload, Generation: r.LeaseGeneration}
	}
	return out, nil
}

// MarkPublished records that an event reached the stream; false when the lease was lost.
func (o *Outbox) MarkPublished(ctx context.Context, id, generation int64, now time.Time) (bool, error) {
	n, err := o.q.OutboxMarkPublished(ctx, o.pool, dao.OutboxMarkPublishedParams{ID: id, Generation: generation, Now: now})
	return n == 1, wrapf(err, "mark outbox event %d published", id)
}

// Backlog counts unpublished events.
func (o *Outbox) Backlog(ctx context.Context) (int64, error) {
	n, err := o.q.OutboxBacklog(ctx, o.pool)
	return n, wrapf(err, "count outbox backlog")
}

// Listen calls wake for every outbox notification until ctx ends (a wake-up only; the relay
// polls anyway).
func (o *Outbox) Listen(ctx context.Context, wake func()) error {
	return listen(ctx, o.pool, "inkwell_outbox", func(string) { wake() })
}
