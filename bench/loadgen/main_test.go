package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"http://127.0.0.1:18080/x", "http://localhost:1/", "http://[::1]:8080/api"} {
		if _, err := checkLoopbackURL(ok); err != nil {
			t.Errorf("checkLoopbackURL(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"http://10.0.0.1/", "http://example.com/", "https://127.0.0.1/", "http://0.0.0.0:80/"} {
		if _, err := checkLoopbackURL(bad); err == nil {
			t.Errorf("checkLoopbackURL(%q) = nil, want an error", bad)
		}
	}
	if err := checkLoopbackAddr("127.0.0.1:18090"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{":18090", "0.0.0.0:18090", "192.168.1.2:80"} {
		if err := checkLoopbackAddr(bad); err == nil {
			t.Errorf("checkLoopbackAddr(%q) = nil, want an error", bad)
		}
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond, 0: time.Millisecond} {
		if got := percentile(d, q); got != want {
			t.Errorf("percentile(1..100ms, %v) = %v, want %v", q, got, want)
		}
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile(nil) = %v", got)
	}
}

func TestParseProcSet(t *testing.T) {
	t.Parallel()
	if ps, err := parseProcSet("redis=12,13"); err != nil || ps.Label != "redis" || len(ps.pids) != 2 {
		t.Errorf("parseProcSet(redis=12,13) = %+v, %v", ps, err)
	}
	if ps, err := parseProcSet("pg=comm:postgres"); err != nil || ps.comm != "postgres" {
		t.Errorf("parseProcSet(pg=comm:postgres) = %+v, %v", ps, err)
	}
	if ps, err := parseProcSet("primary=tree:42"); err != nil || ps.tree != 42 {
		t.Errorf("parseProcSet(primary=tree:42) = %+v, %v", ps, err)
	}
	for _, bad := range []string{"redis", "=1", "x=abc", "x=-1", "x=tree:", "x=tree:0"} {
		if _, err := parseProcSet(bad); err == nil {
			t.Errorf("parseProcSet(%q) = nil error", bad)
		}
	}
}

// A tree is its root and every descendant, including a process born after the set was named.
func TestPidsInTree(t *testing.T) {
	t.Parallel()
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	got := pidsInTree(os.Getpid())
	if !slices.Contains(got, os.Getpid()) || !slices.Contains(got, child.Process.Pid) {
		t.Fatalf("pidsInTree(self) = %v, want this process %d and its child %d", got, os.Getpid(), child.Process.Pid)
	}
	if slices.Contains(got, os.Getppid()) {
		t.Fatalf("pidsInTree(self) = %v holds this process's parent", got)
	}
}

// The ceiling answers with an article-shaped document of about a single article's size.
func TestCeilingDocument(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	newCeilingEngine().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ceiling", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if n := rec.Body.Len(); n < 500 || n > 900 {
		t.Errorf("body is %d bytes, want about 600-800", n)
	}
	var doc struct {
		Article struct{ Slug string } `json:"article"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || doc.Article.Slug == "" {
		t.Errorf("body %q: %v", rec.Body.String(), err)
	}
}

// measure counts only successes inside the window and reports errors separately.
func TestMeasure(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/fail") {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		n.Add(1)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	cfg := runConfig{concurrency: 1, duration: 200 * time.Millisecond, warmup: 50 * time.Millisecond, timeout: time.Second}
	ok := measure(target{Name: "ok", URL: srv.URL + "/ok"}, cfg)
	if ok.Requests == 0 || ok.Errors != 0 || ok.BytesPerRsp != 11 || ok.P50Ms <= 0 || ok.P99Ms < ok.P50Ms {
		t.Errorf("ok target: %+v", ok)
	}
	if int64(ok.Requests) >= n.Load() {
		t.Errorf("%d requests counted of %d served: the warm-up should not count", ok.Requests, n.Load())
	}
	bad := measure(target{Name: "bad", URL: srv.URL + "/fail"}, cfg)
	if bad.Requests != 0 || bad.Errors == 0 || !strings.Contains(bad.ErrorSample, "500") {
		t.Errorf("failing target: %+v", bad)
	}
}

func TestParseTarget(t *testing.T) {
	t.Parallel()
	for arg, want := range map[string]target{
		"article=http://127.0.0.1:18080/api/articles/a": {
			Name: "article", URL: "http://127.0.0.1:18080/api/articles/a", Methods: []string{"GET"}, Path: "GET /api/articles/a",
		},
		"list=http://localhost:1/api/articles?limit=20": {
			Name: "list", URL: "http://localhost:1/api/articles?limit=20", Methods: []string{"GET"}, Path: "GET /api/articles?limit=20",
		},
		"likes=POST+DELETE http://127.0.0.1:18080/api/articles/a/favorite": {
			Name: "likes", URL: "http://127.0.0.1:18080/api/articles/a/favorite", Methods: []string{"POST", "DELETE"},
			Path: "POST+DELETE /api/articles/a/favorite",
		},
		"comments=POST  http://[::1]:18080/api/articles/a/comments": {
			Name: "comments", URL: "http://[::1]:18080/api/articles/a/comments", Methods: []string{"POST"},
			Path: "POST /api/articles/a/comments",
		},
	} {
		got, err := parseTarget(arg)
		if err != nil {
			t.Errorf("parseTarget(%q): %v", arg, err)
			continue
		}
		if got.Name != want.Name || got.URL != want.URL || got.Path != want.Path || strings.Join(got.Methods, "+") != strings.Join(want.Methods, "+") {
			t.Errorf("parseTarget(%q) = %+v, want %+v", arg, got, want)
		}
		if got.writes() != (want.Name == "likes" || want.Name == "comments") {
			t.Errorf("parseTarget(%q).writes() = %v", arg, got.writes())
		}
	}
	for _, bad := range []string{
		"http://127.0.0.1/",                               // no name
		"=http://127.0.0.1/",                              // empty name
		"a b=http://127.0.0.1/",                           // name with a space
		"x=",                                              // no URL
		"x=post http://127.0.0.1/",                        // lower-case method
		"x=GET+CONNECT http://127.0.0.1/",                 // method not allowed
		"x=POST+ http://127.0.0.1/",                       // empty method
		"x=GET+GET+GET+GET+GET http://127.0.0.1/",         // cycle too long
		"x=POST http://10.0.0.1/api",                      // not loopback
		"likes=POST+DELETE https://127.0.0.1/x",           // not http
		"x=POST",                                          // method, no URL
		"x=http://example.com/",                           // not loopback
		"x=POST+DELETE http://127.0.0.1:1/ http://x.com/", // trailing junk makes a bad URL
	} {
		if got, err := parseTarget(bad); err == nil {
			t.Errorf("parseTarget(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestParseTargetsBodies(t *testing.T) {
	t.Parallel()
	args := []string{"read=http://127.0.0.1:1/r", "comments=POST http://127.0.0.1:1/c", "likes=POST+DELETE http://127.0.0.1:1/l"}
	ts, err := parseTargets(args, []string{`comments={"comment":{"body":"a=b"}}`})
	if err != nil {
		t.Fatal(err)
	}
	if string(ts[1].Body) != `{"comment":{"body":"a=b"}}` || ts[0].Body != nil || ts[2].Body != nil {
		t.Errorf("bodies: %q %q %q", ts[0].Body, ts[1].Body, ts[2].Body)
	}
	for name, bodies := range map[string][]string{
		"unknown target":   {`nope={}`},
		"not JSON":         {`comments={"comment":`},
		"no name":          {`{}`},
		"twice":            {`comments={}`, `comments={}`},
		"GET cannot carry": {`read={}`},
	} {
		if _, err := parseTargets(args, bodies); err == nil {
			t.Errorf("%s: parseTargets(%q) = nil error", name, bodies)
		}
	}
	if _, err := parseTargets(append(args, "read=http://127.0.0.1:1/other"), nil); err == nil {
		t.Error("a name used twice: nil error")
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	toks, err := readTokens(strings.NewReader("# writers\n a \n\nb\nc\n"))
	if err != nil || strings.Join(toks, ",") != "a,b,c" {
		t.Errorf("readTokens = %q, %v", toks, err)
	}
	if _, err := readTokens(strings.NewReader("a\nb\na\n")); err == nil || !strings.Contains(err.Error(), "lines 1 and 3") {
		t.Errorf("duplicate token: %v", err)
	}
	if _, err := readTokens(strings.NewReader("a b\n")); err == nil {
		t.Error("token with a space: nil error")
	}

	file := t.TempDir() + "/tokens"
	if err := os.WriteFile(file, []byte("t1\nt2\nt3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reads, _ := parseTargets([]string{"r=http://127.0.0.1:1/"}, nil)
	writes, _ := parseTargets([]string{"r=http://127.0.0.1:1/", "w=POST+DELETE http://127.0.0.1:1/"}, nil)
	if got, err := workerTokens(reads, "", 32); err != nil || got != nil {
		t.Errorf("reads only: %q, %v (no tokens needed)", got, err)
	}
	if _, err := workerTokens(writes, "", 2); err == nil || !strings.Contains(err.Error(), "-tokens") {
		t.Errorf("writes without -tokens: %v", err)
	}
	if got, err := workerTokens(writes, file, 2); err != nil || strings.Join(got, ",") != "t1,t2" {
		t.Errorf("2 workers, 3 tokens: %q, %v", got, err)
	}
	if _, err := workerTokens(writes, file, 4); err == nil || !strings.Contains(err.Error(), "holds 3 tokens") {
		t.Errorf("4 workers, 3 tokens: %v", err)
	}
	if _, err := workerTokens(writes, file+".missing", 1); err == nil {
		t.Error("missing file: nil error")
	}
}

// A write target: each worker cycles through its methods as its own user, sending the body with
// POST; every request is a success only if the server answered 200.
func TestMeasureWrites(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	state := map[string]bool{} // token -> favorited
	var bad atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Token ")
		if !ok {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if string(body) != `{"x":1}` || r.Header.Get("Content-Type") != "application/json" {
				bad.Add(1)
				http.Error(w, "bad body", http.StatusBadRequest)
				return
			}
		}
		mu.Lock()
		defer mu.Unlock()
		// Every request must change the state: POST on a favorited article means two workers
		// share a user or the cycle broke.
		if want := r.Method == http.MethodPost; state[tok] == want {
			bad.Add(1)
			http.Error(w, "no change", http.StatusConflict)
			return
		}
		state[tok] = r.Method == http.MethodPost
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	ts, err := parseTargets([]string{"likes=POST+DELETE " + srv.URL + "/fav"}, []string{`likes={"x":1}`})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runConfig{concurrency: 3, duration: 200 * time.Millisecond, warmup: 20 * time.Millisecond, timeout: time.Second,
		tokens: []string{"u1", "u2", "u3"}}
	r := measure(ts[0], cfg)
	if r.Requests == 0 || r.Errors != 0 || bad.Load() != 0 || !r.Writes {
		t.Errorf("likes: %+v, %d bad requests", r, bad.Load())
	}
	if len(state) != 3 {
		t.Errorf("%d users seen, want 3 (one per worker)", len(state))
	}
	// A read target is sent without a token even when tokens are configured.
	rd, _ := parseTargets([]string{"read=GET " + srv.URL + "/r"}, nil)
	if r := measure(rd[0], cfg); r.Requests != 0 || !strings.Contains(r.ErrorSample, "401") {
		t.Errorf("read target sent a token: %+v", r)
	}
}

// fakePair is two "instances" over one stored body: the writer takes PUTs at once, the reader
// shows a new body only from its lag-th read after the PUT on (lag 1: the very next read).
type fakePair struct {
	mu      sync.Mutex
	body    string
	pending string
	left    int // reads until pending shows
	lag     int
}

func (f *fakePair) writer() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/users":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"user":{"token":"t"}}`)
		case r.Method == http.MethodPost && r.URL.Path == "/api/articles":
			f.mu.Lock()
			f.body = "created for the propagation benchmark"
			f.mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"article":{"slug":"p"}}`)
		case r.Method == http.MethodPut && r.URL.Path == "/api/articles/p" && r.Header.Get("Authorization") == "Token t":
			var in struct{ Article struct{ Body string } }
			_ = json.NewDecoder(r.Body).Decode(&in)
			f.mu.Lock()
			f.pending, f.left = in.Article.Body, f.lag
			f.mu.Unlock()
			_, _ = io.WriteString(w, `{"article":{}}`)
		default:
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusTeapot)
		}
	})
}

func (f *fakePair) reader() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/articles/p" {
			http.NotFound(w, r)
			return
		}
		f.mu.Lock()
		if f.pending != "" {
			if f.left--; f.left <= 0 {
				f.body, f.pending = f.pending, ""
			}
		}
		body := f.body
		f.mu.Unlock()
		raw, _ := json.Marshal(map[string]any{"article": map[string]any{"body": body}})
		_, _ = w.Write(raw)
	})
}

func TestPropagate(t *testing.T) {
	t.Parallel()
	for _, lag := range []int{1, 3} {
		f := &fakePair{lag: lag}
		w, r := httptest.NewServer(f.writer()), httptest.NewServer(f.reader())
		t.Cleanup(w.Close)
		t.Cleanup(r.Close)
		wu, _ := checkLoopbackURL(w.URL)
		ru, _ := checkLoopbackURL(r.URL)
		p := &propagator{write: wu, read: ru, wait: 5 * time.Second, client: w.Client()}
		// No background readers: they would take the fake's lagging reads from the poller.
		res, err := p.run(20, 0, 100, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if res.Writes != 20 || res.NotShown != 0 || res.PollRequests != 20*lag {
			t.Fatalf("lag %d: %+v, want 20 edits, each shown after %d reads", lag, res, lag)
		}
		if wantFirst := map[int]int{1: 20, 3: 0}[lag]; res.FirstRead != wantFirst {
			t.Fatalf("lag %d: %d edits shown by the first read, want %d", lag, res.FirstRead, wantFirst)
		}
	}
}

func TestPropagateBudget(t *testing.T) {
	t.Parallel()
	f := &fakePair{lag: 1 << 30} // never shows
	w, r := httptest.NewServer(f.writer()), httptest.NewServer(f.reader())
	t.Cleanup(w.Close)
	t.Cleanup(r.Close)
	wu, _ := checkLoopbackURL(w.URL)
	ru, _ := checkLoopbackURL(r.URL)
	p := &propagator{write: wu, read: ru, wait: 20 * time.Millisecond, client: w.Client()}
	res, err := p.run(1000, 2, 200, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Writes == 0 || res.Writes >= 1000 || res.NotShown != res.Writes || res.MaxMs != 20 {
		t.Fatalf("%+v: want a few edits, each counted as not shown after 20ms, then the budget stops the run", res)
	}
}

// -urls: a read target cycles through a file's loopback URLs, each worker from its own place.
func TestAttachURLs(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/urls.txt"
	if err := os.WriteFile(file, []byte("# queries\nhttp://127.0.0.1:1/a\n\nhttp://127.0.0.1:1/b\nhttp://127.0.0.1:1/c\nhttp://127.0.0.1:1/d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := parseTargets([]string{"search=http://127.0.0.1:1/a", "w=POST http://127.0.0.1:1/x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := attachURLs(ts, []string{"search=" + file}); err != nil {
		t.Fatal(err)
	}
	send, err := newSender(ts[0], "", 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range 5 {
		got = append(got, send(k).URL.Path)
	}
	if strings.Join(got, "") != "/c/d/a/b/c" {
		t.Errorf("requests %v, want c d a b c", got)
	}
	bad := dir + "/bad.txt"
	if err := os.WriteFile(bad, []byte("http://example.com/x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"search=" + bad, "w=" + file, "nobody=" + file, "search"} {
		if err := attachURLs(ts[:], []string{spec}); err == nil {
			t.Errorf("attachURLs(%q) = nil error", spec)
		}
	}
}
