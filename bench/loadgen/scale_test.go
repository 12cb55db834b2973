package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseStatusRSS(t *testing.T) {
	t.Parallel()
	status := "Name:\tinkwell\nVmPeak:\t 1900000 kB\nVmHWM:\t   65536 kB\nVmRSS:\t   51200 kB\nThreads:\t9\n"
	if rss, peak, err := parseStatusRSS(strings.NewReader(status)); err != nil || rss != 51200 || peak != 65536 {
		t.Errorf("parseStatusRSS = %d, %d, %v; want 51200, 65536", rss, peak, err)
	}
	for _, bad := range []string{"Name:\tkthreadd\n", "VmRSS:\t12 MB\n", "VmRSS:\tx kB\n", "VmRSS:\t-5 kB\n"} {
		if _, _, err := parseStatusRSS(strings.NewReader(bad)); err == nil {
			t.Errorf("parseStatusRSS(%q): nil error", bad)
		}
	}
	// This very process has a resident set.
	if rss, peak, err := readRSS(os.Getpid()); err != nil || rss <= 0 || peak < rss {
		t.Errorf("readRSS(self) = %d, %d, %v", rss, peak, err)
	}
}

func TestAttachReaders(t *testing.T) {
	t.Parallel()
	file := t.TempDir() + "/reader"
	if err := os.WriteFile(file, []byte("# the reader\nrtok\nother\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir() + "/empty"
	if err := os.WriteFile(empty, []byte("# nothing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	parse := func() []target {
		ts, err := parseTargets([]string{"list=http://127.0.0.1:1/l", "feed=http://127.0.0.1:1/f", "likes=POST+DELETE http://127.0.0.1:1/x"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	ts := parse()
	if err := attachReaders(ts, []string{"feed=" + file}); err != nil || ts[1].Token != "rtok" || ts[0].Token != "" {
		t.Errorf("attachReaders: %v, tokens %q %q", err, ts[0].Token, ts[1].Token)
	}
	for name, auths := range map[string][]string{
		"no file":      {"feed="},
		"no name":      {"=" + file},
		"unknown":      {"nope=" + file},
		"write target": {"likes=" + file},
		"twice":        {"feed=" + file, "feed=" + file},
		"missing file": {"feed=" + file + ".missing"},
		"no token":     {"feed=" + empty},
	} {
		if err := attachReaders(parse(), auths); err == nil {
			t.Errorf("%s: attachReaders(%q) = nil error", name, auths)
		}
	}
}

// A signed-in read target sends its one reader's token from every worker.
func TestMeasureSignedInRead(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Token rtok" {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"articles":[]}`))
	}))
	defer srv.Close()
	ts, _ := parseTargets([]string{"feed=" + srv.URL + "/feed"}, nil)
	ts[0].Token = "rtok"
	cfg := runConfig{concurrency: 3, duration: 100 * time.Millisecond, warmup: 10 * time.Millisecond, timeout: time.Second}
	if r := measure(ts[0], cfg); r.Requests == 0 || r.Errors != 0 || !r.SignedIn || r.Writes {
		t.Errorf("signed-in read: %+v", r)
	}
}

// pagedList serves 95 items, limit per page, with the page's last index as the cursor.
func pagedList(t *testing.T, wantToken string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != wantToken {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		from := 0
		if c := r.URL.Query().Get("cursor"); c != "" {
			from, _ = strconv.Atoi(c)
		}
		to := min(95, from+limit)
		next := ""
		if to < 95 {
			next = `,"nextCursor":"` + strconv.Itoa(to) + `"`
		}
		_, _ = w.Write([]byte(`{"articles":[` + strings.TrimSuffix(strings.Repeat("{},", to-from), ",") + `]` + next + `}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCheckResults(t *testing.T) {
	t.Parallel()
	ok, silent, failed := result{Name: "ok", Requests: 3}, result{Name: "slow"}, result{Name: "bad", Requests: 3, Errors: 1, ErrorSample: "GET: status 500"}
	if err := checkResults([]result{ok}, false); err != nil {
		t.Error(err)
	}
	if err := checkResults([]result{ok, silent}, false); err == nil || !strings.Contains(err.Error(), "slow: 0 errors, 0 successful") {
		t.Errorf("a silent row without -slow-ok: %v", err)
	}
	if err := checkResults([]result{ok, silent}, true); err != nil {
		t.Errorf("a silent row with -slow-ok: %v", err)
	}
	if err := checkResults([]result{failed}, true); err == nil || !strings.Contains(err.Error(), "status 500") {
		t.Errorf("errors with -slow-ok: %v", err)
	}
}

func TestWalkPages(t *testing.T) {
	t.Parallel()
	srv := pagedList(t, "")
	first, _ := checkLoopbackURL(srv.URL + "/api/articles?limit=20&tag=x")
	got, err := walkPages(srv.Client(), first, 5, "")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(got)
	if q := u.Query(); q.Get("cursor") != "80" || q.Get("limit") != "20" || q.Get("tag") != "x" || u.Path != "/api/articles" {
		t.Errorf("page 5 = %s, want the first page's URL with cursor=80", got)
	}
	if got, err := walkPages(srv.Client(), first, 1, ""); err != nil || got != first.String() {
		t.Errorf("page 1 = %s, %v", got, err)
	}
	if _, err := walkPages(srv.Client(), first, 6, ""); err == nil || !strings.Contains(err.Error(), "page 5 has no nextCursor") {
		t.Errorf("past the end: %v", err)
	}
	// A page URL that already carries a cursor has it replaced, not repeated.
	if got := withCursor(&url.URL{Scheme: "http", Host: "127.0.0.1:1", Path: "/a", RawQuery: "cursor=old&limit=2"}, "new"); got != "http://127.0.0.1:1/a?cursor=new&limit=2" {
		t.Errorf("withCursor = %s", got)
	}

	signed := pagedList(t, "Token rtok")
	first, _ = checkLoopbackURL(signed.URL + "/api/articles/feed?limit=10")
	if _, err := walkPages(signed.Client(), first, 3, "rtok"); err != nil {
		t.Errorf("signed in: %v", err)
	}
	if _, err := walkPages(signed.Client(), first, 3, ""); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("anonymous on a signed-in list: %v", err)
	}
}

func scaleRow(name string, rps, p99 float64, c int, rssMiB int64) result {
	return result{Name: name, Request: "GET /" + name + "?cursor=abc&limit=20", RPS: rps, P50Ms: p99 / 2, P99Ms: p99, Concurrency: c,
		RSSKiB: rssMiB << 10, Requests: int(5 * rps), Seconds: 5}
}

func TestScaleReport(t *testing.T) {
	t.Parallel()
	g := scaleGoals{small: "1k", large: "1M", ref: "ceiling", list: "list", feed32: "feed", minRatio: 0.8, minCeiling: 0.3, maxP99Ms: 20, maxRSS: 1.2}
	small := []result{scaleRow("list", 5000, 10, 32, 50), scaleRow("tag", 4000, 12, 32, 52), scaleRow("feed", 2000, 15, 32, 55)}
	small[2].SignedIn = true
	// The server's RSS after the ceiling's load (500 MiB here) does not count.
	pass := []result{scaleRow("ceiling", 15000, 4, 32, 500), scaleRow("list", 4800, 11, 32, 58), scaleRow("tag", 3900, 12, 32, 60), scaleRow("feed", 1700, 19, 32, 62)}
	var out strings.Builder
	if err := writeScaleReport(&out, small, pass, g); err != nil {
		t.Fatal(err)
	}
	report := out.String()
	for _, want := range []string{
		"| ceiling | `GET /ceiling?cursor=abc&limit=20` | | | | 15000 | 2.00 | 4.00 | | 100% | |",
		"| list | `GET /list?cursor=…&limit=20` | 5000 | 5.00 | 10.00 | 4800 | 5.50 | 11.00 | 0.96 | 32.0% | 50 / 58 |",
		"| feed | `GET /feed?cursor=…&limit=20` (signed in) | 2000 |",
		"(within 1.25×): **PASS** (lowest: feed 0.850)",
		"list at 1M ≥ 0.30 of the ceiling: **PASS** (4800 / 15000 req/s = 0.320)",
		"feed at 1M, 32 connections: p99 ≤ 20.00 ms: **PASS** (p99 19.00 ms)",
		"**PASS** (largest after any row: 62 vs 55 MiB = 1.13)",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "FAIL") {
		t.Errorf("passing figures reported a FAIL:\n%s", report)
	}

	// Today's shape at 1M: every goal fails, and the feed is judged on a separate 32-connection row
	// when the section runs at another concurrency.
	fail := []result{scaleRow("ceiling", 15000, 4, 32, 0), scaleRow("list", 20, 3000, 32, 300), scaleRow("tag", 3900, 12, 32, 80), scaleRow("feed", 15, 4000, 32, 90), scaleRow("feed-c32", 16, 2500, 32, 90)}
	g.feed32 = "feed-c32"
	out.Reset()
	if err := writeScaleReport(&out, small, fail, g); err != nil {
		t.Fatal(err)
	}
	report = out.String()
	for _, want := range []string{
		"**FAIL** (below: list 0.004, feed 0.007)",
		"**FAIL** (20 / 15000 req/s = 0.001)",
		"| feed-c32 | `GET /feed-c32?cursor=…&limit=20` (32 connections) | | | | 16 | 1250.00 | 2500.00 | | 0.1% | – / 90 |",
		"feed-c32 at 1M, 32 connections: p99 ≤ 20.00 ms: **FAIL** (p99 2500.00 ms)",
		"**FAIL** (largest after any row: 300 vs 55 MiB = 5.45)",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "PASS") {
		t.Errorf("failing figures reported a PASS:\n%s", report)
	}

	// A row slower than its window (loadgen run -slow-ok): no latencies, and its goals fail.
	slow := scaleRow("feed-c32", 0, 0, 32, 90)
	slow.Requests = 0
	fail[4] = slow
	out.Reset()
	if err := writeScaleReport(&out, small, fail, g); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| feed-c32 | `GET /feed-c32?cursor=…&limit=20` (32 connections) | | | | 0 | > 5s | > 5s | | 0.0% | – / 90 |",
		"feed-c32 at 1M, 32 connections: p99 ≤ 20.00 ms: **FAIL** (no request finished inside the 5s window)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}

	// No ceiling, or nothing in common: an error, not a table.
	if err := writeScaleReport(&out, small, small, g); err == nil {
		t.Error("no ceiling row: nil error")
	}
	if err := writeScaleReport(&out, small, []result{scaleRow("ceiling", 1, 1, 32, 0), scaleRow("other", 1, 1, 32, 0)}, g); err == nil {
		t.Error("no common row: nil error")
	}
}
