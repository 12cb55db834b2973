package job_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/pg"
)

const day = 24 * time.Hour

// defaultRules are the rules the default settings make (NewRetentionRules), with a refresh-token
// lifetime of 30 days and a history cap of 3.
func defaultRules() []domain.RetentionRule {
	age := func(name string, d time.Duration) domain.RetentionRule {
		return domain.RetentionRule{Name: name, MaxAge: d}
	}
	return []domain.RetentionRule{
		age(domain.RetentionInbox, day),
		age(domain.RetentionJobsDone, 7*day),
		age(domain.RetentionJobsDead, 30*day),
		age(domain.RetentionNotifications, 90*day),
		age(domain.RetentionRefreshTokens, day),
		age(domain.RetentionSessionsRevoked, 31*day),
		age(domain.RetentionSessionsIdle, 31*day),
		age(domain.RetentionIdempotencyKeys, day),
		{Name: domain.RetentionReadingHistory, Newest: 3, Since: time.Hour},
		age(domain.RetentionLoginCodes, time.Hour),
		age(domain.RetentionLoginCodeMeters, time.Hour),
		age(domain.RetentionAccountCodes, time.Hour),
		age(domain.RetentionSignInStates, time.Hour),
		age(domain.RetentionSignInCodes, time.Hour),
		age(domain.RetentionOutboxApplied, day),
		age(domain.RetentionOutboxDead, 30*day),
		age(domain.RetentionWebhookDeliveries, 30*day),
	}
}

// noPause is a sleeper that counts its calls and returns at once.
type noPause struct{ calls atomic.Int64 }

func (p *noPause) sleep(ctx context.Context, _ time.Duration) error {
	p.calls.Add(1)
	return ctx.Err()
}

func newRetention(t *testing.T, db *testenv.DB, cfg job.RetentionConfig) *job.RetentionJob {
	t.Helper()
	if cfg.Sleep == nil {
		cfg.Sleep = (&noPause{}).sleep
	}
	return job.NewRetentionJob(repository.NewRetentionStore(pg.SessionPool{Pool: db.Pool}, dao.New()), cfg, testenv.Logger(t), time.Now)
}

