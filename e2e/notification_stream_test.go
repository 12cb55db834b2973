package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// sseEvent is one event of a text/event-stream.
type sseEvent struct {
	ID, Event, Data string
	Retry           string
}

// sseStream is an open GET /api/user/notifications/stream.
type sseStream struct {
	Status int
	Header http.Header
	Events chan sseEvent // every event, in order; closed when the stream ends
	Lines  chan string   // every comment line (heartbeats)
	cancel context.CancelFunc
}

// openStream opens the stream at base+path with the token (may be "") and extra headers.
func openStream(t *testing.T, base, path, token string, headers ...string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := (&http.Client{}).Do(req) //nolint:bodyclose // the reading goroutine closes it
	if err != nil {
		t.Fatal(err)
	}
	s := &sseStream{Status: res.StatusCode, Header: res.Header, Events: make(chan sseEvent, 64), Lines: make(chan string, 64), cancel: cancel}
	go func() {
		defer res.Body.Close()
		defer close(s.Events)
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					s.Events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				select {
				case s.Lines <- line:
				default:
				}
			default:
				k, v, _ := strings.Cut(line, ":")
				v = strings.TrimPrefix(v, " ")
				switch k {
				case "id":
					ev.ID = v
				case "event":
					ev.Event = v
				case "data":
					ev.Data += v
				case "retry":
					ev.Retry = v
				}
			}
		}
	}()
	return s
}

// next returns the stream's next event, failing the test when none comes within wait.
func (s *sseStream) next(t *testing.T, wait time.Duration) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.Events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(wait):
		t.Fatalf("no event within %s", wait)
	}
	return sseEvent{}
}

// nextNotification skips events other than notifications (the retry hint).
func (s *sseStream) nextNotification(t *testing.T, wait time.Duration) (int64, map[string]any) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		ev := s.next(t, time.Until(deadline))
		if ev.Event != "notification" {
			continue
		}
		var n map[string]any
		if err := json.Unmarshal([]byte(ev.Data), &n); err != nil {
			t.Fatalf("event data %q: %v", ev.Data, err)
		}
		id, err := strconv.ParseInt(ev.ID, 10, 64)
		if err != nil || int64(n["id"].(float64)) != id {
			t.Fatalf("event id %q, notification %v", ev.ID, n)
		}
		return id, n
	}
}

// ended waits for the stream to end and returns the last event it sent.
func (s *sseStream) ended(t *testing.T, wait time.Duration) sseEvent {
	t.Helper()
	deadline := time.After(wait)
	var last sseEvent
	for {
		select {
		case ev, ok := <-s.Events:
			if !ok {
				return last
			}
			last = ev
		case <-deadline:
			t.Fatalf("the stream did not end within %s", wait)
		}
	}
}

func streamTweak(c *ioc.Config) {
	c.Tune.StreamHeartbeat = new(200 * time.Millisecond)
	c.Server.RateWrites = "0"
}

