package service

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=notification_stream.go -destination=mocks/notification_stream_mock.go -package=mocks

// NotificationStreamRepository reads notifications by id for live streams.
type NotificationStreamRepository interface {
	// After returns userID's notifications with an id above afterID, oldest first, at most limit.
	After(ctx context.Context, userID, afterID int64, limit int) ([]domain.Notification, error)
	// LatestID is the id of userID's newest notification (0: none).
	LatestID(ctx context.Context, userID int64) (int64, error)
}

// NotificationSignals is the fleet-wide side of live streams (cache.NotificationHub): wake-ups
// when a user is notified on any instance, the per-user count of open streams, and tickets.
type NotificationSignals interface {
	// Watch returns the wake-up channel of userID's stream, the function taking what arrived
	// since its last call (the notifications the announcements carried; poll true when
	// PostgreSQL must be read instead), and the function that stops watching.
	Watch(userID int64) (wake <-chan struct{}, take func() (items []domain.Notification, poll bool), stop func())
	// WatchSession delivers a value when sessionID may have been revoked (nil channel: never).
	WatchSession(sessionID string) (<-chan struct{}, func())
	Acquire(ctx context.Context, userID int64, streamID string, maxPerUser int, ttl time.Duration) (bool, error)
	Refresh(ctx context.Context, userID int64, streamID string, ttl time.Duration) error
	Release(ctx context.Context, userID int64, streamID string) error
	PutTicket(ctx context.Context, hash string, value []byte, ttl time.Duration) error
	TakeTicket(ctx context.Context, hash string) ([]byte, bool, error)
}

// StreamSessions tells whether the credential a stream was opened with still holds
// (SessionService).
type StreamSessions interface {
	Authenticate(ctx context.Context, token string) (domain.Credential, error)
	StillValid(ctx context.Context, cred domain.Credential) error
}

// NotificationStreamConfig are the settings of live notification streams.
type NotificationStreamConfig struct {
	PerUser     int           // open streams per user across the fleet (429 beyond)
	PerInstance int           // open streams on this instance (429 beyond)
	Heartbeat   time.Duration // between heartbeats; each rechecks the session and catches up
	ReplayLimit int           // at most this many notifications replayed after Last-Event-ID
}

// DefaultNotificationStreamConfig: 5 per user, 1,000 per instance, a heartbeat every 25 s, a
// replay of at most 100.
func DefaultNotificationStreamConfig() NotificationStreamConfig {
	return NotificationStreamConfig{PerUser: 5, PerInstance: 1000, Heartbeat: 25 * time.Second, ReplayLimit: 100}
}

// TicketTTL is how long a stream ticket may wait for its use.
const TicketTTL = 30 * time.Second

// settleAfter is how long a sent notification's id is remembered: a notification whose unit of
// work committed more than this after one with a higher id could be missed by a live stream (the
// fan-out's transactions are short; see docs/API.md).
const settleAfter = 5 * time.Minute

// ErrTooManyStreams is an open refused by a cap (429).
var ErrTooManyStreams = errors.New("too many open notification streams")

// NotificationStreamService serves live notification streams: one per connection, fed by the
// fleet-wide wake-ups of NotificationSignals. A wake-up carries the new notifications (a follower
// fan-out's announcement) or makes the stream read them from PostgreSQL by id (a notice's, a
// resubscription); the heartbeat always reads PostgreSQL. So a missed wake-up delays and a
// repeated one changes nothing.
type NotificationStreamService struct {
	repo     NotificationStreamRepository
	signals  NotificationSignals
	sessions StreamSessions
	cfg      NotificationStreamConfig
	open     atomic.Int64
	now      func() time.Time
}

// NewNotificationStreamService returns the service; now is the clock.
func NewNotificationStreamService(repo NotificationStreamRepository, signals NotificationSignals, sessions StreamSessions, cfg NotificationStreamConfig,
	now func() time.Time) *NotificationStreamService {
	return &NotificationStreamService{repo: repo, signals: signals, sessions: sessions, cfg: cfg, now: now}
}

// Config returns the settings.
func (s *NotificationStreamService) Config() NotificationStreamConfig { return s.cfg }

