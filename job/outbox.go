package job

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/events"
)

// OutboxStore is what the relay needs of the outbox table.
type OutboxStore interface {
	Claim(ctx context.Context, owner string, n int, lease time.Duration) ([]domain.OutboxEvent, error)
	MarkPublished(ctx context.Context, id, generation int64) (bool, error)
	Release(ctx context.Context, evs []domain.OutboxEvent, cause string) error
	Redrive(ctx context.Context, p domain.RedrivePolicy, n int) ([]domain.OutboxRedriven, error)
}

// OutboxEntryVersion is the schema version of the outbox stream's entries (domain.MessageVersion):
// "v", "id", "topic", "aggregate", "payload" (its own version inside), "traceparent". Version 1
// added "v"; version 0 is the same fields without it.
const OutboxEntryVersion domain.MessageVersion = 1

// StreamAdder appends entries to a stream (events.StreamWriter in production).
type StreamAdder interface {
	Add(ctx context.Context, stream string, values map[string]any) error
}

// RedrivePolicy says when a published event its consumer has not applied is published again,
// and when the outbox gives up on it.
type RedrivePolicy = domain.RedrivePolicy

// RelayConfig tunes the outbox relay.
type RelayConfig struct {
	Stream string
	Batch  int
	Lease  time.Duration
	Poll   time.Duration
	// Redrive decides when a published event its consumer has not applied is published again;
	// RedriveEvery is how often this relay looks for such events (0: never).
	Redrive      RedrivePolicy
	RedriveEvery time.Duration
}

// RelayStats counts the relay's work. Values only grow.
type RelayStats struct{ Published, LostLeases, Failures, Redriven, Dead atomic.Int64 }

// Relay moves outbox events to a Redis stream, at least once: it claims a batch under a fenced
// lease, appends each event (carrying its id) to the stream, then marks it published. A crash
// anywhere in between re-delivers the event later; consumers deduplicate by its id.
//
// Publishing does not end an event's life: PostgreSQL keeps it until its consumer marks it
// applied. An event published longer ago than the redelivery window and still not applied (Redis
// restarted empty, the consumer dead-lettered it, or it keeps failing) is re-driven: made pending
// again, one attempt more, after a backoff; the attempt that reaches the limit makes it dead.
type Relay struct {
	store       OutboxStore
	stream      StreamAdder
	cfg         RelayConfig
	owner       string
	now         func() time.Time
	log         *slog.Logger
	wake        chan struct{}
	lastRedrive time.Time
	Stats       RelayStats
}

// NewRelay returns a relay.
func NewRelay(store OutboxStore, stream StreamAdder, cfg RelayConfig, owner string, now func() time.Time, log *slog.Logger) *Relay {
	return &Relay{store: store, stream: stream, cfg: cfg, owner: owner, now: now, log: log.With("worker", "outbox-relay"), wake: make(chan struct{}, 1)}
}

// Wake makes an idle relay look for events now (LISTEN/NOTIFY).
func (r *Relay) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run relays until ctx ends.
func (r *Relay) Run(ctx context.Context) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for ctx.Err() == nil {
		if r.cfg.RedriveEvery > 0 && r.now().Sub(r.lastRedrive) >= r.cfg.RedriveEvery {
			if _, err := r.RedriveOnce(ctx); err != nil && ctx.Err() == nil {
				r.Stats.Failures.Add(1)
				r.log.Warn("outbox re-drive pass failed", "err", err)
			}
			r.lastRedrive = r.now()
		}
		n, err := r.RelayOnce(ctx)
		if err != nil && ctx.Err() == nil {
			r.Stats.Failures.Add(1)
			r.log.Warn("outbox relay pass failed", "err", err)
		}
		if n == r.cfg.Batch && err == nil {
			continue
		}
		t.Reset(r.cfg.Poll)
		select {
		case <-ctx.Done():
		case <-r.wake:
		case <-t.C:
		}
	}
	return nil
}

// RelayOnce relays one batch and returns how many events it claimed.
func (r *Relay) RelayOnce(ctx context.Context) (int, error) {
	evs, err := r.store.Claim(ctx, r.owner, r.cfg.Batch, r.cfg.Lease)
	if err != nil {
		return 0, err
	}
	for i, ev := range evs {
		published, err := r.publish(ctx, ev)
		if errors.Is(err, errStreamWrite) {
			// The rest of the batch goes back at once, for the next pass after Poll (a relay that
			// dies here leaves them to the end of their lease). Not an attempt: Redis failed,
			// not the event.
			if rerr := r.store.Release(context.WithoutCancel(ctx), evs[i:], err.Error()); rerr != nil {
				r.log.Warn("could not give back outbox leases; they end with the lease", "err", rerr)
			}
			return len(evs), err
		}
		if err != nil {
			return len(evs), err
		}
		if !published {
			r.Stats.LostLeases.Add(1)
			r.log.Warn("outbox event was re-claimed by another relay (or applied) before it was marked; it may be delivered twice", "event", ev.ID)
			continue
		}
		r.Stats.Published.Add(1)
	}
	return len(evs), nil
}

// errStreamWrite marks a failed XADD (Redis at fault, not the event).
var errStreamWrite = errors.New("stream write failed")

