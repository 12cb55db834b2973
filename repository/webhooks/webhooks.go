package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

// Jobs enqueues a job in a unit of work (durable.JobQueue; the root binds it): the room of
// durable delivery is another room, so this one names only what it needs of it.
type Jobs interface {
	EnqueueIn(ctx context.Context, stx service.Tx, nj domain.NewJob) (bool, error)
}

// Store keeps endpoints and deliveries (service.WebhookStore).
type Store struct {
	pool *pgxpool.Pool
	q    dao.Querier
	jobs Jobs
}

// NewStore returns the store.
func NewStore(pool *pgxpool.Pool, q dao.Querier, jobs Jobs) *Store {
	return &Store{pool: pool, q: q, jobs: jobs}
}

func owner(id int64) pgtype.Int8 { return pgtype.Int8{Int64: id, Valid: id != 0} }

func webhookOf(r dao.Webhook) domain.Webhook {
	w := domain.Webhook{ID: r.ID, OwnerID: r.OwnerID.Int64, URL: r.Url, Events: r.Events, Active: r.Active,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.FailingSince.Valid {
		t := r.FailingSince.Time
		w.FailingSince = &t
	}
	return w
}

// Create adds an endpoint for w.OwnerID (0: the site) unless the owner has
// domain.MaxWebhooksPerOwner already (a 422).
func (s *Store) Create(ctx context.Context, w domain.Webhook, secretEnc []byte) (domain.Webhook, error) {
	var out domain.Webhook
	err := pg.InTx(ctx, s.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		if err := s.q.WebhookLockOwner(ctx, tx, strconv.FormatInt(w.OwnerID, 10)); err != nil {
			return pg.Wrapf(err, "lock the webhooks of %d", w.OwnerID)
		}
		n, err := s.q.WebhookCountByOwner(ctx, tx, owner(w.OwnerID))
		if err != nil {
			return pg.Wrapf(err, "count the webhooks of %d", w.OwnerID)
		}
		if n >= domain.MaxWebhooksPerOwner {
			return domain.NewValidationError("webhook", fmt.Sprintf("at most %d endpoints per owner; delete one first", domain.MaxWebhooksPerOwner))
		}
		r, err := s.q.WebhookInsert(ctx, tx, dao.WebhookInsertParams{OwnerID: owner(w.OwnerID), Url: w.URL, Events: w.Events, SecretEnc: secretEnc})
		if err != nil {
			return pg.Wrapf(err, "insert a webhook")
		}
		out = webhookOf(r)
		return nil
	})
	return out, err
}

// Get returns an endpoint and its encrypted secret.
func (s *Store) Get(ctx context.Context, id int64) (domain.Webhook, []byte, error) {
	r, err := s.q.WebhookGet(ctx, s.pool, id)
	if err != nil {
		return domain.Webhook{}, nil, pg.Wrapf(err, "get webhook %d", id)
	}
	return webhookOf(r), r.SecretEnc, nil
}

// List returns an owner's endpoints (0: the site's), oldest first.
func (s *Store) List(ctx context.Context, ownerID int64) ([]domain.Webhook, error) {
	rows, err := s.q.WebhookListByOwner(ctx, s.pool, owner(ownerID))
	if err != nil {
		return nil, pg.Wrapf(err, "list the webhooks of %d", ownerID)
	}
	out := make([]domain.Webhook, len(rows))
	for i, r := range rows {
		out[i] = webhookOf(r)
	}
	return out, nil
}

// Update changes an endpoint's url, events and active flag.
func (s *Store) Update(ctx context.Context, w domain.Webhook) (domain.Webhook, error) {
	r, err := s.q.WebhookUpdate(ctx, s.pool, dao.WebhookUpdateParams{ID: w.ID, Url: w.URL, Events: w.Events, Active: w.Active})
	if err != nil {
		return domain.Webhook{}, pg.Wrapf(err, "update webhook %d", w.ID)
	}
	return webhookOf(r), nil
}

// Delete removes an endpoint and its deliveries (their jobs find nothing and end).
func (s *Store) Delete(ctx context.Context, id int64) error {
	n, err := s.q.WebhookDelete(ctx, s.pool, id)
	if err != nil {
		return pg.Wrapf(err, "delete webhook %d", id)
	}
	if n == 0 {
		return fmt.Errorf("webhook %d: %w", id, domain.ErrNotFound)
	}
	return nil
}

