package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func init() {
	newSinceThePreviousRelease["TestReports_Filing"] = "reports (POST /api/reports) and the moderation queue"
	newSinceThePreviousRelease["TestReports_Resolving"] = "resolving reports from the moderation queue, the reporters' notices and the moderation log"
}

// report files a report as token and returns the response.
func (a *testApp) report(token string, report map[string]any) response {
	a.T.Helper()
	return a.Do("POST", "/api/reports", token, map[string]any{"report": report})
}

// queue returns the entries of a moderation queue page as token sees it.
func (a *testApp) queue(t *testing.T, token, query string) ([]map[string]any, string) {
	t.Helper()
	m := a.Do("GET", "/api/moderation/reports"+query, token, nil).Expect(t, http.StatusOK).JSON(t)
	var out []map[string]any
	for _, e := range m["reports"].([]any) {
		out = append(out, e.(map[string]any))
	}
	next, _ := m["nextCursor"].(string)
	return out, next
}

func reportOf(t *testing.T, r response) map[string]any {
	t.Helper()
	rep, ok := r.JSON(t)["report"].(map[string]any)
	if !ok {
		t.Fatalf("no report in %s", r.Body)
	}
	return rep
}

// entryFor finds the queue entry whose target has label.
func entryFor(t *testing.T, entries []map[string]any, label string) map[string]any {
	t.Helper()
	for _, e := range entries {
		if e["target"].(map[string]any)["label"] == label {
			return e
		}
	}
	t.Fatalf("no queue entry for %q in %v", label, entries)
	return nil
}