// TestNotificationStreamFleet: three instances on one database and Redis key space. A stream held
// on C receives, within a second, the notification of an article published on A; a stream opened
// on B with Last-Event-ID replays what was missed, then goes on live; a logout on A ends both.
func TestNotificationStreamFleet(t *testing.T) {
	parallel(t)
	db, r := testenv.NewDB(t), testenv.NewRedis(t)
	a := startReplica(t, db, r.Prefix, noAuthLimit, streamTweak)
	b := startReplica(t, db, r.Prefix, noAuthLimit, streamTweak)
	c := startReplica(t, db, r.Prefix, noAuthLimit, streamTweak)
	author := a.Register("stream_author")
	reader := a.Register("stream_reader")
	b.Do("POST", "/api/profiles/stream_author/follow", reader, nil).Expect(t, http.StatusOK)

	onC := openStream(t, c.URL, "/api/user/notifications/stream", reader)
	if onC.Status != http.StatusOK || !strings.HasPrefix(onC.Header.Get("Content-Type"), "text/event-stream") ||
		onC.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("stream answered %d %v", onC.Status, onC.Header)
	}
	if ev := onC.next(t, 5*time.Second); ev.Retry != "3000" {
		t.Fatalf("first event %+v, want the retry hint", ev)
	}
	select {
	case <-onC.Lines: // a heartbeat comment
	case <-time.After(5 * time.Second):
		t.Fatal("no heartbeat")
	}

	first := articleOf(t, a.Do("POST", "/api/articles", author, newArticle("Streamed live")).Expect(t, http.StatusCreated))
	id1, n := onC.nextNotification(t, 10*time.Second)
	if n["kind"] != "article.published" || n["actor"] != "stream_author" || slugOfNotification(n) != first["slug"] {
		t.Fatalf("notification %v", n)
	}
	// The event is the list's rendering of the notification.
	listed := a.notifications(reader, "").Items[0]
	if int64(listed["id"].(float64)) != id1 || listed["createdAt"] != n["createdAt"] {
		t.Fatalf("streamed %v, listed %v", n, listed)
	}

	// Missed while disconnected: two more publications, replayed on B after id1, oldest first,
	// then live ones, with no duplicate.
	onC.cancel()
	a.Do("POST", "/api/articles", author, newArticle("Missed one")).Expect(t, http.StatusCreated)
	a.Do("POST", "/api/articles", author, newArticle("Missed two")).Expect(t, http.StatusCreated)
	a.awaitNotifications(reader, 3)
	onB := openStream(t, b.URL, "/api/user/notifications/stream", reader, "Last-Event-ID", strconv.FormatInt(id1, 10))
	id2, n2 := onB.nextNotification(t, 5*time.Second)
	id3, n3 := onB.nextNotification(t, 5*time.Second)
	// In id order; the consumers apply events in parallel, so either publication may come first.
	titles := n2["article"].(map[string]any)["title"].(string) + "," + n3["article"].(map[string]any)["title"].(string)
	if !(id1 < id2 && id2 < id3) || (titles != "Missed one,Missed two" && titles != "Missed two,Missed one") {
		t.Fatalf("replayed %d %v, %d %v after %d", id2, n2, id3, n3, id1)
	}
	a.Do("POST", "/api/articles", author, newArticle("Live again")).Expect(t, http.StatusCreated)
	id4, n4 := onB.nextNotification(t, 10*time.Second)
	if id4 <= id3 || n4["article"].(map[string]any)["title"] != "Live again" {
		t.Fatalf("live after replay: %d %v", id4, n4)
	}
	// The query form of Last-Event-ID (an EventSource reconnecting by hand) replays too.
	viaQuery := openStream(t, c.URL, "/api/user/notifications/stream?lastEventId="+strconv.FormatInt(id3, 10), reader)
	if id, _ := viaQuery.nextNotification(t, 5*time.Second); id != id4 {
		t.Fatalf("replay after %d gave %d, want %d", id3, id, id4)
	}

	// A logout on A ends the streams held on B and C (at their next heartbeat).
	a.Do("POST", "/api/users/logout", reader, nil).Expect(t, http.StatusNoContent)
	for _, s := range []*sseStream{onB, viaQuery} {
		if last := s.ended(t, 10*time.Second); last.Event != "revoked" {
			t.Fatalf("stream ended after %+v, want a revoked event", last)
		}
	}
}

// TestNotificationStream: auth by header or single-use ticket, caps, bad input; through the
// balancer in a fleet run.
func TestNotificationStream(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit, streamTweak, func(c *ioc.Config) { c.Tune.StreamPerUser = new(2) })
	author := app.Register("ticket_author")
	reader := app.Register("ticket_reader")
	app.Do("POST", "/api/profiles/ticket_author/follow", reader, nil).Expect(t, http.StatusOK)
	const path = "/api/user/notifications/stream"

	requireErrorField(t, app.call(t, "GET", path, "", nil), http.StatusUnauthorized, "token")
	requireErrorField(t, app.call(t, "GET", path+"?ticket=nonsense", "", nil), http.StatusUnauthorized, "ticket")
	requireErrorField(t, app.call(t, "POST", path+"/ticket", "", nil), http.StatusUnauthorized, "token")
	requireErrorField(t, app.call(t, "GET", path+"?lastEventId=abc", reader, nil), http.StatusUnprocessableEntity, "lastEventId")
	requireErrorField(t, app.call(t, "GET", path, reader, nil, "Last-Event-ID", "-4"), http.StatusUnprocessableEntity, "Last-Event-ID")

	// A ticket opens the stream once, without the token in the URL.
	m := app.call(t, "POST", path+"/ticket", reader, nil).Expect(t, http.StatusCreated).JSON(t)
	ticket, _ := m["ticket"].(string)
	if len(ticket) < 40 || m["expiresAt"] == nil || strings.Contains(ticket, ".") {
		t.Fatalf("ticket answer %v", m)
	}
	s := openStream(t, app.URL, path+"?ticket="+ticket, "")
	if s.Status != http.StatusOK {
		t.Fatalf("ticket stream: %d", s.Status)
	}
	requireErrorField(t, app.call(t, "GET", path+"?ticket="+ticket, "", nil), http.StatusUnauthorized, "ticket")
	articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Via ticket")).Expect(t, http.StatusCreated))
	if _, n := s.nextNotification(t, 10*time.Second); n["article"].(map[string]any)["title"] != "Via ticket" {
		t.Fatalf("notification %v", n)
	}

	// Two streams per user here: a third is refused 429 until one ends.
	s2 := openStream(t, app.URL, path, reader)
	if s2.Status != http.StatusOK {
		t.Fatalf("second stream: %d", s2.Status)
	}
	third := app.call(t, "GET", path, reader, nil)
	requireErrorField(t, third, http.StatusTooManyRequests, "stream")
	s2.cancel()
	app.waitFor("the second stream's slot is freed", func() bool {
		res, err := app.fetchStreamStatus(path, reader)
		return err == nil && res == http.StatusOK
	})
	// Another user is not counted against the reader.
	other := openStream(t, app.URL, path, author)
	if other.Status != http.StatusOK {
		t.Fatalf("another user's stream: %d", other.Status)
	}

	// The ticket's stream ends when the session the ticket was issued to logs out.
	app.call(t, "POST", "/api/users/logout", reader, nil).Expect(t, http.StatusNoContent)
	if last := s.ended(t, 10*time.Second); last.Event != "revoked" {
		t.Fatalf("ticket stream ended after %+v, want a revoked event", last)
	}
	requireErrorField(t, app.call(t, "POST", path+"/ticket", reader, nil), http.StatusUnauthorized, "token")
}

