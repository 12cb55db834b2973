package cache

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// NotificationHub fans "these users were just notified" out to every instance through one Redis
// pub/sub channel (the keyspace's "notifications"), published after the notifications' COMMIT
// (repository.NotificationPublisher). Each instance delivers a message to the live streams it
// holds for those users (Watch). A message that carries the notifications themselves
// (NotifiedWith: a follower fan-out) hands each stream its own, ready to write without a query;
// one that names only the users (Notified: notices) makes the stream read its new notifications
// from PostgreSQL. Either way a lost message delays a notification (until the stream's next
// heartbeat catch-up, which reads PostgreSQL) but never loses or duplicates one. Whenever the
// subscription is (re)confirmed every local stream is woken to read PostgreSQL: messages
// published while it was down may have been missed.
//
// It also keeps the fleet-wide count of each user's open streams (Acquire) and the single-use
// tickets of EventSource clients (PutTicket, TakeTicket).
type NotificationHub struct {
	rdb     redis.UniversalClient
	ks      Keyspace
	channel string
	log     *slog.Logger

	rev *Revocations // nil: no revocation wake-ups (tests)

	mu      sync.Mutex
	watches map[int64]map[*watcher]struct{}
	// rechecks are the streams to recheck when a session is revoked, by the session's mark key.
	rechecks map[string]map[chan struct{}]struct{}

	subscribed atomic.Bool
	psMu       sync.Mutex
	ps         *redis.PubSub // the current subscription, closed by the cleanup to end a blocked receive
	stopped    bool
	cancel     context.CancelFunc
	done       chan struct{}

	Stats NotificationHubStats
}

// NotificationHubStats counts what a hub did. Values only grow.
type NotificationHubStats struct {
	Published     atomic.Int64
	PublishFailed atomic.Int64
	Received      atomic.Int64
	Woken         atomic.Int64 // local streams woken by a message
}

// notifiedMsg is a message on the channel. Users are the users notified; Items, when present,
// are their notifications, rendered (a release that knows only Users wakes those users' streams
// to read PostgreSQL, as it always did).
type notifiedMsg struct {
	Users []int64        `json:"u"`
	Items []notifiedItem `json:"n,omitempty"`
}

// notifiedItem is one notification as a message carries it: its user and what
// GET /api/user/notifications renders.
type notifiedItem struct {
	UserID        int64     `json:"u"`
	ID            int64     `json:"i"`
	Kind          string    `json:"k"`
	ActorUsername string    `json:"a,omitempty"`
	ArticleSlug   string    `json:"s,omitempty"`
	ArticleTitle  string    `json:"t,omitempty"`
	Detail        string    `json:"d,omitempty"`
	CreatedAt     time.Time `json:"c"`
}

// watchCarryMax bounds the notifications a stream's watch holds between two takes; beyond, the
// stream reads PostgreSQL instead (it has fallen behind).
const watchCarryMax = 100

// watcher is one stream's watch of a user: its wake-up, and what the messages carried for it
// since the stream last took them (guarded by the hub's mu).
type watcher struct {
	ch    chan struct{}
	items []domain.Notification
	poll  bool // a wake-up carried nothing (or too much): read PostgreSQL
}

// NewNotificationHub subscribes to the notification channel of ks until the cleanup runs. A
// revocation of a session whose streams it watches makes them recheck their session at once: one
// this process marks (rev), or one another instance marks, whose key arrives through b as a tier
// of its own (b, rev nil: only the heartbeats recheck).
func NewNotificationHub(rdb redis.UniversalClient, ks Keyspace, b *Broadcaster, rev *Revocations, log *slog.Logger) (*NotificationHub, func()) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &NotificationHub{rdb: rdb, ks: ks, channel: ks.Key("notifications"), log: log, rev: rev,
		watches: map[int64]map[*watcher]struct{}{}, rechecks: map[string]map[chan struct{}]struct{}{},
		cancel: cancel, done: make(chan struct{})}
	if rev != nil {
		rev.listen(func(key string) { h.revoked(key) })
		if b != nil {
			b.register(revocationTier{h})
		}
	}
	go h.run(ctx)
	return h, h.stop
}

// stop ends the subscription and waits for its goroutine.
func (h *NotificationHub) stop() {
	h.psMu.Lock()
	h.stopped = true
	h.cancel()
	if h.ps != nil {
		_ = h.ps.Close()
	}
	h.psMu.Unlock()
	<-h.done
}

// notifiedPerMessage bounds the users (or notifications) of one message.
const notifiedPerMessage = 1000