func TestReports_Filing(t *testing.T) {
	parallel(t)
	app := startApp(t)
	admin, mod := app.staff(t, "rf")
	author, reader, other := app.Register("rfauthor"), app.Register("rfreader"), app.Register("rfother")
	slug := app.publish(author, "Cheap watches for sale")
	otherSlug := app.publish(other, "Something else")
	cid := int64(app.Do("POST", "/api/articles/"+slug+"/comments", other, map[string]any{"comment": map[string]any{"body": "spam spam"}}).
		Expect(t, http.StatusOK).JSON(t)["comment"].(map[string]any)["id"].(float64))
	draft := articleOf(t, app.Do("POST", "/api/articles", author, map[string]any{"article": map[string]any{
		"title": "Not yet", "description": "d", "body": "b", "draft": true}}).Expect(t, http.StatusCreated))["slug"].(string)

	first := reportOf(t, app.report(reader, map[string]any{"article": slug, "reason": "spam", "note": "watches"}).Expect(t, http.StatusCreated))
	target := first["target"].(map[string]any)
	if first["status"] != "open" || first["reason"] != "spam" || first["note"] != "watches" || target["kind"] != "article" || target["article"] != slug {
		t.Fatalf("filed report: %v", first)
	}
	t.Run("a repeat answers 200 with the same report and counts nothing", func(t *testing.T) {
		again := reportOf(t, app.report(reader, map[string]any{"article": slug, "reason": "abuse", "note": "changed"}).Expect(t, http.StatusOK))
		if again["id"] != first["id"] || again["reason"] != "spam" || again["note"] != "watches" {
			t.Fatalf("repeat: %v, want %v", again, first)
		}
	})
	app.report(other, map[string]any{"article": slug, "reason": "abuse"}).Expect(t, http.StatusCreated)
	app.report(reader, map[string]any{"comment": cid, "article": slug, "reason": "spam"}).Expect(t, http.StatusCreated)
	t.Run("an API key that may write files reports", func(t *testing.T) {
		key := app.Do("POST", "/api/user/api-keys", reader, map[string]any{"apiKey": map[string]any{"name": "bot", "scopes": []string{"write"}}}).
			Expect(t, http.StatusCreated).JSON(t)["apiKey"].(map[string]any)["key"].(string)
		rep := reportOf(t, app.report(key, map[string]any{"user": "rfother", "reason": "other"}).Expect(t, http.StatusCreated))
		if rep["target"].(map[string]any)["user"] != "rfother" {
			t.Fatalf("user report: %v", rep)
		}
	})

	t.Run("bad reports are refused and write nothing", func(t *testing.T) {
		before := app.pgCount(t, `SELECT count(*) FROM reports`)
		app.report(reader, map[string]any{"article": "no-such-article", "reason": "spam"}).Expect(t, http.StatusNotFound)
		app.report(reader, map[string]any{"user": "nobody-at-all", "reason": "spam"}).Expect(t, http.StatusNotFound)
		app.report(reader, map[string]any{"article": draft, "reason": "spam"}).Expect(t, http.StatusNotFound) // a draft is not the reader's to see
		app.report(reader, map[string]any{"comment": cid, "article": otherSlug, "reason": "spam"}).Expect(t, http.StatusNotFound)
		requireErrorField(t, app.report(author, map[string]any{"article": slug, "reason": "spam"}), http.StatusUnprocessableEntity, "article")
		requireErrorField(t, app.report(other, map[string]any{"comment": cid, "article": slug, "reason": "spam"}), http.StatusUnprocessableEntity, "comment")
		requireErrorField(t, app.report(reader, map[string]any{"user": "rfreader", "reason": "spam"}), http.StatusUnprocessableEntity, "user")
		requireErrorField(t, app.report(reader, map[string]any{"article": slug, "reason": "boring"}), http.StatusUnprocessableEntity, "reason")
		requireErrorField(t, app.report(reader, map[string]any{"user": "rfauthor", "reason": "spam", "note": strings.Repeat("n", 1001)}), http.StatusUnprocessableEntity, "note")
		requireErrorField(t, app.report(reader, map[string]any{"user": "rfauthor", "reason": "spam", "note": "a\u0000b"}), http.StatusUnprocessableEntity, "body")
		requireErrorField(t, app.report(reader, map[string]any{"reason": "spam"}), http.StatusUnprocessableEntity, "report")
		requireErrorField(t, app.report(reader, map[string]any{"user": "rfauthor", "article": slug, "reason": "spam"}), http.StatusUnprocessableEntity, "report")
		app.Do("POST", "/api/reports", reader, `{"report":{"comment":"7","reason":"spam"}}`).Expect(t, http.StatusUnprocessableEntity)
		app.report("", map[string]any{"user": "rfauthor", "reason": "spam"}).Expect(t, http.StatusUnauthorized)
		if after := app.pgCount(t, `SELECT count(*) FROM reports`); after != before {
			t.Fatalf("refused reports wrote rows: %d before, %d after", before, after)
		}
	})

	t.Run("the queue: one entry per target, oldest first, moderators only", func(t *testing.T) {
		entries, _ := app.queue(t, mod, "")
		if len(entries) != 3 {
			t.Fatalf("queue: %d entries, want 3 (article, comment, user): %v", len(entries), entries)
		}
		art := entries[0]
		if art["target"].(map[string]any)["article"] != slug || art["reportCount"] != 2.0 || fmt.Sprint(art["reasons"]) != "[spam abuse]" ||
			art["newestNote"] != "watches" || art["status"] != "open" {
			t.Fatalf("the article's entry: %v", art)
		}
		com := entryFor(t, entries, fmt.Sprintf("comment %d on %s", cid, slug))
		if tg := com["target"].(map[string]any); tg["kind"] != "comment" || tg["comment"] != float64(cid) || tg["article"] != slug {
			t.Fatalf("the comment's entry: %v", com)
		}
		if tg := entryFor(t, entries, "rfother")["target"].(map[string]any); tg["kind"] != "user" || tg["user"] != "rfother" {
			t.Fatalf("the user's entry: %v", tg)
		}
		page, next := app.queue(t, admin, "?limit=2")
		if len(page) != 2 || next == "" {
			t.Fatalf("first page of 2: %d entries, next %q", len(page), next)
		}
		rest, last := app.queue(t, admin, "?limit=2&cursor="+next)
		if len(rest) != 1 || last != "" || rest[0]["id"] == page[1]["id"] {
			t.Fatalf("second page: %v, next %q", rest, last)
		}
		app.Do("GET", "/api/moderation/reports", reader, nil).Expect(t, http.StatusForbidden)
		app.Do("GET", "/api/moderation/reports", "", nil).Expect(t, http.StatusUnauthorized)
		app.Do("GET", "/api/moderation/reports?status=closed", mod, nil).Expect(t, http.StatusUnprocessableEntity)
		key := app.Do("POST", "/api/user/api-keys", mod, map[string]any{"apiKey": map[string]any{"name": "modbot", "scopes": []string{"read", "write"}}}).
			Expect(t, http.StatusCreated).JSON(t)["apiKey"].(map[string]any)["key"].(string)
		app.Do("GET", "/api/moderation/reports", key, nil).Expect(t, http.StatusForbidden)
		app.Do("POST", fmt.Sprintf("/api/moderation/reports/%v/resolve", art["id"]), key, map[string]any{"action": "dismiss"}).Expect(t, http.StatusForbidden)
		app.Do("GET", "/api/moderation/log", key, nil).Expect(t, http.StatusForbidden)
	})
}

