package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// Each attempt is kept (webhook_attempts), not only the last: the deliveries page lists them,
// newest first, for each of its deliveries; the delivery's own fields stay the last attempt's.
func TestWebhooks_EveryAttemptListed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	owner := e.user(t)
	w, err := e.store.Create(t.Context(), domain.Webhook{OwnerID: owner, URL: "https://h.example.com/", Events: []string{domain.WebhookArticlePublished}}, []byte("enc"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		e.emit(t, domain.WebhookArticlePublished, owner, fmt.Sprintf("outbox-%d", i))
	}
	ds, _ := e.store.Deliveries(t.Context(), w.ID, 0, 10)
	first, second := ds[2], ds[1]
	now := time.Now()
	record := func(id int64, a domain.WebhookAnswer) {
		t.Helper()
		if _, err := e.store.Record(t.Context(), domain.WebhookAttempt{DeliveryID: id, WebhookID: w.ID, At: now, Answer: a}); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("x", 3000)
	record(first.ID, domain.WebhookAnswer{Err: errors.New("connection refused"), Latency: 3 * time.Millisecond})
	record(first.ID, domain.WebhookAnswer{StatusCode: 500, Body: []byte(long), Latency: 40 * time.Millisecond})
	record(first.ID, domain.WebhookAnswer{StatusCode: 204, Latency: 7 * time.Millisecond})
	record(second.ID, domain.WebhookAnswer{StatusCode: 200, Body: []byte("ok"), Latency: time.Millisecond})

	ds, err = e.store.Deliveries(t.Context(), w.ID, 0, 10)
	if err != nil || len(ds) != 3 {
		t.Fatalf("deliveries %+v, %v", ds, err)
	}
	if len(ds[0].History) != 0 || ds[0].History == nil {
		t.Fatalf("the unattempted delivery lists %+v, want an empty list", ds[0].History)
	}
	if h := ds[1].History; len(h) != 1 || h[0].Attempt != 1 || h[0].StatusCode != 200 || h[0].Response != "ok" {
		t.Fatalf("the second delivery's attempts %+v", h)
	}
	h := ds[2].History
	if len(h) != 3 {
		t.Fatalf("the first delivery's attempts %+v, want 3", h)
	}
	want := []domain.WebhookDeliveryAttempt{
		{Attempt: 3, StatusCode: 204, LatencyMs: 7, Error: ""},
		{Attempt: 2, StatusCode: 500, LatencyMs: 40, Response: long[:domain.WebhookKeptAnswer], Error: "answered 500"},
		{Attempt: 1, StatusCode: 0, LatencyMs: 3, Error: "connection refused"},
	}
	for i, a := range h {
		if a.At.IsZero() {
			t.Fatalf("attempt %d has no time", a.Attempt)
		}
		a.At = time.Time{}
		if a != want[i] {
			t.Fatalf("attempt %d: %+v, want %+v", i, a, want[i])
		}
	}
	if d := ds[2]; d.Attempts != 3 || d.StatusCode != 204 || d.Status != domain.WebhookDelivered || d.Error != "" {
		t.Fatalf("the delivery's last attempt %+v", d)
	}
	// Deleting the endpoint takes its deliveries and their attempts.
	if err := e.store.Delete(t.Context(), w.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM webhook_attempts`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d attempts left, %v", n, err)
	}
}

// The page's attempts are one statement along webhook_attempts' primary key, bounded: a page of
// deliveries costs its size, however many deliveries and attempts the table holds.
func TestWebhooks_AttemptsPlan(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := t.Context()
	owner := e.user(t)
	w, err := e.store.Create(ctx, domain.Webhook{OwnerID: owner, URL: "https://h.example.com/", Events: []string{domain.WebhookArticlePublished}}, []byte("enc"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		fmt.Sprintf(`INSERT INTO webhook_deliveries (webhook_id, seq, event_id, event_type, body, status, attempts)
			SELECT %d, g, 'e' || g, 'article.published', '{}', 'delivered', 4 FROM generate_series(1, 20000) g`, w.ID),
		`INSERT INTO webhook_attempts (delivery_id, attempt, status_code, latency_ms)
			SELECT d.id, a, 500, 10 FROM webhook_deliveries d, generate_series(1, 4) a`,
		`ANALYZE webhook_deliveries`, `ANALYZE webhook_attempts`,
	} {
		if _, err := e.pool.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	q := dao.New()
	cases := []struct {
		name    string
		sql     func(dao.DBTX)
		args    string
		want    []string
		notWant []string
	}{
		{
			name:    "the page's attempts",
			sql:     func(c dao.DBTX) { _, _ = q.WebhookAttemptsOf(ctx, c, dao.WebhookAttemptsOfParams{}) },
			args:    "('{101,102,103,104,105,106,107,108,109,110,111,112,113,114,115,116,117,118,119,120}', 320)",
			want:    []string{"Limit", "using webhook_attempts_pkey", "Index Cond: (delivery_id = ANY ($1))"},
			notWant: []string{"Seq Scan"},
		},
		{
			name:    "the page",
			sql:     func(c dao.DBTX) { _, _ = q.WebhookDeliveryList(ctx, c, dao.WebhookDeliveryListParams{}) },
			args:    "(1, 10000, 21)",
			want:    []string{"Limit", "Index Scan Backward using webhook_deliveries_seq_key"},
			notWant: []string{"Sort", "Seq Scan"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := testenv.GenericPlan(t, e.pool, captureSQL(t, tc.sql), tc.args)
			for _, w := range tc.want {
				if !strings.Contains(plan, w) {
					t.Errorf("the generic plan lacks %q:\n%s", w, plan)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(plan, nw) {
					t.Errorf("the generic plan holds %q:\n%s", nw, plan)
				}
			}
			t.Logf("%s", plan)
		})
	}
}

// captureSQL returns the SQL a dao call sends, running nothing.
func captureSQL(t *testing.T, run func(dao.DBTX)) string {
	t.Helper()
	var c sqlCapture
	run(&c)
	if c.sql == "" {
		t.Fatal("could not capture the query's SQL")
	}
	return c.sql
}

// sqlCapture is a dao.DBTX that records the SQL sent and runs nothing.
type sqlCapture struct{ sql string }

func (c *sqlCapture) Exec(_ context.Context, sql string, _ ...any) (pgconn.CommandTag, error) {
	c.sql = sql
	return pgconn.CommandTag{}, errors.New("captured")
}

func (c *sqlCapture) Query(_ context.Context, sql string, _ ...any) (pgx.Rows, error) {
	c.sql = sql
	return nil, errors.New("captured")
}

func (c *sqlCapture) QueryRow(_ context.Context, sql string, _ ...any) pgx.Row {
	c.sql = sql
	return errRow{}
}

type errRow struct{}

func (errRow) Scan(...any) error { return errors.New("captured") }
