package service_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/service/mocks"
)

type streamBundle struct {
	svc      *service.NotificationStreamService
	repo     *mocks.MockNotificationStreamRepository
	signals  *mocks.MockNotificationSignals
	sessions *mocks.MockStreamSessions
	clock    *testClock
	wake     chan struct{}
	carried  *carried
}

// carried is what the announcements handed the stream's watch: its take returns and clears it.
type carried struct {
	items []domain.Notification
	poll  bool
}

func (c *carried) take() ([]domain.Notification, bool) {
	items, poll := c.items, c.poll
	c.items, c.poll = nil, false
	return items, poll
}

func streamSetup(t *testing.T, cfg service.NotificationStreamConfig) streamBundle {
	t.Helper()
	ctrl := gomock.NewController(t)
	b := streamBundle{repo: mocks.NewMockNotificationStreamRepository(ctrl), signals: mocks.NewMockNotificationSignals(ctrl),
		sessions: mocks.NewMockStreamSessions(ctrl), clock: newTestClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), wake: make(chan struct{}, 1), carried: &carried{}}
	b.svc = service.NewNotificationStreamService(b.repo, b.signals, b.sessions, cfg, b.clock.Now)
	return b
}

// open starts a stream of user 7 whose slot is granted.
func (b streamBundle) open(t *testing.T, last int64, hasLast bool) (*service.NotificationStream, []domain.Notification) {
	t.Helper()
	b.signals.EXPECT().Acquire(gomock.Any(), int64(7), gomock.Any(), 5, gomock.Any()).Return(true, nil)
	b.signals.EXPECT().Watch(int64(7)).Return((<-chan struct{})(b.wake), b.carried.take, func() {})
	b.signals.EXPECT().WatchSession("sid").Return(nil, func() {})
	st, first, err := b.svc.Start(context.Background(), domain.Credential{UserID: 7, SessionID: "sid"}, "TOKEN", last, hasLast)
	if err != nil {
		t.Fatal(err)
	}
	return st, first
}

func notes(ids ...int64) []domain.Notification {
	out := make([]domain.Notification, len(ids))
	for i, id := range ids {
		out[i] = domain.Notification{ID: id, Kind: "article.published"}
	}
	return out
}

func noteIDs(ns []domain.Notification) []int64 {
	out := make([]int64, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return out
}

func TestNotificationStream_ReplayThenLiveWithoutDuplicatesOrGaps(t *testing.T) {
	t.Parallel()
	b := streamSetup(t, service.DefaultNotificationStreamConfig())
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(10), 100).Return(notes(11, 12), nil)
	st, first := b.open(t, 10, true)
	if got := noteIDs(first); !slices.Equal(got, []int64{11, 12}) {
		t.Fatalf("replayed %v", got)
	}
	// 14 commits before 13 (two units of work): 14 is sent, then 13 when it commits; the replayed
	// ones never again.
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(10), 100).Return(notes(11, 12, 14), nil)
	got, err := b.svc.Poll(context.Background(), st)
	if err != nil || !slices.Equal(noteIDs(got), []int64{14}) {
		t.Fatalf("poll = %v, %v", noteIDs(got), err)
	}
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(10), 100).Return(notes(11, 12, 13, 14), nil)
	if got, _ := b.svc.Poll(context.Background(), st); !slices.Equal(noteIDs(got), []int64{13}) {
		t.Fatalf("poll = %v, want the late commit 13", noteIDs(got))
	}
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(10), 100).Return(notes(11, 12, 13, 14), nil)
	if got, _ := b.svc.Poll(context.Background(), st); len(got) != 0 {
		t.Fatalf("a repeated wake-up sent %v again", noteIDs(got))
	}
	// Long after, the ids sent raise the floor: the reads stay short.
	b.clock.After(10 * time.Minute)
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(14), 100).Return(notes(15), nil)
	if got, _ := b.svc.Poll(context.Background(), st); !slices.Equal(noteIDs(got), []int64{15}) {
		t.Fatalf("poll = %v", noteIDs(got))
	}
}

func TestNotificationStream_WithoutLastEventIDStartsAtTheNewest(t *testing.T) {
	t.Parallel()
	b := streamSetup(t, service.DefaultNotificationStreamConfig())
	b.repo.EXPECT().LatestID(gomock.Any(), int64(7)).Return(int64(40), nil)
	st, first := b.open(t, 0, false)
	if len(first) != 0 {
		t.Fatalf("sent %v without Last-Event-ID", noteIDs(first))
	}
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(40), 100).Return(notes(41), nil)
	if got, _ := b.svc.Poll(context.Background(), st); !slices.Equal(noteIDs(got), []int64{41}) {
		t.Fatalf("poll = %v", noteIDs(got))
	}
}

// A wake-up that carries the notifications sends them without a query, oldest first, never one
// sent before (replayed, or read at a heartbeat) or at or below the floor; one that carries none
// reads PostgreSQL.
func TestNotificationStream_NextSendsWhatTheWakeUpCarried(t *testing.T) {
	t.Parallel()
	b := streamSetup(t, service.DefaultNotificationStreamConfig())
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(10), 100).Return(notes(11, 12), nil)
	st, _ := b.open(t, 10, true)
	b.carried.items = notes(14, 9, 12, 13) // 9: at or below the floor; 12: replayed
	got, err := b.svc.Next(context.Background(), st)
	if err != nil || !slices.Equal(noteIDs(got), []int64{13, 14}) {
		t.Fatalf("next = %v, %v", noteIDs(got), err)
	}
	b.carried.items = notes(14)
	if got, _ := b.svc.Next(context.Background(), st); len(got) != 0 {
		t.Fatalf("a repeated announcement sent %v again", noteIDs(got))
	}
	// A wake-up without the notifications (a notice's, a resubscription): PostgreSQL.
	b.carried.items, b.carried.poll = notes(16), true
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(10), 100).Return(notes(11, 12, 13, 14, 15, 16), nil)
	if got, _ := b.svc.Next(context.Background(), st); !slices.Equal(noteIDs(got), []int64{15, 16}) {
		t.Fatalf("next after a users-only wake-up = %v", noteIDs(got))
	}
	// What a heartbeat read is not sent again when its announcement arrives.
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(10), 100).Return(notes(11, 12, 13, 14, 15, 16, 17), nil)
	if got, _ := b.svc.Poll(context.Background(), st); !slices.Equal(noteIDs(got), []int64{17}) {
		t.Fatalf("poll = %v", noteIDs(got))
	}
	b.carried.items = notes(17)
	if got, _ := b.svc.Next(context.Background(), st); len(got) != 0 {
		t.Fatalf("sent %v twice", noteIDs(got))
	}
}