func TestReports_Resolving(t *testing.T) {
	parallel(t)
	app := startApp(t)
	admin, mod := app.staff(t, "rr")
	author, r1, r2 := app.Register("rrauthor"), app.Register("rrone"), app.Register("rrtwo")
	slug := app.publish(author, "Totally legit offer")
	cid := int64(app.Do("POST", "/api/articles/"+slug+"/comments", author, map[string]any{"comment": map[string]any{"body": "buy now"}}).
		Expect(t, http.StatusOK).JSON(t)["comment"].(map[string]any)["id"].(float64))
	app.report(r1, map[string]any{"article": slug, "reason": "spam"}).Expect(t, http.StatusCreated)
	app.report(r2, map[string]any{"article": slug, "reason": "other", "note": "maybe fine"}).Expect(t, http.StatusCreated)
	app.report(r1, map[string]any{"comment": cid, "article": slug, "reason": "spam"}).Expect(t, http.StatusCreated)
	app.report(r2, map[string]any{"user": "rrauthor", "reason": "abuse"}).Expect(t, http.StatusCreated)
	entries, _ := app.queue(t, mod, "")
	articleCase := entryFor(t, entries, slug)["id"]
	commentCase := entryFor(t, entries, fmt.Sprintf("comment %d on %s", cid, slug))["id"]
	userCase := entryFor(t, entries, "rrauthor")["id"]
	resolve := func(token string, id any, body map[string]any) response {
		return app.Do("POST", fmt.Sprintf("/api/moderation/reports/%v/resolve", id), token, body)
	}

	t.Run("refusals", func(t *testing.T) {
		resolve(r1, articleCase, map[string]any{"action": "dismiss"}).Expect(t, http.StatusForbidden)
		resolve(mod, 99999999, map[string]any{"action": "dismiss"}).Expect(t, http.StatusNotFound)
		resolve(mod, "abc", map[string]any{"action": "dismiss"}).Expect(t, http.StatusNotFound)
		requireErrorField(t, resolve(mod, articleCase, map[string]any{"action": "delete"}), http.StatusUnprocessableEntity, "action")
		requireErrorField(t, resolve(mod, articleCase, map[string]any{"action": "hide"}), http.StatusUnprocessableEntity, "reason")
		requireErrorField(t, resolve(mod, userCase, map[string]any{"action": "hide", "reason": "troll"}), http.StatusUnprocessableEntity, "action")
		requireErrorField(t, resolve(mod, articleCase, map[string]any{"action": "dismiss", "reason": strings.Repeat("r", 1001)}), http.StatusUnprocessableEntity, "reason")
		if n := app.pgCount(t, `SELECT count(*) FROM moderation_cases WHERE status = 'resolved'`); n != 0 {
			t.Fatalf("refusals resolved %d cases", n)
		}
	})

	t.Run("dismiss resolves every report of the target and tells each reporter, not what was done", func(t *testing.T) {
		done := reportOf(t, resolve(mod, articleCase, map[string]any{"action": "dismiss", "reason": "not spam"}).Expect(t, http.StatusOK))
		if done["status"] != "resolved" || done["resolution"] != "dismiss" || done["resolvedAt"] == nil {
			t.Fatalf("resolved case: %v", done)
		}
		resolve(mod, articleCase, map[string]any{"action": "dismiss"}).Expect(t, http.StatusConflict)
		for _, who := range []string{r1, r2} {
			found := false
			for _, n := range app.notifications(who, "").Items {
				if n["kind"] == "report.resolved" {
					found = true
					if d := fmt.Sprint(n["detail"]); d != "Your report about "+slug+" was reviewed." {
						t.Fatalf("notice detail %q", d)
					}
				}
			}
			if !found {
				t.Fatal("a reporter got no report.resolved notice")
			}
		}
		if n := app.pgCount(t, `SELECT count(*) FROM reports r JOIN moderation_cases c ON c.id = r.case_id WHERE c.target_kind = 'article' AND r.status = 'open'`); n != 0 {
			t.Fatalf("%d open reports of the article after the dismissal", n)
		}
		// The article stays; a new report opens a new case.
		app.Do("GET", "/api/articles/"+slug, r1, nil).Expect(t, http.StatusOK)
		app.report(r1, map[string]any{"article": slug, "reason": "spam"}).Expect(t, http.StatusCreated)
	})

	t.Run("hide hides the reported comment and resolves its case", func(t *testing.T) {
		done := reportOf(t, resolve(mod, commentCase, map[string]any{"action": "hide", "reason": "advertising"}).Expect(t, http.StatusOK))
		if done["status"] != "resolved" || done["resolution"] != "hide" {
			t.Fatalf("resolved case: %v", done)
		}
		for _, c := range app.Do("GET", "/api/articles/"+slug+"/comments", r2, nil).Expect(t, http.StatusOK).JSON(t)["comments"].([]any) {
			if c.(map[string]any)["id"] == float64(cid) {
				t.Fatal("the hidden comment is still listed for a reader")
			}
		}
		app.report(r2, map[string]any{"comment": cid, "article": slug, "reason": "spam"}).Expect(t, http.StatusNotFound) // hidden: not there for r2
		if n := app.pgCount(t, `SELECT count(*) FROM notifications WHERE kind = 'report.resolved' AND user_id = (SELECT id FROM users WHERE username = 'rrone')`); n != 2 {
			t.Fatalf("rrone has %d report.resolved notices, want 2 (article, comment)", n)
		}
	})

	t.Run("the resolved list, newest resolution first", func(t *testing.T) {
		resolved, _ := app.queue(t, admin, "?status=resolved")
		if len(resolved) != 2 || resolved[0]["id"] != commentCase || resolved[1]["id"] != articleCase {
			t.Fatalf("resolved list: %v", resolved)
		}
		open, _ := app.queue(t, mod, "")
		if len(open) != 2 { // the user, and the article's new case
			t.Fatalf("open queue after resolving: %v", open)
		}
	})

	t.Run("the moderation log, admins only", func(t *testing.T) {
		app.Do("GET", "/api/moderation/log", mod, nil).Expect(t, http.StatusForbidden)
		app.Do("GET", "/api/moderation/log", r1, nil).Expect(t, http.StatusForbidden)
		m := app.Do("GET", "/api/moderation/log?limit=100", admin, nil).Expect(t, http.StatusOK).JSON(t)
		var dismiss map[string]any
		actions := map[string]int{}
		for _, e := range m["entries"].([]any) {
			e := e.(map[string]any)
			actions[e["action"].(string)]++
			if e["action"] == "dismiss" {
				dismiss = e
			}
		}
		if dismiss == nil || dismiss["actor"] != "rrmod" || dismiss["reason"] != "not spam" ||
			dismiss["target"].(map[string]any)["kind"] != "article" || dismiss["target"].(map[string]any)["label"] != slug {
			t.Fatalf("log: %v", m)
		}
		if actions["hide"] != 1 {
			t.Fatalf("log actions %v, want one hide", actions)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		singleInstance(t, "reads one instance's counters")
		inProcess(t, "reads the instance's metrics listener")
		body := app.Metrics()
		for _, want := range []string{`inkwell_moderation_actions_total{action="dismiss"} 1`, "inkwell_moderation_open_cases 2",
			"inkwell_moderation_open_reports 2", "inkwell_moderation_oldest_open_report_age_seconds "} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %q", want)
			}
		}
	})

	t.Run("hide hides the reported article", func(t *testing.T) {
		open, _ := app.queue(t, mod, "")
		again := entryFor(t, open, slug)["id"]
		resolve(mod, again, map[string]any{"action": "hide", "reason": "scam"}).Expect(t, http.StatusOK)
		app.Do("GET", "/api/articles/"+slug, r2, nil).Expect(t, http.StatusNotFound)
		if a := app.Do("GET", "/api/articles/"+slug, author, nil).Expect(t, http.StatusOK).Article(t); fmt.Sprint(a["moderation"]) != "map[hidden:true reason:scam]" {
			t.Fatalf("the author's view: %v", a["moderation"])
		}
		// Reporting it again is reporting an article the reporter cannot see.
		app.report(r2, map[string]any{"article": slug, "reason": "spam"}).Expect(t, http.StatusNotFound)
	})
}