// Notified publishes userIDs (after COMMIT): their streams read their new notifications from
// PostgreSQL. A failed PUBLISH is logged and counted: the streams of those users catch up at
// their next heartbeat.
func (h *NotificationHub) Notified(ctx context.Context, userIDs []int64) {
	for len(userIDs) > 0 {
		n := min(len(userIDs), notifiedPerMessage)
		h.publish(ctx, notifiedMsg{Users: userIDs[:n]})
		userIDs = userIDs[n:]
	}
}

// NotifiedWith publishes items, each a notification of its user just committed, rendered: the
// streams of those users write them without a query. A failed PUBLISH is logged and counted, as
// Notified's.
func (h *NotificationHub) NotifiedWith(ctx context.Context, items []domain.UserNotification) {
	for len(items) > 0 {
		n := min(len(items), notifiedPerMessage)
		msg := notifiedMsg{Users: make([]int64, 0, n), Items: make([]notifiedItem, n)}
		for i, it := range items[:n] {
			if i == 0 || it.UserID != items[i-1].UserID {
				msg.Users = append(msg.Users, it.UserID)
			}
			msg.Items[i] = notifiedItem{UserID: it.UserID, ID: it.ID, Kind: it.Kind, ActorUsername: it.ActorUsername,
				ArticleSlug: it.ArticleSlug, ArticleTitle: it.ArticleTitle, Detail: it.Detail, CreatedAt: it.CreatedAt}
		}
		h.publish(ctx, msg)
		items = items[n:]
	}
}

func (h *NotificationHub) publish(ctx context.Context, msg notifiedMsg) {
	body, _ := json.Marshal(msg)
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	err := h.rdb.Publish(pctx, h.channel, body).Err()
	cancel()
	if err != nil {
		h.Stats.PublishFailed.Add(1)
		h.log.WarnContext(ctx, "notification publish failed: the streams catch up at their next heartbeat", "err", err)
		return
	}
	h.Stats.Published.Add(1)
}

// Watch returns a channel that receives a value (coalesced) whenever userID may have new
// notifications, the function that takes what arrived since it was last called (the
// notifications the messages carried, oldest message first; poll true when PostgreSQL must be
// read instead: a message named the user without its notifications, or the subscription was
// re-established), and the function that stops watching.
func (h *NotificationHub) Watch(userID int64) (<-chan struct{}, func() ([]domain.Notification, bool), func()) {
	w := &watcher{ch: make(chan struct{}, 1)}
	h.mu.Lock()
	set := h.watches[userID]
	if set == nil {
		set = map[*watcher]struct{}{}
		h.watches[userID] = set
	}
	set[w] = struct{}{}
	h.mu.Unlock()
	take := func() ([]domain.Notification, bool) {
		h.mu.Lock()
		defer h.mu.Unlock()
		items, poll := w.items, w.poll
		w.items, w.poll = nil, false
		return items, poll
	}
	return w.ch, take, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.watches[userID], w)
		if len(h.watches[userID]) == 0 {
			delete(h.watches, userID)
		}
	}
}

// WatchSession returns a channel that receives a value when sessionID may have been revoked
// (the stream rechecks its session then), and the function that stops watching. A credential
// without a session (an API key) is rechecked at the heartbeats only: nil channel.
func (h *NotificationHub) WatchSession(sessionID string) (<-chan struct{}, func()) {
	if sessionID == "" || h.rev == nil {
		return nil, func() {}
	}
	key := h.rev.markKey(sessionID)
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	set := h.rechecks[key]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		h.rechecks[key] = set
	}
	set[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.rechecks[key], ch)
		if len(h.rechecks[key]) == 0 {
			delete(h.rechecks, key)
		}
	}
}

// revoked wakes the rechecks of the session whose mark key is key.
func (h *NotificationHub) revoked(keys ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, key := range keys {
		for ch := range h.rechecks[key] {
			wake(ch)
		}
	}
}

// revocationTier receives the keys other instances changed (the broadcaster's tiers do): a
// revocation's mark key among them rechecks that session's streams; a flush (messages may have
// been missed) rechecks every stream.
type revocationTier struct{ h *NotificationHub }

func (t revocationTier) delete(keys ...string) { t.h.revoked(keys...) }

func (t revocationTier) flush() {
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	for _, set := range t.h.rechecks {
		for ch := range set {
			wake(ch)
		}
	}
}

// Subscribed reports whether the channel's subscription is confirmed.
func (h *NotificationHub) Subscribed() bool { return h.subscribed.Load() }

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default: // one is pending already
	}
}