// Add adds one delivery to one endpoint (a ping, a redelivery), at the end of its line.
func (s *Store) Add(ctx context.Context, webhookID int64, eventID, eventType, body string) error {
	return pg.InTx(ctx, s.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		_, err := s.addIn(ctx, tx, webhookID, eventID, eventType, body)
		return err
	})
}

// addIn numbers the delivery under the endpoint's row lock and, when it is the endpoint's lowest
// pending one, enqueues its job. Holding the lock, a finishing delivery and a new one cannot both
// miss the other: the finisher enqueues the next it sees, the newcomer enqueues itself when none is
// ahead of it.
func (s *Store) addIn(ctx context.Context, tx *pg.Tx, webhookID int64, eventID, eventType, body string) (bool, error) {
	seq, err := s.q.WebhookNextSeq(ctx, tx, webhookID)
	if err != nil {
		return false, pg.Wrapf(err, "number a delivery of webhook %d", webhookID)
	}
	if !seq.Active {
		return false, nil
	}
	id, err := s.q.WebhookDeliveryInsert(ctx, tx, dao.WebhookDeliveryInsertParams{
		WebhookID: webhookID, Seq: seq.NextSeq, EventID: eventID, EventType: eventType, Body: body})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // delivered to this endpoint already
	}
	if err != nil {
		return false, pg.Wrapf(err, "insert a delivery of webhook %d", webhookID)
	}
	return true, s.enqueueHeadIn(ctx, tx, webhookID, id)
}

// enqueueHeadIn enqueues the job of the endpoint's lowest pending delivery, if it is only (or
// is) the one given (0: any), in tx. The job's unique key makes enqueueing it twice a no-op.
func (s *Store) enqueueHeadIn(ctx context.Context, tx *pg.Tx, webhookID, only int64) error {
	head, err := s.q.WebhookDeliveryHead(ctx, tx, webhookID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return pg.Wrapf(err, "find the next delivery of webhook %d", webhookID)
	}
	if only != 0 && head != only {
		return nil // an earlier delivery is pending: finishing it enqueues this one
	}
	payload, _ := json.Marshal(map[string]int64{"delivery": head})
	_, err = s.jobs.EnqueueIn(ctx, tx, domain.NewJob{
		Queue: domain.WebhookQueue, Kind: domain.WebhookJobKind, Payload: payload, MaxAttempts: domain.WebhookRetry.MaxAttempts,
		UniqueKey: "delivery:" + strconv.FormatInt(head, 10),
	})
	return err
}

func deliveryOf(r dao.WebhookDelivery) domain.WebhookDelivery {
	d := domain.WebhookDelivery{ID: r.ID, WebhookID: r.WebhookID, Seq: r.Seq, EventID: r.EventID, EventType: r.EventType, Body: r.Body,
		Status: domain.WebhookDeliveryStatus(r.Status), Attempts: int(r.Attempts), StatusCode: int(r.StatusCode.Int32),
		LatencyMs: int(r.LatencyMs.Int32), Response: r.Response, Error: r.Error, CreatedAt: r.CreatedAt}
	if r.AttemptedAt.Valid {
		t := r.AttemptedAt.Time
		d.AttemptedAt = &t
	}
	return d
}

// Delivery returns one delivery.
func (s *Store) Delivery(ctx context.Context, id int64) (domain.WebhookDelivery, error) {
	r, err := s.q.WebhookDeliveryGet(ctx, s.pool, id)
	if err != nil {
		return domain.WebhookDelivery{}, pg.Wrapf(err, "get delivery %d", id)
	}
	return deliveryOf(r), nil
}

// ForAttempt returns a delivery with its endpoint (url, active) and the endpoint's encrypted
// secret, in one statement: what an attempt needs.
func (s *Store) ForAttempt(ctx context.Context, id int64) (domain.WebhookDelivery, domain.Webhook, []byte, error) {
	r, err := s.q.WebhookDeliveryForAttempt(ctx, s.pool, id)
	if err != nil {
		return domain.WebhookDelivery{}, domain.Webhook{}, nil, pg.Wrapf(err, "get delivery %d", id)
	}
	d := deliveryOf(r.WebhookDelivery)
	return d, domain.Webhook{ID: d.WebhookID, URL: r.Url, Active: r.Active}, r.SecretEnc, nil
}

