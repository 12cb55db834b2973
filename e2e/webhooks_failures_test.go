package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/ioc"
)

func init() {
	newSinceThePreviousRelease["TestWebhooks_DeadAndDisabledEndpoints"] = "webhooks (#33): dead deliveries, each attempt listed, disabled endpoints"
}

// shiftedClock is the webhook service's clock (ioc.Tuning.WebhookClock): the real time plus an
// offset the test moves, so an endpoint fails for days within a test.
type shiftedClock struct{ offset atomic.Int64 }

func (c *shiftedClock) now() time.Time      { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *shiftedClock) add(d time.Duration) { c.offset.Add(int64(d)) }
func (c *shiftedClock) reset()              { c.offset.Store(0) }
func (r *hookReceiver) failAlways()         { r.fail.Store(1 << 40) }
func (r *hookReceiver) recover()            { r.fail.Store(0) }
func hookPath(w map[string]any) string {
	return "/api/user/webhooks/" + strconv.Itoa(int(w["id"].(float64)))
}
func deliveryPath(d map[string]any) string {
	return "/deliveries/" + strconv.Itoa(int(d["id"].(float64)))
}
func slugOfCall(c hookCall) string {
	return c.Body["data"].(map[string]any)["article"].(map[string]any)["slug"].(string)
}
func (a *testApp) webhook(t *testing.T, path, token string) map[string]any {
	t.Helper()
	return a.Do("GET", path, token, nil).Expect(t, http.StatusOK).JSON(t)["webhook"].(map[string]any)
}

// deliveries is the first page of an endpoint's deliveries, newest first.
func (a *testApp) deliveries(t *testing.T, path, token string) []map[string]any {
	t.Helper()
	raw := a.Do("GET", path+"/deliveries", token, nil).Expect(t, http.StatusOK).JSON(t)["deliveries"].([]any)
	out := make([]map[string]any, len(raw))
	for i, d := range raw {
		out[i] = d.(map[string]any)
	}
	return out
}

// newHook registers an endpoint of token's for article.published at the receiver and gives the
// receiver its secret.
func (a *testApp) newHook(t *testing.T, token string, recv *hookReceiver) string {
	t.Helper()
	w := a.Do("POST", "/api/user/webhooks", token, webhookBody(recv.URL, "article.published")).Expect(t, http.StatusCreated).JSON(t)["webhook"].(map[string]any)
	recv.secret.Store(w["secret"].(string))
	return hookPath(w)
}