// Open returns the number of streams open on this instance.
func (s *NotificationStreamService) Open() int64 { return s.open.Load() }

// NotificationStream is one open stream. It belongs to the goroutine serving its connection.
type NotificationStream struct {
	UserID int64
	// Wake receives a value when the user may have new notifications (Next then).
	Wake <-chan struct{}
	// Recheck receives a value when the stream's session may have been revoked, on any instance
	// (Heartbeat's check then); nil for an API key's stream, rechecked at the heartbeats only.
	Recheck <-chan struct{}

	id             string
	cred           domain.Credential
	token          string // the header's token (rechecked at each heartbeat); "" for a ticket's stream
	floor          int64  // no notification at or below it is sent
	sent           map[int64]time.Time
	take           func() ([]domain.Notification, bool)
	stop           func()
	unwatchSession func()
}

// Start opens a stream of cred's notifications: it counts against the caps, starts watching for
// wake-ups (first, so nothing committed from now on is missed), then returns what to send first:
// the notifications after lastEventID (hasLast) oldest first, at most ReplayLimit.
// token is the header's token, "" when the stream was opened with a ticket.
func (s *NotificationStreamService) Start(ctx context.Context, cred domain.Credential, token string, lastEventID int64, hasLast bool) (*NotificationStream, []domain.Notification, error) {
	if s.open.Add(1) > int64(s.cfg.PerInstance) {
		s.open.Add(-1)
		return nil, nil, fmt.Errorf("%w on this instance (maximum is %d)", ErrTooManyStreams, s.cfg.PerInstance)
	}
	st := &NotificationStream{UserID: cred.UserID, id: domain.NewSecret(12), cred: cred, token: token, sent: map[int64]time.Time{}}
	ok, err := s.signals.Acquire(ctx, cred.UserID, st.id, s.cfg.PerUser, s.slotTTL())
	if err != nil || !ok {
		s.open.Add(-1)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%w for this user (maximum is %d)", ErrTooManyStreams, s.cfg.PerUser)
	}
	st.Wake, st.take, st.stop = s.signals.Watch(cred.UserID)
	st.Recheck, st.unwatchSession = s.signals.WatchSession(cred.SessionID)
	var first []domain.Notification
	if hasLast {
		st.floor = max(lastEventID, 0)
		first, err = s.repo.After(ctx, cred.UserID, st.floor, s.cfg.ReplayLimit)
	} else {
		st.floor, err = s.repo.LatestID(ctx, cred.UserID)
	}
	if err != nil {
		s.Close(st)
		return nil, nil, err
	}
	now := s.now()
	for _, n := range first {
		st.sent[n.ID] = now
	}
	return st, first, nil
}

// slotTTL is how long a stream's slot in the per-user count lives without a heartbeat: a crashed
// instance's streams stop counting after it.
func (s *NotificationStreamService) slotTTL() time.Duration {
	return 3*s.cfg.Heartbeat + 10*time.Second
}