func exec(t *testing.T, db *testenv.DB, sql string, args ...any) {
	t.Helper()
	if _, err := db.Pool.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// keys lists the rows of a query's single text column, sorted.
func keys(t *testing.T, db *testenv.DB, sql string) []string {
	t.Helper()
	rows, err := db.Pool.Query(t.Context(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// seedRetention fills every pruned table with rows past their retention (named old*) and rows
// that must stay (named live*).
func seedRetention(t *testing.T, db *testenv.DB) {
	t.Helper()
	for _, s := range []string{
		`INSERT INTO users (email, username, password_hash) VALUES ('r1@example.com', 'r1', 'x'), ('r2@example.com', 'r2', 'x')`,
		`INSERT INTO articles (slug, author_id, title, description, body)
		 SELECT 'a' || g, (SELECT id FROM users WHERE username = 'r1'), 't', 'd', 'b' FROM generate_series(1, 5) g`,

		`INSERT INTO inbox (consumer, event_id, received_at) VALUES
		 ('c', 'old1', now() - interval '2 days'), ('c', 'old2', now() - interval '25 hours'), ('d', 'old3', now() - interval '30 days'),
		 ('c', 'live1', now()), ('d', 'live2', now() - interval '23 hours')`,

		`INSERT INTO jobs (queue, kind, status, finished_at, unique_key) VALUES
		 ('q', 'k', 'done', now() - interval '8 days', 'old-done'), ('q', 'k', 'done', now() - interval '6 days', 'live-done'),
		 ('q', 'k', 'dead', now() - interval '31 days', 'old-dead'), ('q', 'k', 'dead', now() - interval '29 days', 'live-dead'),
		 ('q', 'k', 'ready', NULL, 'live-ready')`,
		`UPDATE jobs SET created_at = now() - interval '90 days'`, // age is when a job finished, not when it was made
		`INSERT INTO jobs (queue, kind, status, lease_owner, lease_until, unique_key) VALUES ('q', 'k', 'running', 'w', now(), 'live-running')`,

		`INSERT INTO notifications (user_id, kind, event_id, created_at)
		 SELECT u.id, 'k', e.id, now() - e.age FROM users u,
		 (VALUES ('old1', interval '91 days'), ('live1', interval '89 days'), ('live2', interval '0')) AS e(id, age)
		 WHERE u.username = 'r1'`,

		// Sessions: refresh-token lifetime 30 days, grace 1 day.
		`INSERT INTO sessions (id, user_id, created_at, last_used_at, revoked_at)
		 SELECT s.id, u.id, now() - s.created, now() - s.used, now() - s.revoked FROM users u,
		 (VALUES ('old-revoked', interval '60 days', NULL::interval, interval '32 days'),
		         ('live-revoked', interval '60 days', NULL, interval '1 day'),
		         ('old-idle', interval '60 days', interval '40 days', NULL),
		         ('old-idle-never-used', interval '32 days', NULL, NULL),
		         ('live-used', interval '60 days', interval '1 hour', NULL),
		         ('live-idle-valid-token', interval '60 days', interval '40 days', NULL)) AS s(id, created, used, revoked)
		 WHERE u.username = 'r1'`,
		`INSERT INTO refresh_tokens (token_hash, session_id, expires_at, spent_at) VALUES
		 ('old-1', 'old-idle', now() - interval '10 days', NULL),
		 ('old-2', 'live-used', now() - interval '2 days', now() - interval '32 days'),
		 ('live-1', 'live-used', now() + interval '30 days', NULL),
		 ('live-2', 'live-used', now() - interval '23 hours', now() - interval '30 days'),
		 ('live-3', 'live-idle-valid-token', now() + interval '5 days', NULL),
		 ('live-4', 'live-revoked', now() + interval '20 days', NULL)`,

		`INSERT INTO idempotency_keys (scope, key, request_hash, response_status, response_body, created_at) VALUES
		 ('s', 'old1', 'h', 201, '{}', now() - interval '25 hours'), ('s', 'live1', 'h', 201, '{}', now() - interval '23 hours'),
		 ('s', 'live2', 'h', 201, '{}', now())`,

		// r1 read all five articles lately (the two read first go: the cap is 3); r2 read two.
		`INSERT INTO reading_history (user_id, article_id, last_read_at)
		 SELECT u.id, a.id, now() - (10 - substr(a.slug, 2)::int) * interval '1 minute' FROM users u, articles a WHERE u.username = 'r1'`,
		`INSERT INTO reading_history (user_id, article_id, last_read_at)
		 SELECT u.id, a.id, now() - interval '1 minute' FROM users u, articles a WHERE u.username = 'r2' AND a.slug IN ('a1', 'a2')`,

		`INSERT INTO login_codes (target, code_hash, attempts_left, sent_at, expires_at) VALUES
		 ('old1', 'h', 3, now() - interval '3 hours', now() - interval '2 hours'),
		 ('live1', 'h', 3, now() - interval '40 minutes', now() - interval '30 minutes'),
		 ('live2', 'h', 3, now(), now() + interval '10 minutes')`,
		`INSERT INTO login_code_meters (key, hits, window_ends) VALUES
		 ('old1', 1, now() - interval '2 hours'), ('live1', 1, now() - interval '59 minutes'), ('live2', 1, now() + interval '1 day')`,
		`INSERT INTO account_codes (user_id, purpose, email, code_hash, sent_at, expires_at, spent_at)
		 SELECT u.id, p.purpose, 'e', 'h', now() - p.expired - interval '15 minutes', now() - p.expired, p.spent
		 FROM users u, (VALUES ('r1', 'verify_email', interval '2 hours', now() - interval '2 hours'),
		                       ('r1', 'reset_password', interval '3 hours', NULL),
		                       ('r2', 'verify_email', interval '-10 minutes', NULL),
		                       ('r2', 'reset_password', interval '30 minutes', NULL)) AS p(username, purpose, expired, spent)
		 WHERE u.username = p.username`,

		// Sign-in states and exchange codes (#30) go an hour after they expired.
		`INSERT INTO sign_in_states (state_hash, cookie_hash, provider, redirect, expires_at) VALUES
		 ('old-state', 'c', 'corp', 'r', now() - interval '2 hours'), ('live-state', 'c', 'corp', 'r', now() - interval '30 minutes'),
		 ('live-state2', 'c', 'corp', 'r', now() + interval '5 minutes')`,
		`INSERT INTO sign_in_codes (code_hash, user_id, expires_at)
		 SELECT c.h::bytea, u.id, now() - c.expired FROM users u, (VALUES ('old-code', interval '2 hours'), ('live-code', interval '10 minutes')) AS c(h, expired)
		 WHERE u.username = 'r1'`,

		// Outbox: applied and dead events go once old; pending and published ones never do.
		`INSERT INTO outbox (topic, aggregate_id, payload, status, created_at)
		 SELECT 't', 1, jsonb_build_object('k', e.k), e.status, now() - e.age FROM
		 (VALUES ('old-applied', 'applied', interval '2 days'), ('live-applied', 'applied', interval '23 hours'),
		         ('old-dead', 'dead', interval '31 days'), ('live-dead', 'dead', interval '29 days'),
		         ('live-pending', 'pending', interval '60 days'), ('live-published', 'published', interval '60 days')) AS e(k, status, age)`,

		// Webhook deliveries: delivered and dead ones go 30 days after they were made, with their
		// attempts; pending ones never do, however old.
		`INSERT INTO webhooks (owner_id, url, events, secret_enc)
		 SELECT id, 'https://hooks.example.com/', '{article.published}', 'enc' FROM users WHERE username = 'r1'`,
		`INSERT INTO webhook_deliveries (webhook_id, seq, event_id, event_type, body, status, attempts, created_at)
		 SELECT w.id, e.n, e.k, 'article.published', '{}', e.status, 2, now() - e.age FROM webhooks w,
		 (VALUES (1, 'old-delivered', 'delivered', interval '31 days'), (2, 'live-delivered', 'delivered', interval '29 days'),
		         (3, 'old-dead', 'dead', interval '31 days'), (4, 'live-dead', 'dead', interval '29 days'),
		         (5, 'live-old-pending', 'pending', interval '60 days'), (6, 'live-pending', 'pending', interval '1 hour')) AS e(n, k, status, age)`,
		`INSERT INTO webhook_attempts (delivery_id, attempt, latency_ms) SELECT id, a, 1 FROM webhook_deliveries, generate_series(1, 2) a`,
	} {
		exec(t, db, s)
	}
}

// TestRetention_OnePassPrunesEveryTableAndKeepsTheLiveRows: a pass brings every table back
// within its retention, deletes nothing that is still kept, and counts what it deleted.
func TestRetention_OnePassPrunesEveryTableAndKeepsTheLiveRows(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	seedRetention(t, db)
	j := newRetention(t, db, job.RetentionConfig{Rules: defaultRules(), Batch: 5000})

	rep, err := j.RunOnce(t.Context())
	if err != nil || rep.Outcome != job.OutcomeSuccess {
		t.Fatalf("RunOnce = %v, %v", rep.Outcome, err)
	}
	want := map[string]int64{
		domain.RetentionInbox: 3, domain.RetentionJobsDone: 1, domain.RetentionJobsDead: 1, domain.RetentionNotifications: 1,
		domain.RetentionRefreshTokens: 2, domain.RetentionSessionsRevoked: 1, domain.RetentionSessionsIdle: 2,
		domain.RetentionIdempotencyKeys: 1, domain.RetentionReadingHistory: 2, domain.RetentionLoginCodes: 1,
		domain.RetentionLoginCodeMeters: 1, domain.RetentionAccountCodes: 2,
		domain.RetentionOutboxApplied: 1, domain.RetentionOutboxDead: 1,
		domain.RetentionSignInStates: 1, domain.RetentionSignInCodes: 1,
		domain.RetentionWebhookDeliveries: 2,
	}
	for _, res := range rep.Results {
		if res.Rows != want[res.Rule.Name] || res.Statements != 1 || res.Err != nil {
			t.Errorf("%s: deleted %d in %d statements (%v), want %d in 1", res.Rule.Name, res.Rows, res.Statements, res.Err, want[res.Rule.Name])
		}
		if got := j.Metrics.Deleted[res.Rule.Name].Load(); got != want[res.Rule.Name] {
			t.Errorf("metric of %s: %d, want %d", res.Rule.Name, got, want[res.Rule.Name])
		}
	}
	if len(rep.Results) != len(want) {
		t.Errorf("%d results, want %d", len(rep.Results), len(want))
	}
	if j.Metrics.Success.Load() != 1 || j.Metrics.LastRunUnixNanos.Load() == 0 {
		t.Errorf("run metrics: success %d, last run %d", j.Metrics.Success.Load(), j.Metrics.LastRunUnixNanos.Load())
	}

	for sql, want := range map[string][]string{
		`SELECT event_id FROM inbox`:                                  {"live1", "live2"},
		`SELECT unique_key FROM jobs`:                                 {"live-dead", "live-done", "live-ready", "live-running"},
		`SELECT event_id FROM notifications`:                          {"live1", "live2"},
		`SELECT id FROM sessions`:                                     {"live-idle-valid-token", "live-revoked", "live-used"},
		`SELECT convert_from(token_hash, 'UTF8') FROM refresh_tokens`: {"live-1", "live-2", "live-3", "live-4"},
		`SELECT key FROM idempotency_keys`:                            {"live1", "live2"},
		`SELECT u.username || ':' || a.slug FROM reading_history h JOIN users u ON u.id = h.user_id JOIN articles a ON a.id = h.article_id`: {
			"r1:a3", "r1:a4", "r1:a5", "r2:a1", "r2:a2"},
		`SELECT target FROM login_codes`:    {"live1", "live2"},
		`SELECT key FROM login_code_meters`: {"live1", "live2"},
		`SELECT u.username || ':' || c.purpose FROM account_codes c JOIN users u ON u.id = c.user_id`: {"r2:reset_password", "r2:verify_email"},
		`SELECT payload->>'k' FROM outbox`:                            {"live-applied", "live-dead", "live-pending", "live-published"},
		`SELECT convert_from(state_hash, 'UTF8') FROM sign_in_states`: {"live-state", "live-state2"},
		`SELECT convert_from(code_hash, 'UTF8') FROM sign_in_codes`:   {"live-code"},
		`SELECT event_id FROM webhook_deliveries`:                     {"live-dead", "live-delivered", "live-old-pending", "live-pending"},
		`SELECT d.event_id || ':' || a.attempt FROM webhook_attempts a LEFT JOIN webhook_deliveries d ON d.id = a.delivery_id`: {
			"live-dead:1", "live-dead:2", "live-delivered:1", "live-delivered:2", "live-old-pending:1", "live-old-pending:2", "live-pending:1", "live-pending:2"},
	} {
		if got := keys(t, db, sql); !slices.Equal(got, want) {
			t.Errorf("%s after the pass: %v, want %v", sql, got, want)
		}
	}

	// A second pass finds nothing more.
	rep, err = j.RunOnce(t.Context())
	if err != nil || rep.Deleted() != 0 {
		t.Fatalf("second pass: deleted %d, %v", rep.Deleted(), err)
	}
}

// TestRetention_BatchesAreBounded: batch size 2 over 5 prunable rows is 3 statements (2, 2, 1),
// with a pause between two and none after the short one.
func TestRetention_BatchesAreBounded(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	exec(t, db, `INSERT INTO inbox (consumer, event_id, received_at)
		SELECT 'c', 'old' || g, now() - interval '2 days' FROM generate_series(1, 5) g`)
	exec(t, db, `INSERT INTO inbox (consumer, event_id) VALUES ('c', 'live')`)
	pause := &noPause{}
	j := newRetention(t, db, job.RetentionConfig{
		Rules: []domain.RetentionRule{{Name: domain.RetentionInbox, MaxAge: day}}, Batch: 2, Pause: time.Second, Sleep: pause.sleep,
	})
	rep, err := j.RunOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res := rep.Results[0]; res.Rows != 5 || res.Statements != 3 {
		t.Fatalf("deleted %d in %d statements, want 5 in 3", res.Rows, res.Statements)
	}
	if pause.calls.Load() != 2 {
		t.Fatalf("%d pauses, want 2 (between the statements)", pause.calls.Load())
	}
	if got := keys(t, db, `SELECT event_id FROM inbox`); !slices.Equal(got, []string{"live"}) {
		t.Fatalf("left: %v", got)
	}
}

// TestRetention_DryRunCountsAndDeletesNothing: a dry run reports what a pass would delete,
// capped, and deletes nothing.
func TestRetention_DryRunCountsAndDeletesNothing(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	seedRetention(t, db)
	j := newRetention(t, db, job.RetentionConfig{Rules: defaultRules(), Batch: 5000})
	before := keys(t, db, `SELECT count(*)::text FROM inbox UNION ALL SELECT count(*)::text FROM sessions UNION ALL SELECT count(*)::text FROM reading_history`)

	rep, err := j.DryRun(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, res := range rep.Results {
		got[res.Rule.Name] = fmt.Sprintf("%d capped=%v", res.Rows, res.Capped)
		if res.Statements != 0 {
			t.Errorf("%s: %d delete statements in a dry run", res.Rule.Name, res.Statements)
		}
	}
	for name, want := range map[string]string{
		domain.RetentionInbox: "2 capped=true", domain.RetentionNotifications: "1 capped=false",
		domain.RetentionReadingHistory: "2 capped=true", domain.RetentionSessionsIdle: "2 capped=true",
		domain.RetentionSessionsRevoked: "1 capped=false",
	} {
		if got[name] != want {
			t.Errorf("%s: %s, want %s", name, got[name], want)
		}
	}
	if after := keys(t, db, `SELECT count(*)::text FROM inbox UNION ALL SELECT count(*)::text FROM sessions UNION ALL SELECT count(*)::text FROM reading_history`); !slices.Equal(before, after) {
		t.Fatalf("a dry run changed rows: %v → %v", before, after)
	}
}

// TestRetention_OneRunnerAtATime: while one runner holds the lock (paused between two batches),
// another runner on the same database skips and deletes nothing; once the first is done the
// lock is free again.
func TestRetention_OneRunnerAtATime(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	exec(t, db, `INSERT INTO inbox (consumer, event_id, received_at)
		SELECT 'c', 'old' || g, now() - interval '2 days' FROM generate_series(1, 3) g`)
	rules := []domain.RetentionRule{{Name: domain.RetentionInbox, MaxAge: day}}
	paused, resume := make(chan struct{}), make(chan struct{})
	first := newRetention(t, db, job.RetentionConfig{Rules: rules, Batch: 1, Sleep: func(ctx context.Context, _ time.Duration) error {
		select {
		case paused <- struct{}{}:
		default: // only the first pause waits
			return nil
		}
		<-resume
		return nil
	}})
	second := newRetention(t, db, job.RetentionConfig{Rules: rules, Batch: 1})

	done := make(chan job.RetentionReport, 1)
	go func() {
		rep, err := first.RunOnce(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	<-paused // first holds the lock and deleted one row
	rep, err := second.RunOnce(t.Context())
	if err != nil || rep.Outcome != job.OutcomeNotLeader || rep.Deleted() != 0 {
		t.Fatalf("second runner while the first runs: %v, deleted %d, %v", rep.Outcome, rep.Deleted(), err)
	}
	if second.Metrics.NotLeader.Load() != 1 {
		t.Fatalf("not-leader runs: %d", second.Metrics.NotLeader.Load())
	}
	close(resume)
	if rep := <-done; rep.Outcome != job.OutcomeSuccess || rep.Deleted() != 3 {
		t.Fatalf("first runner: %v, deleted %d", rep.Outcome, rep.Deleted())
	}
	if rep, err := second.RunOnce(t.Context()); err != nil || rep.Outcome != job.OutcomeSuccess {
		t.Fatalf("second runner after the first: %v, %v", rep.Outcome, err)
	}
}

// TestRetention_StopEndsTheRunAndFreesTheLock: Stop (the App's shutdown) ends a run waiting
// between two batches; the lock is released for the next runner.
func TestRetention_StopEndsTheRunAndFreesTheLock(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	exec(t, db, `INSERT INTO inbox (consumer, event_id, received_at)
		SELECT 'c', 'old' || g, now() - interval '2 days' FROM generate_series(1, 3) g`)
	rules := []domain.RetentionRule{{Name: domain.RetentionInbox, MaxAge: day}}
	paused := make(chan struct{})
	j := newRetention(t, db, job.RetentionConfig{Rules: rules, Batch: 1, Sleep: func(ctx context.Context, _ time.Duration) error {
		close(paused)
		<-ctx.Done()
		return ctx.Err()
	}})
	done := make(chan error, 1)
	go func() {
		_, err := j.RunOnce(context.Background())
		done <- err
	}()
	<-paused
	j.Stop()
	if err := <-done; err == nil {
		t.Fatal("a stopped run reported no error")
	}
	if j.Metrics.Failure.Load() != 1 || j.Metrics.Deleted[domain.RetentionInbox].Load() != 1 {
		t.Fatalf("failures %d, deleted %d", j.Metrics.Failure.Load(), j.Metrics.Deleted[domain.RetentionInbox].Load())
	}
	other := newRetention(t, db, job.RetentionConfig{Rules: rules, Batch: 10})
	if rep, err := other.RunOnce(t.Context()); err != nil || rep.Outcome != job.OutcomeSuccess || rep.Deleted() != 2 {
		t.Fatalf("next runner: %v, deleted %d, %v", rep.Outcome, rep.Deleted(), err)
	}
}

// TestRetention_OffRulesAreSkipped: a rule that is off runs no statement.
func TestRetention_OffRulesAreSkipped(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	exec(t, db, `INSERT INTO inbox (consumer, event_id, received_at) VALUES ('c', 'old', now() - interval '300 days')`)
	j := newRetention(t, db, job.RetentionConfig{Rules: []domain.RetentionRule{{Name: domain.RetentionInbox}, {Name: domain.RetentionReadingHistory}}, Batch: 10})
	rep, err := j.RunOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		if res.Statements != 0 || res.Rows != 0 {
			t.Errorf("%s is off but ran %d statements", res.Rule.Name, res.Statements)
		}
	}
	if got := keys(t, db, `SELECT event_id FROM inbox`); len(got) != 1 {
		t.Fatalf("inbox: %v", got)
	}
}