// deliver hands each local stream of msg's users what msg carries for it and wakes it: the
// notifications when msg carries them, else a read of PostgreSQL.
func (h *NotificationHub) deliver(msg notifiedMsg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(msg.Items) == 0 {
		for _, id := range msg.Users {
			for w := range h.watches[id] {
				h.Stats.Woken.Add(1)
				w.poll = true
				wake(w.ch)
			}
		}
		return
	}
	for _, it := range msg.Items {
		n := domain.Notification{ID: it.ID, Kind: it.Kind, ActorUsername: it.ActorUsername, ArticleSlug: it.ArticleSlug,
			ArticleTitle: it.ArticleTitle, Detail: it.Detail, CreatedAt: it.CreatedAt}
		for w := range h.watches[it.UserID] {
			h.Stats.Woken.Add(1)
			if len(w.items) < watchCarryMax {
				w.items = append(w.items, n)
			} else {
				w.poll = true
			}
			wake(w.ch)
		}
	}
}

func (h *NotificationHub) wakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, set := range h.watches {
		for w := range set {
			w.poll = true
			wake(w.ch)
		}
	}
}

// run keeps the subscription up until ctx ends, resubscribing after a growing pause.
func (h *NotificationHub) run(ctx context.Context) {
	defer close(h.done)
	backoff := 100 * time.Millisecond
	for {
		err := h.session(ctx)
		h.subscribed.Store(false)
		if ctx.Err() != nil {
			return
		}
		h.log.Warn("notification channel subscription lost; resubscribing", "channel", h.channel, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (h *NotificationHub) session(ctx context.Context) error {
	ps := h.rdb.Subscribe(ctx, h.channel)
	defer func() { _ = ps.Close() }()
	h.psMu.Lock()
	if h.stopped {
		h.psMu.Unlock()
		return context.Canceled
	}
	h.ps = ps
	h.psMu.Unlock()
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, 2*time.Second)
		if err != nil {
			if !isTimeout(err) || ctx.Err() != nil {
				return err
			}
			if pinged {
				return errors.New("no answer to a ping")
			}
			if err := ps.Ping(ctx); err != nil {
				return err
			}
			pinged = true
			continue
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Message:
			var n notifiedMsg
			if json.Unmarshal([]byte(m.Payload), &n) != nil {
				h.wakeAll()
				continue
			}
			h.Stats.Received.Add(1)
			h.deliver(n)
		case *redis.Subscription:
			if m.Kind == "subscribe" && m.Channel == h.channel {
				h.subscribed.Store(true)
				h.wakeAll() // anything published while down may have been missed
			}
		}
	}
}

// streamSlotAcquire: KEYS[1] the user's sorted set of open streams (member: stream id, score:
// expiry in ms); ARGV: now ms, expiry ms, the cap, the stream id. Drops the expired members
// (streams of a crashed instance), then adds this one if fewer than the cap remain. 1: added.
var streamSlotAcquire = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1`)

func (h *NotificationHub) slotKey(userID int64) string {
	return h.ks.Key("streams", strconv.FormatInt(userID, 10))
}

// Acquire counts one more open stream of userID across the fleet unless max are open already
// (false). The slot lives until ttl unless Refresh extends it; Release frees it.
func (h *NotificationHub) Acquire(ctx context.Context, userID int64, streamID string, maxPerUser int, ttl time.Duration) (bool, error) {
	now := time.Now()
	n, err := streamSlotAcquire.Run(ctx, h.rdb, []string{h.slotKey(userID)},
		now.UnixMilli(), now.Add(ttl).UnixMilli(), maxPerUser, streamID).Int()
	return n == 1, err
}

// Refresh extends the slot of streamID to ttl from now.
func (h *NotificationHub) Refresh(ctx context.Context, userID int64, streamID string, ttl time.Duration) error {
	exp := time.Now().Add(ttl).UnixMilli()
	pipe := h.rdb.Pipeline()
	pipe.ZAddXX(ctx, h.slotKey(userID), redis.Z{Score: float64(exp), Member: streamID})
	pipe.PExpireAt(ctx, h.slotKey(userID), time.UnixMilli(exp))
	_, err := pipe.Exec(ctx)
	return err
}

// Release frees the slot of streamID.
func (h *NotificationHub) Release(ctx context.Context, userID int64, streamID string) error {
	return h.rdb.ZRem(ctx, h.slotKey(userID), streamID).Err()
}

// PutTicket stores value under the ticket's hash for ttl.
func (h *NotificationHub) PutTicket(ctx context.Context, hash string, value []byte, ttl time.Duration) error {
	return h.rdb.Set(ctx, h.ks.Key("streamticket", hash), value, ttl).Err()
}

// TakeTicket returns and deletes what is stored under the ticket's hash; ok false: nothing (never
// issued, expired or used).
func (h *NotificationHub) TakeTicket(ctx context.Context, hash string) (value []byte, ok bool, err error) {
	v, err := h.rdb.GetDel(ctx, h.ks.Key("streamticket", hash)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}
