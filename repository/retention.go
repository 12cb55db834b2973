package repository

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// retentionPolicy is how one kind of row is pruned: one bounded delete (at most lim rows, one
// statement) and the count of what it would delete now, up to lim.
type retentionPolicy struct {
	byCap bool // a cap rule (Newest per owner), else an age rule (MaxAge)
	prune func(ctx context.Context, q dao.Querier, db dao.DBTX, r domain.RetentionRule, lim int32) (int64, error)
	count func(ctx context.Context, q dao.Querier, db dao.DBTX, r domain.RetentionRule, lim int32) (int64, error)
}

// retentionPolicies is every kind of row the retention job can prune, by rule name. Adding one is
// an entry here (its two statements go in queries/retention.sql, walking an index), a name in
// domain, and its setting and rule in the root package's NewRetentionRules.
var retentionPolicies = map[string]retentionPolicy{
	domain.RetentionInbox:           byAge(dao.Querier.InboxPruneBatch, dao.Querier.InboxCountPrunable),
	domain.RetentionJobsDone:        byAge(dao.Querier.JobPruneDoneBatch, dao.Querier.JobCountPrunableDone),
	domain.RetentionJobsDead:        byAge(dao.Querier.JobPruneDeadBatch, dao.Querier.JobCountPrunableDead),
	domain.RetentionNotifications:   byAge(dao.Querier.NotificationPruneBatch, dao.Querier.NotificationCountPrunable),
	domain.RetentionRefreshTokens:   byAge(dao.Querier.RefreshTokenPruneBatch, dao.Querier.RefreshTokenCountPrunable),
	domain.RetentionSessionsRevoked: byAge(dao.Querier.SessionPruneRevokedBatch, dao.Querier.SessionCountPrunableRevoked),
	domain.RetentionSessionsIdle:    byAge(dao.Querier.SessionPruneIdleBatch, dao.Querier.SessionCountPrunableIdle),
	domain.RetentionIdempotencyKeys: byAge(dao.Querier.IdempotencyPruneBatch, dao.Querier.IdempotencyCountPrunable),
	domain.RetentionLoginCodes:      byAge(dao.Querier.LoginCodePruneBatch, dao.Querier.LoginCodeCountPrunable),
	domain.RetentionLoginCodeMeters: byAge(dao.Querier.LoginCodeMeterPruneBatch, dao.Querier.LoginCodeMeterCountPrunable),
	domain.RetentionAccountCodes:    byAge(dao.Querier.AccountCodePruneBatch, dao.Querier.AccountCodeCountPrunable),
	domain.RetentionOutboxApplied:   byAge(dao.Querier.OutboxPruneAppliedBatch, dao.Querier.OutboxCountPrunableApplied),
	domain.RetentionOutboxDead:      byAge(dao.Querier.OutboxPruneDeadBatch, dao.Querier.OutboxCountPrunableDead),
	domain.RetentionUploads:         byAge(dao.Querier.UploadPruneUnreferencedBatch, dao.Querier.UploadCountPrunableUnreferenced),
	domain.RetentionSignInStates:    byAge(dao.Querier.SignInStatePruneBatch, dao.Querier.SignInStateCountPrunable),
	domain.RetentionSignInCodes:     byAge(dao.Querier.SignInCodePruneBatch, dao.Querier.SignInCodeCountPrunable),
	// A batch of deliveries takes their attempts along (ON DELETE CASCADE): at most
	// domain.WebhookRetry.MaxAttempts rows each, so a statement deletes at most 17 rows per delivery.
	domain.RetentionWebhookDeliveries: byAge(dao.Querier.WebhookDeliveryPruneDoneBatch, dao.Querier.WebhookDeliveryCountPrunableDone),
	domain.RetentionReadingHistory: {
		byCap: true,
		prune: func(ctx context.Context, q dao.Querier, db dao.DBTX, r domain.RetentionRule, lim int32) (int64, error) {
			return q.ReadHistoryPruneBatch(ctx, db, dao.ReadHistoryPruneBatchParams{SinceSeconds: r.Since.Seconds(), Keep: int32(r.Newest), Lim: lim})
		},
		count: func(ctx context.Context, q dao.Querier, db dao.DBTX, r domain.RetentionRule, lim int32) (int64, error) {
			return q.ReadHistoryCountPrunable(ctx, db, dao.ReadHistoryCountPrunableParams{SinceSeconds: r.Since.Seconds(), Keep: int32(r.Newest), Lim: lim})
		},
	},
}