// TestNotificationStreamShutdown: an open stream does not hold a graceful shutdown up; it ends
// with a shutdown event (its client reconnects elsewhere).
func TestNotificationStreamShutdown(t *testing.T) {
	parallel(t)
	db, r := testenv.NewDB(t), testenv.NewRedis(t)
	app := startReplica(t, db, r.Prefix, noAuthLimit, func(c *ioc.Config) {
		c.Server.DrainDelay = 0
		c.Server.ShutdownTimeout = time.Minute
	})
	reader := app.Register("shutdown_reader")
	s := openStream(t, app.URL, "/api/user/notifications/stream", reader)
	s.next(t, 5*time.Second) // the retry hint: the stream is open
	start := time.Now()
	app.Stop()
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("shutdown took %s with a stream open", took)
	}
	if last := s.ended(t, 5*time.Second); last.Event != "shutdown" {
		t.Fatalf("stream ended after %+v, want a shutdown event", last)
	}
}

// fetchStreamStatus opens the stream, returns its status and closes it at once.
func (a *testApp) fetchStreamStatus(path, token string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, a.URL+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Token "+token)
	res, err := (&http.Client{}).Do(req)
	if err != nil {
		return 0, err
	}
	_ = res.Body.Close()
	return res.StatusCode, nil
}

// TestNotificationStreamNotices: with the default heartbeat (25 s), a moderation notice, written in
// the moderator's unit of work, reaches the author's stream on another instance at once, and a
// logout ends the session's streams on every instance at once, the logging-out one included.
func TestNotificationStreamNotices(t *testing.T) {
	parallel(t)
	db, r := testenv.NewDB(t), testenv.NewRedis(t)
	a := startReplica(t, db, r.Prefix, noAuthLimit)
	b := startReplica(t, db, r.Prefix, noAuthLimit)
	_, mod := a.staff(t, "notice")
	author := a.Register("noticed_author")
	slug := articleOf(t, a.Do("POST", "/api/articles", author, newArticle("To be hidden")).Expect(t, http.StatusCreated))["slug"].(string)
	reporter := a.Register("noticed_reporter")
	a.report(reporter, map[string]any{"article": slug, "reason": "spam"}).Expect(t, http.StatusCreated)
	s := openStream(t, b.URL, "/api/user/notifications/stream", author)
	s.next(t, 5*time.Second) // the retry hint: the stream listens
	rs := openStream(t, b.URL, "/api/user/notifications/stream", reporter)
	rs.next(t, 5*time.Second)
	a.Do("POST", "/api/moderation/articles/"+slug+"/hide", mod, map[string]any{"reason": "spam"}).Expect(t, http.StatusOK)
	if _, n := s.nextNotification(t, 5*time.Second); n["kind"] != "moderation.hidden" {
		t.Fatalf("notice %v", n)
	}
	// The hide resolved the report's case: its reporter hears of it at once (not at a heartbeat).
	if _, n := rs.nextNotification(t, 5*time.Second); n["kind"] != "report.resolved" {
		t.Fatalf("reporter's notice %v", n)
	}

	other := a.Register("unrevoked_reader")
	onA := openStream(t, a.URL, "/api/user/notifications/stream", author)
	onA.next(t, 5*time.Second)
	control := openStream(t, b.URL, "/api/user/notifications/stream", other)
	control.next(t, 5*time.Second)
	a.Do("POST", "/api/users/logout", author, nil).Expect(t, http.StatusNoContent)
	for _, st := range []*sseStream{s, onA} {
		if last := st.ended(t, 5*time.Second); last.Event != "revoked" {
			t.Fatalf("stream ended after %+v, want a revoked event", last)
		}
	}
	// Another user's stream on B rechecked nothing of its own and goes on.
	select {
	case ev, ok := <-control.Events:
		t.Fatalf("the other user's stream: %+v (open: %v)", ev, ok)
	default:
	}
}
