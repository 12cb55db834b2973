package durable_test

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/durable"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

// The outbox runs on PostgreSQL's clock (leases, publication, backoff). These tests move time by
// moving a row's timestamps back (ageOutbox), which is what waiting would do, without sleeping.

type outboxEnv struct {
	pool   *pgxpool.Pool
	outbox *durable.Outbox
}

func newOutboxEnv(t *testing.T) *outboxEnv {
	t.Helper()
	db := testenv.NewDB(t)
	return &outboxEnv{pool: db.Pool, outbox: durable.NewOutbox(pg.SessionPool{Pool: db.Pool}, dao.New())}
}

// insert writes one event and returns its id.
func (e *outboxEnv) insert(t *testing.T, topic string) int64 {
	t.Helper()
	id, err := dao.New().OutboxInsert(context.Background(), e.pool, dao.OutboxInsertParams{Topic: topic, AggregateID: 1, Payload: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// ageOutbox moves every timestamp of row id back by d: as far as the outbox can tell, d passed.
func (e *outboxEnv) ageOutbox(t *testing.T, id int64, d time.Duration) {
	t.Helper()
	if _, err := e.pool.Exec(context.Background(), `UPDATE outbox SET
		created_at = created_at - $2::float8 * interval '1 second',
		published_at = published_at - $2::float8 * interval '1 second',
		next_attempt_at = next_attempt_at - $2::float8 * interval '1 second',
		lease_until = lease_until - $2::float8 * interval '1 second'
		WHERE id = $1`, id, d.Seconds()); err != nil {
		t.Fatal(err)
	}
}

type outboxRow struct {
	status    string
	attempts  int
	dueIn     time.Duration // next_attempt_at - now()
	lastError string
	published bool
}

func (e *outboxEnv) row(t *testing.T, id int64) outboxRow {
	t.Helper()
	var r outboxRow
	var due float64
	var lastErr *string
	if err := e.pool.QueryRow(context.Background(), `SELECT status, attempts, EXTRACT(EPOCH FROM next_attempt_at - now())::float8,
		last_error, published_at IS NOT NULL FROM outbox WHERE id = $1`, id).Scan(&r.status, &r.attempts, &due, &lastErr, &r.published); err != nil {
		t.Fatal(err)
	}
	r.dueIn = time.Duration(due * float64(time.Second))
	if lastErr != nil {
		r.lastError = *lastErr
	}
	return r
}

// publish claims and marks the one due event id published, as the relay does.
func (e *outboxEnv) publish(t *testing.T, id int64) {
	t.Helper()
	ctx := context.Background()
	evs, err := e.outbox.Claim(ctx, "relay", 10, time.Minute)
	if err != nil || len(evs) != 1 || evs[0].ID != id {
		t.Fatalf("claim: %v, %v; want event %d", evs, err, id)
	}
	if ok, err := e.outbox.MarkPublished(ctx, id, evs[0].Generation); err != nil || !ok {
		t.Fatalf("mark published: %v %v", ok, err)
	}
}

var testRedrive = domain.RedrivePolicy{After: 2 * time.Minute, Retry: domain.RetryPolicy{MaxAttempts: 4, Base: 10 * time.Second, Max: 30 * time.Second}}

// TestOutbox_RedriveAttemptsBackoffDead walks one event that is never applied through its life:
// published, re-driven once the redelivery window has passed (not before), due again only after
// its backoff (10 s, 20 s, then capped at 30 s), and dead at the fourth re-drive; an operator's
// retry makes it pending with fresh attempts, and a discard removes only dead events.
func TestOutbox_RedriveAttemptsBackoffDead(t *testing.T) {
	t.Parallel()
	e := newOutboxEnv(t)
	ctx := context.Background()
	id := e.insert(t, domain.TopicArticlePublished)

	redrive := func() []domain.OutboxRedriven {
		t.Helper()
		got, err := e.outbox.Redrive(ctx, testRedrive, 10)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	e.publish(t, id)
	if got := redrive(); len(got) != 0 {
		t.Fatalf("re-drive inside the window: %v", got)
	}
	e.ageOutbox(t, id, testRedrive.After-5*time.Second)
	if got := redrive(); len(got) != 0 {
		t.Fatalf("re-drive 5s before the window ends: %v", got)
	}
	wantBackoff := []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}
	for attempt := 1; attempt < testRedrive.Retry.MaxAttempts; attempt++ {
		e.ageOutbox(t, id, 10*time.Second) // the window has passed
		got := redrive()
		if len(got) != 1 || got[0] != (domain.OutboxRedriven{ID: id, Status: domain.OutboxPending, Attempts: attempt}) {
			t.Fatalf("re-drive %d: %v", attempt, got)
		}
		r := e.row(t, id)
		want := wantBackoff[attempt-1]
		if r.status != "pending" || r.attempts != attempt || r.published || math.Abs((r.dueIn-want).Seconds()) > 2 ||
			!strings.Contains(r.lastError, "not applied within 120s") {
			t.Fatalf("after re-drive %d: %+v, want pending, due in %s", attempt, r, want)
		}
		if evs, err := e.outbox.Claim(ctx, "relay", 10, time.Minute); err != nil || len(evs) != 0 {
			t.Fatalf("claim during the backoff: %v %v", evs, err)
		}
		e.ageOutbox(t, id, want)
		e.publish(t, id)
		e.ageOutbox(t, id, testRedrive.After)
	}
	got := redrive()
	if len(got) != 1 || got[0] != (domain.OutboxRedriven{ID: id, Status: domain.OutboxDead, Attempts: testRedrive.Retry.MaxAttempts}) {
		t.Fatalf("last re-drive: %v", got)
	}
	if evs, err := e.outbox.Claim(ctx, "relay", 10, time.Minute); err != nil || len(evs) != 0 {
		t.Fatalf("a dead event was claimed: %v %v", evs, err)
	}
	e.ageOutbox(t, id, time.Hour)
	if got := redrive(); len(got) != 0 {
		t.Fatalf("a dead event was re-driven: %v", got)
	}
	h, err := e.outbox.Health(ctx)
	if err != nil || h.Dead != 1 || h.OldestUnapplied != 0 {
		t.Fatalf("health with one dead event: %+v %v", h, err)
	}
	list, err := e.outbox.List(ctx, domain.OutboxDead, 10)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Attempts != testRedrive.Retry.MaxAttempts || list[0].LastError == "" {
		t.Fatalf("dead list: %+v %v", list, err)
	}

	t.Run("retry_makes_a_dead_event_pending_with_fresh_attempts", func(t *testing.T) {
		if err := e.outbox.Retry(ctx, id); err != nil {
			t.Fatal(err)
		}
		if r := e.row(t, id); r.status != "pending" || r.attempts != 0 || r.dueIn > 0 || r.lastError != "" {
			t.Fatalf("after retry: %+v", r)
		}
		if err := e.outbox.Retry(ctx, id); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("retry of a pending event: %v", err)
		}
		if err := e.outbox.Discard(ctx, id); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("discard of a pending event: %v", err)
		}
		e.publish(t, id)
	})
	t.Run("discard_deletes_a_dead_event", func(t *testing.T) {
		other := e.insert(t, domain.TopicArticleWithdrawn)
		if _, err := e.pool.Exec(ctx, `UPDATE outbox SET status = 'dead' WHERE id = $1`, other); err != nil {
			t.Fatal(err)
		}
		if err := e.outbox.Discard(ctx, other); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE id = $1`, other).Scan(&n); err != nil || n != 0 {
			t.Fatalf("discarded event still there: %d %v", n, err)
		}
	})
}

// TestOutbox_AppliedEventsAreNeverRedriven: once the consumer marked an event applied, in any
// state (published, re-driven to pending while the consumer committed, or even dead), it is
// applied for good: no re-drive, no claim, and a relay's late mark does not move it back.
func TestOutbox_AppliedEventsAreNeverRedriven(t *testing.T) {
	t.Parallel()
	e := newOutboxEnv(t)
	ctx := context.Background()

	published := e.insert(t, domain.TopicArticlePublished)
	e.publish(t, published)
	if err := e.outbox.MarkApplied(ctx, domain.OutboxEvent{ID: published}.EventID()); err != nil {
		t.Fatal(err)
	}
	e.ageOutbox(t, published, time.Hour)
	if got, err := e.outbox.Redrive(ctx, testRedrive, 10); err != nil || len(got) != 0 {
		t.Fatalf("re-drive of an applied event: %v %v", got, err)
	}
	if r := e.row(t, published); r.status != "applied" || r.attempts != 0 {
		t.Fatalf("applied event: %+v", r)
	}

	// Re-driven and claimed again, then the consumer's first delivery commits: the relay's mark
	// finds the event applied and leaves it so.
	raced := e.insert(t, domain.TopicArticlePublished)
	evs, err := e.outbox.Claim(ctx, "relay", 10, time.Minute)
	if err != nil || len(evs) != 1 {
		t.Fatalf("claim: %v %v", evs, err)
	}
	if err := e.outbox.MarkApplied(ctx, domain.OutboxEvent{ID: raced}.EventID()); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.outbox.MarkPublished(ctx, raced, evs[0].Generation); err != nil || ok {
		t.Fatalf("mark of an applied event: %v %v", ok, err)
	}
	if r := e.row(t, raced); r.status != "applied" {
		t.Fatalf("applied event after a late mark: %+v", r)
	}
	if err := e.outbox.MarkApplied(ctx, "read-batch-123"); err != nil {
		t.Fatalf("an id not from the outbox: %v", err)
	}
}

// TestOutbox_ClaimUsesTheDatabaseClock: a lease is stamped with now() and compared with now():
// no parameter carries a node's time, and an expired lease (by PostgreSQL's clock) is taken over
// with a new generation that fences the old holder's mark.
func TestOutbox_ClaimUsesTheDatabaseClock(t *testing.T) {
	t.Parallel()
	e := newOutboxEnv(t)
	ctx := context.Background()
	id := e.insert(t, domain.TopicArticlePublished)
	first, err := e.outbox.Claim(ctx, "a", 10, time.Minute)
	if err != nil || len(first) != 1 {
		t.Fatal(first, err)
	}
	var leaseLeft float64
	if err := e.pool.QueryRow(ctx, `SELECT EXTRACT(EPOCH FROM lease_until - now())::float8 FROM outbox WHERE id = $1`, id).Scan(&leaseLeft); err != nil ||
		math.Abs(leaseLeft-60) > 2 {
		t.Fatalf("lease ends in %.1fs (%v), want 60s on the database clock", leaseLeft, err)
	}
	if again, err := e.outbox.Claim(ctx, "b", 10, time.Minute); err != nil || len(again) != 0 {
		t.Fatalf("claim of a live lease: %v %v", again, err)
	}
	e.ageOutbox(t, id, time.Minute+time.Second)
	second, err := e.outbox.Claim(ctx, "b", 10, time.Minute)
	if err != nil || len(second) != 1 || second[0].Generation != first[0].Generation+1 {
		t.Fatalf("claim of an expired lease: %v %v", second, err)
	}
	if ok, err := e.outbox.MarkPublished(ctx, id, first[0].Generation); err != nil || ok {
		t.Fatalf("the old holder's mark: %v %v", ok, err)
	}
	if ok, err := e.outbox.MarkPublished(ctx, id, second[0].Generation); err != nil || !ok {
		t.Fatalf("the new holder's mark: %v %v", ok, err)
	}
	if strings.Contains(outboxClaimSQL(t), "@now") {
		t.Fatal("the claim still takes a node's clock")
	}
}

func outboxClaimSQL(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../../queries/outbox.sql")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	i := strings.Index(s, "-- name: OutboxClaim ")
	j := strings.Index(s[i+1:], "-- name:")
	return s[i : i+1+j]
}

// TestOutbox_RetentionAndHealth: the retention job's outbox_applied rule deletes only applied
// events older than its bound, at most lim per statement; the health shows the oldest event not
// applied yet. (TestRetentionQueries_GenericPlansWalkAnIndex checks the statement's plan.)
func TestOutbox_RetentionAndHealth(t *testing.T) {
	t.Parallel()
	e := newOutboxEnv(t)
	ctx := context.Background()
	for range 5 {
		id := e.insert(t, domain.TopicArticlePublished)
		e.publish(t, id)
		if err := e.outbox.MarkApplied(ctx, domain.OutboxEvent{ID: id}.EventID()); err != nil {
			t.Fatal(err)
		}
		e.ageOutbox(t, id, 48*time.Hour)
	}
	recent := e.insert(t, domain.TopicArticlePublished)
	e.publish(t, recent)
	if err := e.outbox.MarkApplied(ctx, domain.OutboxEvent{ID: recent}.EventID()); err != nil {
		t.Fatal(err)
	}
	unapplied := e.insert(t, domain.TopicArticlePublished)
	e.publish(t, unapplied)
	e.ageOutbox(t, unapplied, 72*time.Hour)
	pending := e.insert(t, domain.TopicArticlePublished)
	e.ageOutbox(t, pending, time.Hour)

	h, err := e.outbox.Health(ctx)
	if err != nil || h.Dead != 0 || math.Abs(h.OldestUnapplied.Hours()-72) > 0.01 {
		t.Fatalf("health: %+v %v; want the oldest unapplied 72h old", h, err)
	}
	retention := repository.NewRetentionStore(pg.SessionPool{Pool: e.pool}, dao.New())
	rule := domain.RetentionRule{Name: domain.RetentionOutboxApplied, MaxAge: 24 * time.Hour}
	n, err := retention.Prune(ctx, rule, 3)
	if err != nil || n != 3 {
		t.Fatalf("first batch: %d %v", n, err)
	}
	n, err = retention.Prune(ctx, rule, 3)
	if err != nil || n != 2 {
		t.Fatalf("second batch: %d %v", n, err)
	}
	var left []int64
	rows, err := e.pool.Query(ctx, `SELECT id FROM outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	left, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(left) != 3 || left[0] != recent || left[1] != unapplied || left[2] != pending {
		t.Fatalf("left %v (%v), want %d %d %d", left, err, recent, unapplied, pending)
	}
}