// Deliveries returns up to limit deliveries of an endpoint numbered below beforeSeq (0: from
// the newest), newest first, each with its attempts (History, newest first), in two statements.
func (s *Store) Deliveries(ctx context.Context, webhookID, beforeSeq int64, limit int) ([]domain.WebhookDelivery, error) {
	if beforeSeq <= 0 {
		beforeSeq = math.MaxInt64
	}
	rows, err := s.q.WebhookDeliveryList(ctx, s.pool, dao.WebhookDeliveryListParams{WebhookID: webhookID, BeforeSeq: beforeSeq, Lim: int32(limit)})
	if err != nil {
		return nil, pg.Wrapf(err, "list the deliveries of webhook %d", webhookID)
	}
	out := make([]domain.WebhookDelivery, len(rows))
	ids := make([]int64, 0, len(rows))
	at := make(map[int64]int, len(rows))
	for i, r := range rows {
		out[i] = deliveryOf(r)
		out[i].History = []domain.WebhookDeliveryAttempt{}
		if r.Attempts > 0 {
			ids = append(ids, r.ID)
			at[r.ID] = i
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	// The page's attempts in one statement: the page costs its size, not a query per delivery.
	attempts, err := s.q.WebhookAttemptsOf(ctx, s.pool, dao.WebhookAttemptsOfParams{Ids: ids, Lim: int32(len(ids) * domain.WebhookRetry.MaxAttempts)})
	if err != nil {
		return nil, pg.Wrapf(err, "list the attempts of webhook %d's deliveries", webhookID)
	}
	for _, a := range attempts {
		d := &out[at[a.DeliveryID]]
		d.History = append(d.History, domain.WebhookDeliveryAttempt{Attempt: int(a.Attempt), StatusCode: int(a.StatusCode.Int32),
			LatencyMs: int(a.LatencyMs), Response: a.Response, Error: a.Error, At: a.At})
	}
	return out, nil
}

// Record records one attempt in one unit of work: its outcome on the delivery (the last attempt's
// fields) and in webhook_attempts (a row per attempt, same statement); on the endpoint,
// the end of its failing time (a success) or its start; an endpoint failing for
// domain.WebhookDisableAfter is disabled (its owner notified) and the delivery is dead; a
// delivery that is done (delivered or dead) makes way for the endpoint's next.
func (s *Store) Record(ctx context.Context, a domain.WebhookAttempt) (domain.WebhookAttemptResult, error) {
	if a.Answer.OK() {
		return s.recordSuccess(ctx, a)
	}
	var res domain.WebhookAttemptResult
	err := pg.InTx(ctx, s.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		res = domain.WebhookAttemptResult{}
		w, err := s.q.WebhookLock(ctx, tx, a.WebhookID)
		if err != nil {
			return pg.Wrapf(err, "lock webhook %d", a.WebhookID)
		}
		status := domain.WebhookDelivered
		if a.Answer.OK() {
			// Only an endpoint that was failing has a failing time to forget (one statement less
			// per delivery in the common case).
			if w.FailingSince.Valid {
				if err := s.q.WebhookSucceeded(ctx, tx, a.WebhookID); err != nil {
					return pg.Wrapf(err, "record the success of webhook %d", a.WebhookID)
				}
			}
		} else {
			since, err := s.q.WebhookFailed(ctx, tx, dao.WebhookFailedParams{ID: a.WebhookID, Now: a.At})
			if err != nil {
				return pg.Wrapf(err, "record the failure of webhook %d", a.WebhookID)
			}
			status = domain.WebhookPending
			if a.Last {
				status = domain.WebhookDead
			}
			if w.Active && domain.WebhookFailedTooLong(since, a.At) {
				if err := s.disableIn(ctx, tx, w); err != nil {
					return err
				}
				status, res.Disabled = domain.WebhookDead, true
			}
		}
		errText := ""
		if a.Answer.Err != nil {
			errText = a.Answer.Err.Error()
		} else if !a.Answer.OK() {
			errText = "answered " + strconv.Itoa(a.Answer.StatusCode)
		}
		got, err := s.q.WebhookDeliveryRecord(ctx, tx, dao.WebhookDeliveryRecordParams{
			ID: a.DeliveryID, Status: string(status), StatusCode: pgtype.Int4{Int32: int32(a.Answer.StatusCode), Valid: a.Answer.StatusCode != 0},
			LatencyMs: int32(min(a.Answer.Latency.Milliseconds(), math.MaxInt32)), Response: domain.WebhookAnswerKept(a.Answer.Body),
			Error: domain.WebhookAnswerKept([]byte(errText)),
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("delivery %d: %w", a.DeliveryID, domain.ErrNotFound)
		}
		if err != nil {
			return pg.Wrapf(err, "record an attempt of delivery %d", a.DeliveryID)
		}
		res.Status = domain.WebhookDeliveryStatus(got)
		if res.Status != domain.WebhookPending {
			return s.enqueueHeadIn(ctx, tx, a.WebhookID, 0)
		}
		return nil
	})
	return res, err
}

// recordSuccess records a 2xx attempt in one autocommitted call (webhook_record_success,
// migration 00039): the same steps as Record's unit of work, in the same order, in one round
// trip instead of seven; PostgreSQL's CPU per delivery was the webhooks' limit.
func (s *Store) recordSuccess(ctx context.Context, a domain.WebhookAttempt) (domain.WebhookAttemptResult, error) {
	status, err := s.q.WebhookDeliveryRecordSuccess(ctx, s.pool, dao.WebhookDeliveryRecordSuccessParams{
		ID: a.DeliveryID, WebhookID: a.WebhookID, StatusCode: int32(a.Answer.StatusCode),
		LatencyMs: int32(min(a.Answer.Latency.Milliseconds(), math.MaxInt32)), Response: domain.WebhookAnswerKept(a.Answer.Body),
		MaxAttempts: int32(domain.WebhookRetry.MaxAttempts), Traceparent: pg.TraceParent(ctx),
	})
	if err != nil {
		return domain.WebhookAttemptResult{}, pg.Wrapf(err, "record an attempt of delivery %d", a.DeliveryID)
	}
	if status == "" {
		return domain.WebhookAttemptResult{}, fmt.Errorf("delivery %d of webhook %d: %w", a.DeliveryID, a.WebhookID, domain.ErrNotFound)
	}
	return domain.WebhookAttemptResult{Status: domain.WebhookDeliveryStatus(status)}, nil
}

// Skip ends a pending delivery of an endpoint that is no longer active, unattempted, and makes way
// for the next (which ends the same way).
func (s *Store) Skip(ctx context.Context, webhookID, deliveryID int64, why string) error {
	return pg.InTx(ctx, s.pool, pg.DefaultRetry, func(tx *pg.Tx) error {
		if _, err := s.q.WebhookLock(ctx, tx, webhookID); err != nil {
			return pg.Wrapf(err, "lock webhook %d", webhookID)
		}
		if err := s.q.WebhookDeliveryKill(ctx, tx, dao.WebhookDeliveryKillParams{ID: deliveryID, Error: why}); err != nil {
			return pg.Wrapf(err, "end delivery %d", deliveryID)
		}
		return s.enqueueHeadIn(ctx, tx, webhookID, 0)
	})
}

// disableIn turns an endpoint off and tells its owner (the site's endpoints have none).
func (s *Store) disableIn(ctx context.Context, tx *pg.Tx, w dao.Webhook) error {
	if _, err := s.q.WebhookDisable(ctx, tx, w.ID); err != nil {
		return pg.Wrapf(err, "disable webhook %d", w.ID)
	}
	if !w.OwnerID.Valid {
		return nil
	}
	err := s.q.WebhookNotifyDisabled(ctx, tx, dao.WebhookNotifyDisabledParams{
		UserID: w.OwnerID.Int64, EventID: "webhook-disabled-" + strconv.FormatInt(w.ID, 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 10),
		Detail: "Your webhook " + w.Url + " failed for 3 days and was disabled; turn it on again with PATCH /api/user/webhooks/" + strconv.FormatInt(w.ID, 10) + " {\"webhook\": {\"active\": true}}.",
	})
	return pg.Wrapf(err, "notify the owner of webhook %d", w.ID)
}
