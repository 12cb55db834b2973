package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of a propagation run, whatever the flags.
const (
	maxPropagationWrites = 10_000
	maxPropagationBudget = 10 * time.Minute
	maxReadRate          = 20_000
)

const propagateUsage = `Usage: loadgen propagate [flags]

Measures how long a write answered by one instance takes to show on another. It registers a user
and creates an article through -write, then, while -readers workers read that article from -read
at -rate requests per second in all (a steady load), edits the article through -write -n times;
after each edit's answer it reads the article from -read until the new body shows and records the
time from the edit's answer to that read's answer. Prints the delay's percentiles as markdown.

The run stops early, reporting what it measured, once -budget is spent; an edit that does not show
within -wait counts as -wait (and as "not shown") and the next edit follows. Both instances must
serve one database and one Redis, with sign-up rate limits off (the user is registered once).

Flags:
`

// propagation is what a propagate run measured.
type propagation struct {
	Writes       int     `json:"writes"`       // edits whose propagation was measured
	Wanted       int     `json:"wanted"`       // -n
	FirstRead    int     `json:"firstRead"`    // edits the very first read after the answer showed
	NotShown     int     `json:"notShown"`     // edits still not shown after -wait
	P50Ms        float64 `json:"p50Ms"`        // delay from the edit's answer to the answer of the first read showing it
	P90Ms        float64 `json:"p90Ms"`        //
	P99Ms        float64 `json:"p99Ms"`        //
	MaxMs        float64 `json:"maxMs"`        //
	WriteP50Ms   float64 `json:"writeP50Ms"`   // the edits' own latency on -write
	Seconds      float64 `json:"seconds"`      // the measured loop's wall time
	LoadRPS      float64 `json:"loadRps"`      // the background readers' achieved rate on -read
	LoadErrors   int64   `json:"loadErrors"`   // background reads that were not 200
	PollRequests int     `json:"pollRequests"` // reads the measuring poller sent
}

func propagateMain(args []string) error {
	fs := flag.NewFlagSet("loadgen propagate", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), propagateUsage)
		fs.PrintDefaults()
	}
	writeBase := fs.String("write", "http://127.0.0.1:18080", "the instance that takes the edits (loopback only)")
	readBase := fs.String("read", "http://127.0.0.1:18081", "the instance the change must show on (loopback only)")
	n := fs.Int("n", 1000, fmt.Sprintf("edits to measure (1..%d)", maxPropagationWrites))
	readers := fs.Int("readers", 4, "background reader workers on -read (0..64)")
	rate := fs.Int("rate", 1000, fmt.Sprintf("the background readers' requests per second in all (1..%d)", maxReadRate))
	wait := fs.Duration("wait", 5*time.Second, "how long one edit may take to show before it counts as not shown")
	budget := fs.Duration("budget", 2*time.Minute, fmt.Sprintf("stop measuring after this long (up to %s)", maxPropagationBudget))
	jsonOut := fs.String("json", "", "also write the result as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	w, err := checkLoopbackURL(*writeBase)
	if err != nil {
		return err
	}
	r, err := checkLoopbackURL(*readBase)
	if err != nil {
		return err
	}
	switch {
	case *n < 1 || *n > maxPropagationWrites:
		return fmt.Errorf("-n must be 1..%d", maxPropagationWrites)
	case *readers < 0 || *readers > 64:
		return errors.New("-readers must be 0..64")
	case *rate < 1 || *rate > maxReadRate:
		return fmt.Errorf("-rate must be 1..%d", maxReadRate)
	case *wait <= 0 || *wait > 30*time.Second:
		return errors.New("-wait must be in (0, 30s]")
	case *budget <= 0 || *budget > maxPropagationBudget:
		return fmt.Errorf("-budget must be in (0, %s]", maxPropagationBudget)
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	p := &propagator{write: w, read: r, wait: *wait, client: &http.Client{Timeout: 10 * time.Second}}
	res, err := p.run(*n, *readers, *rate, *budget)
	if err != nil {
		return err
	}
	printPropagation(os.Stdout, res, *readers, *rate, *wait, *budget)
	if *jsonOut != "" {
		raw, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(raw, '\n'), 0o644); err != nil {
			return err
		}
	}
	if res.Writes == 0 {
		return errors.New("no edit was measured")
	}
	if res.LoadErrors > 0 {
		return fmt.Errorf("%d background reads failed; the numbers above are not valid", res.LoadErrors)
	}
	return nil
}

type propagator struct {
	write, read *url.URL
	wait        time.Duration
	client      *http.Client // setup and edits, on -write
	token, slug string
}