// Next returns what a wake-up brought the stream, oldest first: the notifications the
// announcements carried that it has not sent (none at or below its floor), without a query; or,
// when a wake-up carried none (a notice's announcement, a resubscription, a stream fallen
// behind), Poll's.
func (s *NotificationStreamService) Next(ctx context.Context, st *NotificationStream) ([]domain.Notification, error) {
	items, poll := st.take()
	if poll {
		return s.Poll(ctx, st)
	}
	now := s.now()
	out := items[:0]
	for _, n := range items {
		if _, done := st.sent[n.ID]; done || n.ID <= st.floor {
			continue
		}
		st.sent[n.ID] = now
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b domain.Notification) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Poll returns the stream's notifications not sent yet, oldest first, read from PostgreSQL.
func (s *NotificationStreamService) Poll(ctx context.Context, st *NotificationStream) ([]domain.Notification, error) {
	const page = 100
	now := s.now()
	// Ids sent long ago raise the floor: a notification below them committed by now.
	for id, at := range st.sent {
		if now.Sub(at) > settleAfter {
			st.floor = max(st.floor, id)
			delete(st.sent, id)
		}
	}
	for id := range st.sent {
		if id <= st.floor {
			delete(st.sent, id)
		}
	}
	var out []domain.Notification
	after := st.floor
	for {
		items, err := s.repo.After(ctx, st.UserID, after, page)
		if err != nil {
			return out, err
		}
		for _, n := range items {
			after = n.ID
			if _, done := st.sent[n.ID]; done {
				continue
			}
			st.sent[n.ID] = now
			out = append(out, n)
		}
		if len(items) < page || len(out) >= page {
			return out, nil
		}
	}
}

// Heartbeat checks that the stream's credential still holds (domain.ErrUnauthorized: the session
// was revoked, the user logged out or was suspended; the stream must end) and keeps its slot.
func (s *NotificationStreamService) Heartbeat(ctx context.Context, st *NotificationStream) error {
	var err error
	if st.token != "" {
		_, err = s.sessions.Authenticate(ctx, st.token)
	} else {
		err = s.sessions.StillValid(ctx, st.cred)
	}
	if err != nil {
		return err
	}
	return s.signals.Refresh(ctx, st.UserID, st.id, s.slotTTL())
}

// Close ends the stream: it stops watching and frees its slots.
func (s *NotificationStreamService) Close(st *NotificationStream) {
	if st.stop != nil {
		st.stop()
	}
	if st.unwatchSession != nil {
		st.unwatchSession()
	}
	// Many streams may end at once (a proxy restarts): the releases queue for Redis connections.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.signals.Release(ctx, st.UserID, st.id) // else it expires after slotTTL
	s.open.Add(-1)
}

type streamTicket struct {
	UserID    int64  `json:"u"`
	SessionID string `json:"s"`
}

// IssueTicket returns a single-use ticket for opening cred's stream within TicketTTL (an
// EventSource cannot send a header). Only its hash is stored. Login sessions only.
func (s *NotificationStreamService) IssueTicket(ctx context.Context, cred domain.Credential) (string, time.Time, error) {
	ticket := domain.NewSecret(32)
	body, _ := json.Marshal(streamTicket{UserID: cred.UserID, SessionID: cred.SessionID})
	if err := s.signals.PutTicket(ctx, hex.EncodeToString(domain.HashSecret(ticket)), body, TicketTTL); err != nil {
		return "", time.Time{}, err
	}
	return ticket, s.now().Add(TicketTTL), nil
}

// RedeemTicket takes ticket (once) and returns the credential it was issued to, if its session
// still holds; domain.ErrUnauthorized when it is unknown, expired, used or its session revoked.
func (s *NotificationStreamService) RedeemTicket(ctx context.Context, ticket string) (domain.Credential, error) {
	if ticket == "" || len(ticket) > 100 {
		return domain.Credential{}, domain.ErrUnauthorized
	}
	body, ok, err := s.signals.TakeTicket(ctx, hex.EncodeToString(domain.HashSecret(ticket)))
	if err != nil {
		return domain.Credential{}, err
	}
	var t streamTicket
	if !ok || json.Unmarshal(body, &t) != nil || t.UserID == 0 {
		return domain.Credential{}, domain.ErrUnauthorized
	}
	cred := domain.Credential{UserID: t.UserID, SessionID: t.SessionID}
	if err := s.sessions.StillValid(ctx, cred); err != nil {
		return domain.Credential{}, err
	}
	return cred, nil
}

// StillValid reports domain.ErrUnauthorized when cred's login session has been revoked (logout,
// revocation, suspension); the revocation marks are read as Authenticate reads them. A credential
// without a session (an API key) is rechecked by Authenticate with its key instead.
func (s *SessionService) StillValid(ctx context.Context, cred domain.Credential) error {
	if cred.SessionID == "" {
		return nil
	}
	revoked, complete, err := s.revoked.IsRevoked(ctx, cred.SessionID)
	if err != nil || (!revoked && !complete) {
		if err == nil {
			s.requestRenewal()
		}
		if revoked, err = s.repo.IsRevoked(ctx, cred.SessionID); err != nil {
			return err
		}
	}
	if revoked {
		return domain.ErrUnauthorized
	}
	return nil
}