// ageArgs is the shape of every age rule's parameters (sqlc gives each statement a type of its own).
type ageArgs = struct {
	KeepSeconds float64
	Lim         int32
}

// byAge is the policy of an age rule whose statements take (keep_seconds, lim).
func byAge[P, C ~ageArgs](
	prune func(dao.Querier, context.Context, dao.DBTX, P) (int64, error),
	count func(dao.Querier, context.Context, dao.DBTX, C) (int64, error),
) retentionPolicy {
	return retentionPolicy{
		prune: func(ctx context.Context, q dao.Querier, db dao.DBTX, r domain.RetentionRule, lim int32) (int64, error) {
			return prune(q, ctx, db, P(ageArgs{KeepSeconds: r.MaxAge.Seconds(), Lim: lim}))
		},
		count: func(ctx context.Context, q dao.Querier, db dao.DBTX, r domain.RetentionRule, lim int32) (int64, error) {
			return count(q, ctx, db, C(ageArgs{KeepSeconds: r.MaxAge.Seconds(), Lim: lim}))
		},
	}
}

// RetentionStore runs the retention job's statements (job.RetentionStore).
type RetentionStore struct {
	pool *pgxpool.Pool
	q    dao.Querier
}

// NewRetentionStore returns the store. Its pool is a session pool: a pass holds a session-level
// advisory lock.
func NewRetentionStore(pool pg.SessionPool, q dao.Querier) *RetentionStore {
	return &RetentionStore{pool: pool.Pool, q: q}
}

// Knows reports whether name is a retention policy this store can run.
func (s *RetentionStore) Knows(name string) bool {
	_, ok := retentionPolicies[name]
	return ok
}

// TryLock takes the fleet-wide retention lock if no session holds it: a PostgreSQL session-level
// advisory lock on a connection kept out of the pool until unlock. ok is false when another
// session holds it. If the connection or this process dies, PostgreSQL releases the lock; so
// does unlock, and when unlocking fails the connection is closed rather than returned to the pool
// with the lock still on it.
func (s *RetentionStore) TryLock(ctx context.Context) (unlock func(context.Context) error, ok bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, pg.Wrapf(err, "take a connection for the retention lock")
	}
	locked, err := s.q.RetentionTryLock(ctx, conn)
	if err != nil || !locked {
		conn.Release()
		return nil, false, pg.Wrapf(err, "try the retention lock")
	}
	return func(ctx context.Context) error {
		defer conn.Release()
		if _, err := s.q.RetentionUnlock(ctx, conn); err != nil {
			// Closing the session is what releases the lock now; Release then drops the connection.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
			return pg.Wrapf(err, "release the retention lock (its connection was closed instead)")
		}
		return nil
	}, true, nil
}

// Prune deletes up to limit rows that rule lets go, in one statement, and says how many.
func (s *RetentionStore) Prune(ctx context.Context, rule domain.RetentionRule, limit int) (int64, error) {
	p, err := s.policy(rule)
	if err != nil {
		return 0, err
	}
	n, err := p.prune(ctx, s.q, s.pool, rule, clampLimit(limit))
	return n, pg.Wrapf(err, "prune %s", rule.Name)
}

// CountPrunable counts, up to limit, the rows rule would delete now.
func (s *RetentionStore) CountPrunable(ctx context.Context, rule domain.RetentionRule, limit int) (int64, error) {
	p, err := s.policy(rule)
	if err != nil {
		return 0, err
	}
	n, err := p.count(ctx, s.q, s.pool, rule, clampLimit(limit))
	return n, pg.Wrapf(err, "count prunable %s", rule.Name)
}

func (s *RetentionStore) policy(rule domain.RetentionRule) (retentionPolicy, error) {
	p, ok := retentionPolicies[rule.Name]
	if !ok {
		return retentionPolicy{}, fmt.Errorf("no retention policy %q", rule.Name)
	}
	// A rule of the wrong kind would delete too much (a cap of 0 is everything) or nothing.
	if (p.byCap && (rule.Newest <= 0 || rule.Since < time.Second)) || (!p.byCap && rule.MaxAge <= 0) {
		return retentionPolicy{}, fmt.Errorf("retention rule %s is off or not of its policy's kind (%+v)", rule.Name, rule)
	}
	return p, nil
}

func clampLimit(n int) int32 { return int32(min(max(n, 1), math.MaxInt32)) }