func TestNotificationStream_PollPagesPastWhatWasSent(t *testing.T) {
	t.Parallel()
	b := streamSetup(t, service.DefaultNotificationStreamConfig())
	page := make([]int64, 100)
	for i := range page {
		page[i] = int64(i + 1)
	}
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(0), 100).Return(notes(page...), nil)
	st, _ := b.open(t, 0, true)
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(0), 100).Return(notes(page...), nil)
	b.repo.EXPECT().After(gomock.Any(), int64(7), int64(100), 100).Return(notes(101), nil)
	if got, _ := b.svc.Poll(context.Background(), st); !slices.Equal(noteIDs(got), []int64{101}) {
		t.Fatalf("poll = %v", noteIDs(got))
	}
}

func TestNotificationStream_Caps(t *testing.T) {
	t.Parallel()
	cfg := service.DefaultNotificationStreamConfig()
	cfg.PerInstance = 1
	b := streamSetup(t, cfg)
	cred := domain.Credential{UserID: 7, SessionID: "sid"}
	// Per user, across the fleet: the shared count says no.
	b.signals.EXPECT().Acquire(gomock.Any(), int64(7), gomock.Any(), 5, gomock.Any()).Return(false, nil)
	if _, _, err := b.svc.Start(context.Background(), cred, "TOKEN", 0, false); !errors.Is(err, service.ErrTooManyStreams) {
		t.Fatalf("over the user's cap: %v", err)
	}
	// Per instance: the one slot taken, a second open is refused before Redis is asked.
	b.repo.EXPECT().LatestID(gomock.Any(), int64(7)).Return(int64(0), nil)
	st, _ := b.open(t, 0, false)
	if _, _, err := b.svc.Start(context.Background(), cred, "TOKEN", 0, false); !errors.Is(err, service.ErrTooManyStreams) {
		t.Fatalf("over the instance's cap: %v", err)
	}
	b.signals.EXPECT().Release(gomock.Any(), int64(7), gomock.Any()).Return(nil)
	b.svc.Close(st)
	if b.svc.Open() != 0 {
		t.Fatalf("%d open after close", b.svc.Open())
	}
}

func TestNotificationStream_HeartbeatChecksTheSession(t *testing.T) {
	t.Parallel()
	b := streamSetup(t, service.DefaultNotificationStreamConfig())
	b.repo.EXPECT().LatestID(gomock.Any(), int64(7)).Return(int64(0), nil)
	st, _ := b.open(t, 0, false)
	b.sessions.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(domain.Credential{UserID: 7, SessionID: "sid"}, nil)
	b.signals.EXPECT().Refresh(gomock.Any(), int64(7), gomock.Any(), gomock.Any()).Return(nil)
	if err := b.svc.Heartbeat(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	b.sessions.EXPECT().Authenticate(gomock.Any(), "TOKEN").Return(domain.Credential{}, domain.ErrUnauthorized)
	requireErrorIs(t, b.svc.Heartbeat(context.Background(), st), domain.ErrUnauthorized)
}

func TestNotificationStream_Tickets(t *testing.T) {
	t.Parallel()
	b := streamSetup(t, service.DefaultNotificationStreamConfig())
	stored := map[string][]byte{}
	b.signals.EXPECT().PutTicket(gomock.Any(), gomock.Any(), gomock.Any(), 30*time.Second).DoAndReturn(
		func(_ context.Context, hash string, v []byte, _ time.Duration) error { stored[hash] = v; return nil })
	b.signals.EXPECT().TakeTicket(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, hash string) ([]byte, bool, error) {
		v, ok := stored[hash]
		delete(stored, hash)
		return v, ok, nil
	}).AnyTimes()
	cred := domain.Credential{UserID: 7, SessionID: "sid"}
	ticket, expires, err := b.svc.IssueTicket(context.Background(), cred)
	if err != nil || len(ticket) != 43 || !expires.Equal(b.clock.Now().Add(30*time.Second)) {
		t.Fatalf("ticket %q expires %v: %v", ticket, expires, err)
	}
	for hash := range stored {
		if hash == ticket {
			t.Fatal("the ticket itself is stored")
		}
	}
	b.sessions.EXPECT().StillValid(gomock.Any(), cred).Return(nil)
	if got, err := b.svc.RedeemTicket(context.Background(), ticket); err != nil || got.UserID != cred.UserID || got.SessionID != cred.SessionID {
		t.Fatalf("redeem = %v, %v", got, err)
	}
	_, err = b.svc.RedeemTicket(context.Background(), ticket)
	requireErrorIs(t, err, domain.ErrUnauthorized) // single use
	_, err = b.svc.RedeemTicket(context.Background(), "")
	requireErrorIs(t, err, domain.ErrUnauthorized)
}