func TestWebhooks_DeadAndDisabledEndpoints(t *testing.T) {
	parallel(t)
	clock := &shiftedClock{}
	app := startApp(t, func(c *ioc.Config) {
		c.Webhooks.AllowPrivate = true
		// 16 attempts in about a second: backoffs of 10 to 40 ms.
		c.Tune.WebhookRetryBase, c.Tune.WebhookRetryMax, c.Tune.QueuePoll = new(20*time.Millisecond), new(40*time.Millisecond), new(50*time.Millisecond)
		c.Tune.WebhookClock = clock.now
	})

	t.Run("a delivery an endpoint always refuses ends dead, each attempt listed; redelivered once it recovers", func(t *testing.T) {
		author := app.Register("whdead")
		recv := newHookReceiver(t)
		recv.failAlways()
		hook := app.newHook(t, author, recv)
		slug := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Refused")).Expect(t, http.StatusCreated))["slug"].(string)
		const attempts = 16 // domain.WebhookRetry.MaxAttempts
		var msgID string
		for i := range attempts {
			c := recv.next(t)
			if c.Status != http.StatusInternalServerError || slugOfCall(c) != slug || (i > 0 && c.ID != msgID) {
				t.Fatalf("attempt %d: %+v, want the same delivery (%s) refused", i+1, c, msgID)
			}
			msgID = c.ID
		}
		var d map[string]any
		app.waitFor("the delivery is dead", func() bool {
			ds := app.deliveries(t, hook, author)
			d = ds[0]
			return len(ds) == 1 && d["status"] == "dead"
		})
		if d["attempts"] != float64(attempts) || d["statusCode"] != 500.0 || d["error"] != "answered 500" || d["response"] != "got "+msgID {
			t.Fatalf("the dead delivery %v", d)
		}
		log := d["attemptLog"].([]any)
		if len(log) != attempts {
			t.Fatalf("%d attempts listed, want %d: %v", len(log), attempts, log)
		}
		for i, raw := range log {
			a := raw.(map[string]any)
			if a["attempt"] != float64(attempts-i) || a["statusCode"] != 500.0 || a["error"] != "answered 500" || a["response"] != "got "+msgID ||
				a["latencyMs"] == nil || a["at"] == nil {
				t.Fatalf("attempt %d listed as %v, want attempt %d (newest first), refused", i, a, attempts-i)
			}
		}
		// Failing for a second is far from 3 days: the endpoint stays on, failing since the first attempt.
		if w := app.webhook(t, hook, author); w["active"] != true || w["failingSince"] == nil {
			t.Fatalf("the endpoint %v", w)
		}

		recv.recover()
		app.Do("POST", hook+deliveryPath(d)+"/redeliver", author, nil).Expect(t, http.StatusAccepted)
		// The next call is the redelivery: nothing more of the dead delivery came before it.
		c := recv.next(t)
		if c.Verified != nil || c.Status != http.StatusOK || c.ID == msgID || slugOfCall(c) != slug {
			t.Fatalf("redelivery %+v (the dead one was %s)", c, msgID)
		}
		app.waitFor("the redelivery is delivered", func() bool {
			ds := app.deliveries(t, hook, author)
			return len(ds) == 2 && ds[0]["status"] == "delivered"
		})
		ds := app.deliveries(t, hook, author)
		if log := ds[0]["attemptLog"].([]any); len(log) != 1 || log[0].(map[string]any)["statusCode"] != 200.0 || ds[1]["status"] != "dead" {
			t.Fatalf("after the redelivery %v", ds)
		}
		if w := app.webhook(t, hook, author); w["failingSince"] != nil {
			t.Fatalf("a success left the endpoint failing: %v", w)
		}
	})

	t.Run("an endpoint failing for 3 days is disabled and its owner told; it gets nothing until turned on", func(t *testing.T) {
		defer clock.reset()
		author := app.Register("whdisabled")
		recv, witness := newHookReceiver(t), newHookReceiver(t)
		recv.failAlways()
		hook := app.newHook(t, author, recv)
		first := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Refused for days")).Expect(t, http.StatusCreated))["slug"].(string)
		// After each failed attempt is recorded the clock moves 3 days on: the first attempt after
		// that finds the endpoint failing for 3 days.
		disabled, calls := false, 0
		for calls < 16 && !disabled {
			if c := recv.next(t); slugOfCall(c) != first || c.Status != http.StatusInternalServerError {
				t.Fatalf("attempt %d: %+v", calls+1, c)
			}
			calls++
			app.waitFor("the attempt is recorded", func() bool {
				ds := app.deliveries(t, hook, author)
				return len(ds) == 1 && ds[0]["attempts"].(float64) >= float64(calls)
			})
			disabled = app.webhook(t, hook, author)["active"] == false
			clock.add(72 * time.Hour)
		}
		if !disabled {
			t.Fatal("the endpoint was not disabled after 3 days of failures")
		}
		clock.reset() // signatures carry the service's time; the receivers check it
		ds := app.deliveries(t, hook, author)
		if len(ds) != 1 || ds[0]["status"] != "dead" || len(ds[0]["attemptLog"].([]any)) != int(ds[0]["attempts"].(float64)) {
			t.Fatalf("the delivery when the endpoint was disabled: %v", ds)
		}
		// Attempts recorded while the test looked are calls it has yet to take (each call reaches
		// the receiver's channel before its answer, so before its record).
		for ; calls < int(ds[0]["attempts"].(float64)); calls++ {
			recv.next(t)
		}
		var notices []map[string]any
		for _, n := range app.notifications(author, "?limit=50").Items {
			if n["kind"] == "webhook.disabled" {
				notices = append(notices, n)
			}
		}
		if len(notices) != 1 || !strings.Contains(notices[0]["detail"].(string), recv.URL) {
			t.Fatalf("the owner's notices %v, want one webhook.disabled naming the endpoint", notices)
		}

		// Disabled, it gets nothing: an event the owner's other endpoint (the witness) receives
		// adds no delivery to it, and no call.
		recv.recover()
		witnessHook := app.newHook(t, author, witness)
		second := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("While disabled")).Expect(t, http.StatusCreated))["slug"].(string)
		if c := witness.next(t); c.Verified != nil || slugOfCall(c) != second {
			t.Fatalf("the witness got %+v", c)
		}
		if ds := app.deliveries(t, hook, author); len(ds) != 1 || len(recv.calls) != 0 {
			t.Fatalf("the disabled endpoint has deliveries %v and %d calls", ds, len(recv.calls))
		}
		if ws := app.deliveries(t, witnessHook, author); len(ws) != 1 {
			t.Fatalf("the witness's deliveries %v", ws)
		}

		// Turned on again, it forgets its failures and gets the next event (not the one it missed).
		w := app.Do("PATCH", hook, author, map[string]any{"webhook": map[string]any{"active": true}}).Expect(t, http.StatusOK).JSON(t)["webhook"].(map[string]any)
		if w["active"] != true || w["failingSince"] != nil {
			t.Fatalf("after PATCH active=true: %v", w)
		}
		third := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Back on")).Expect(t, http.StatusCreated))["slug"].(string)
		if c := recv.next(t); c.Verified != nil || c.Status != http.StatusOK || slugOfCall(c) != third {
			t.Fatalf("after turning it on: %+v, want %s", c, third)
		}
		if c := witness.next(t); slugOfCall(c) != third {
			t.Fatalf("the witness got %+v", c)
		}
	})
}