func (p *propagator) run(n, readers, rate int, budget time.Duration) (propagation, error) {
	if err := p.setup(); err != nil {
		return propagation{}, err
	}
	articleURL := p.read.JoinPath("/api/articles/", p.slug).String()
	// The poller has a keep-alive connection of its own, so it never queues behind the load.
	poller := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	if _, _, err := p.readUntil(poller, articleURL, []byte(bodyField("created for the propagation benchmark"))); err != nil {
		return propagation{}, fmt.Errorf("the article never showed on -read: %w", err)
	}

	stop := make(chan struct{})
	var loadDone, loadErrs atomic.Int64
	var wg sync.WaitGroup
	if readers > 0 {
		interval := time.Duration(float64(time.Second) * float64(readers) / float64(rate))
		loadClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: readers, DisableCompression: true}}
		for range readers {
			wg.Go(func() {
				tick := time.NewTicker(interval)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					if _, err := getBody(loadClient, articleURL); err != nil {
						loadErrs.Add(1)
					}
					loadDone.Add(1)
				}
			})
		}
	}

	res := propagation{Wanted: n}
	var delays, writes []time.Duration
	start := time.Now()
	for i := 1; i <= n && time.Since(start) < budget; i++ {
		marker := fmt.Sprintf("propagation revision %d", i)
		t0 := time.Now()
		if err := p.edit(marker); err != nil {
			close(stop)
			wg.Wait()
			return res, fmt.Errorf("edit %d: %w", i, err)
		}
		answered := time.Now()
		writes = append(writes, answered.Sub(t0))
		reads, shown, err := p.readUntil(poller, articleURL, []byte(bodyField(marker)))
		if err != nil {
			close(stop)
			wg.Wait()
			return res, fmt.Errorf("read after edit %d: %w", i, err)
		}
		res.PollRequests += reads
		if reads == 1 {
			res.FirstRead++
		}
		if shown.IsZero() {
			res.NotShown++
			delays = append(delays, p.wait)
			continue
		}
		delays = append(delays, shown.Sub(answered))
	}
	res.Seconds = time.Since(start).Seconds()
	close(stop)
	wg.Wait()

	res.Writes = len(delays)
	res.LoadRPS = float64(loadDone.Load()) / res.Seconds
	res.LoadErrors = loadErrs.Load()
	slices.Sort(delays)
	slices.Sort(writes)
	if len(delays) > 0 {
		res.P50Ms, res.P90Ms = toMs(percentile(delays, 0.5)), toMs(percentile(delays, 0.9))
		res.P99Ms, res.MaxMs = toMs(percentile(delays, 0.99)), toMs(delays[len(delays)-1])
		res.WriteP50Ms = toMs(percentile(writes, 0.5))
	}
	return res, nil
}

// bodyField is how the article's body appears in its JSON answer (the markers need no escaping).
func bodyField(body string) string { return `"body":"` + body + `"` }

// setup registers a user and creates the article the run edits, through -write.
func (p *propagator) setup() error {
	name := fmt.Sprintf("propagate%d", time.Now().UnixNano()%1_000_000_000)
	var user struct {
		User struct{ Token string } `json:"user"`
	}
	if err := p.call(http.MethodPost, "/api/users", map[string]any{"user": map[string]any{
		"username": name, "email": name + "@example.com", "password": "bench-password-1",
	}}, http.StatusCreated, &user); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	p.token = user.User.Token
	var art struct {
		Article struct{ Slug string } `json:"article"`
	}
	if err := p.call(http.MethodPost, "/api/articles", map[string]any{"article": map[string]any{
		"title": "Propagation " + name, "description": "edited again and again", "body": "created for the propagation benchmark",
	}}, http.StatusCreated, &art); err != nil {
		return fmt.Errorf("create the article: %w", err)
	}
	p.slug = art.Article.Slug
	return nil
}

func (p *propagator) edit(body string) error {
	return p.call(http.MethodPut, "/api/articles/"+p.slug, map[string]any{"article": map[string]any{"body": body}}, http.StatusOK, nil)
}

// readUntil reads url until its answer contains want, for at most p.wait, and returns how many
// reads it sent and when the answer that showed want arrived (zero if none did).
func (p *propagator) readUntil(client *http.Client, url string, want []byte) (int, time.Time, error) {
	deadline := time.Now().Add(p.wait)
	for reads := 1; ; reads++ {
		body, err := getBody(client, url)
		now := time.Now()
		if err != nil {
			return reads, time.Time{}, err
		}
		if bytes.Contains(body, want) {
			return reads, now, nil
		}
		if now.After(deadline) {
			return reads, time.Time{}, nil
		}
	}
}

func getBody(client *http.Client, url string) ([]byte, error) {
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %.200s", url, resp.StatusCode, body)
	}
	return body, nil
}

// call sends a JSON request to -write as the run's user and decodes the answer into out.
func (p *propagator) call(method, path string, body any, want int, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, p.write.JoinPath(path).String(), bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if p.token != "" {
		req.Header.Set("Authorization", "Token "+p.token)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d, want %d: %.200s", method, path, resp.StatusCode, want, answer)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}

func printPropagation(w io.Writer, r propagation, readers, rate int, wait, budget time.Duration) {
	fmt.Fprintf(w, "| Case | edits measured | p50 ms | p90 ms | p99 ms | max ms | shown by the first read | not shown within %s | edit p50 ms | reads/s on B meanwhile |\n", wait)
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	measured := fmt.Sprintf("%d", r.Writes)
	if r.Writes < r.Wanted {
		measured = fmt.Sprintf("%d of %d (budget %s spent)", r.Writes, r.Wanted, budget)
	}
	firstPct := 0.0
	if r.Writes > 0 {
		firstPct = 100 * float64(r.FirstRead) / float64(r.Writes)
	}
	fmt.Fprintf(w, "| propagation A→B | %s | %s | %s | %s | %s | %.1f%% | %d | %s | %.0f (%d readers, %d/s asked) |\n",
		measured, ms(r.P50Ms), ms(r.P90Ms), ms(r.P99Ms), ms(r.MaxMs), firstPct, r.NotShown, ms(r.WriteP50Ms), r.LoadRPS, readers, rate)
	verdict := "met"
	if r.P99Ms > 50 || r.Writes < r.Wanted {
		verdict = "NOT met"
	}
	fmt.Fprintf(w, "\n**Propagation p99 = %s ms** over %d edits (goal ≤ 50 ms over %d: %s).\n", ms(r.P99Ms), r.Writes, r.Wanted, verdict)
}