// publish appends one event to the stream and marks it published, in a span that continues the
// trace of the request that wrote the event; the entry carries this span's traceparent, so the
// consumer's work on it joins the same trace. It reports false when the lease was lost.
func (r *Relay) publish(ctx context.Context, ev domain.OutboxEvent) (bool, error) {
	ctx, span := tracer().Start(events.WithTraceParent(ctx, ev.TraceParent), "outbox publish "+ev.Topic,
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(
			attribute.String("messaging.system", "redis"),
			attribute.String("messaging.destination.name", r.cfg.Stream),
			attribute.String("messaging.message.id", ev.EventID()),
			attribute.Int64("inkwell.outbox.id", ev.ID),
		))
	defer span.End()
	values := map[string]any{
		"v": OutboxEntryVersion.String(), "id": ev.EventID(), "topic": ev.Topic, "aggregate": strconv.FormatInt(ev.AggregateID, 10),
		"payload": string(ev.Payload),
	}
	if tp := events.TraceParent(ctx); tp != "" {
		values[events.TraceParentField] = tp
	}
	if err := r.stream.Add(ctx, r.cfg.Stream, values); err != nil {
		span.SetStatus(codes.Error, err.Error())
		return false, fmt.Errorf("%w: %w", errStreamWrite, err)
	}
	ok, err := r.store.MarkPublished(ctx, ev.ID, ev.Generation)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return ok, err
}

// RedriveOnce re-drives published events that were not applied within the redelivery window,
// batch by batch until a batch comes back short, and returns how many it made pending again.
// Every relay of the fleet may run it at once: each batch locks its rows SKIP LOCKED.
func (r *Relay) RedriveOnce(ctx context.Context) (int, error) {
	pending := 0
	for {
		evs, err := r.store.Redrive(ctx, r.cfg.Redrive, r.cfg.Batch)
		if err != nil {
			return pending, err
		}
		for _, ev := range evs {
			if ev.Status == domain.OutboxDead {
				r.Stats.Dead.Add(1)
				r.log.Error("outbox event was never applied and ran out of attempts; it is dead (see `inkwell outbox list --status dead`)",
					"event", ev.ID, "attempts", ev.Attempts)
				continue
			}
			pending++
			r.Stats.Redriven.Add(1)
			r.log.Warn("outbox event was published but not applied within the redelivery window; publishing it again",
				"event", ev.ID, "attempt", ev.Attempts)
		}
		if len(evs) < r.cfg.Batch {
			return pending, nil
		}
	}
}

// ArticleEventApplier applies one article event (the notification service).
type ArticleEventApplier interface {
	OnArticleEvent(ctx context.Context, consumer, eventID, topic string, ev domain.ArticleEvent) error
}

// GroupNotifications is the consumer group (and inbox consumer name) that turns article events
// into notifications.
const GroupNotifications = "notifications"

// NotificationsHandler returns the outbox stream handler that notifies followers. Each event is
// applied in its own transaction with its inbox record, so a batch that fails halfway is retried
// without repeating what succeeded.
func NotificationsHandler(svc ArticleEventApplier, log *slog.Logger) events.Handler {
	return func(ctx context.Context, msgs []events.Message) error {
		for _, m := range msgs {
			id, topic, ev, err := decodeOutboxEntry(m.Values)
			if err != nil {
				// It can never be applied: retrying it would only delay the rest. Its row stays
				// unapplied, so the re-drive publishes it again and, failing that, marks it dead.
				log.WarnContext(ctx, "skipping malformed outbox entry", "entry", m.ID, "err", err)
				continue
			}
			if err := applyArticleEvent(ctx, svc, m, id, topic, ev); err != nil {
				return err
			}
		}
		return nil
	}
}

// decodeOutboxEntry reads an outbox stream entry of this release or the one before it.
func decodeOutboxEntry(values map[string]any) (id, topic string, ev domain.ArticleEvent, err error) {
	str := func(k string) string { s, _ := values[k].(string); return s }
	v, ok := domain.ParseMessageVersion(str("v"))
	switch {
	case !ok:
		return "", "", ev, fmt.Errorf("%w: outbox entry version %q", domain.ErrUnreadableMessage, str("v"))
	case !OutboxEntryVersion.Reads(v):
		return "", "", ev, fmt.Errorf("%w: outbox entry of version %d, this release reads %d and %d",
			domain.ErrUnreadableMessage, v, OutboxEntryVersion-1, OutboxEntryVersion)
	}
	id, topic = str("id"), str("topic")
	if id == "" {
		return "", "", ev, fmt.Errorf("%w: outbox entry without an id", domain.ErrUnreadableMessage)
	}
	ev, err = domain.DecodeArticleEvent([]byte(str("payload")))
	return id, topic, ev, err
}

// applyArticleEvent applies one entry in its own span, a child of the relay's publish span (and
// so in the trace of the request that published the article).
func applyArticleEvent(ctx context.Context, svc ArticleEventApplier, m events.Message, id, topic string, ev domain.ArticleEvent) error {
	ctx, span := events.StartEntry(ctx, "notify followers "+topic, m)
	defer span.End()
	span.SetAttributes(attribute.String("inkwell.event.id", id), attribute.Int64("inkwell.article.id", ev.ArticleID))
	err := svc.OnArticleEvent(ctx, GroupNotifications, id, topic, ev)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}
