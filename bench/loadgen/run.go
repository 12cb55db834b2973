package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds that keep a run small whatever the flags say.
const (
	maxConcurrency = 256
	maxDuration    = 60 * time.Second
	maxWarmup      = 30 * time.Second
	maxTargets     = 10
)

// result is one measured target.
type result struct {
	Name        string  `json:"name"`
	Request     string  `json:"request"`
	Writes      bool    `json:"writes,omitempty"` // sent as signed-in users
	Signed      bool    `json:"signed,omitempty"` // a read sent as signed-in users (-signed)
	URL         string  `json:"url"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	Requests    int     `json:"requests"` // successful responses completed inside the window
	// OKTotal counts every 200 answer of the target, warm-up and the requests cut off at the end
	// included: what the server did, for checking counts afterwards.
	OKTotal int `json:"okTotal"`
	// EndedOnFirst counts the workers whose last 200 answer was to the cycle's first method (for
	// likes=POST+DELETE: the writers who like the article at the end).
	EndedOnFirst int                `json:"endedOnFirst"`
	Errors       int                `json:"errors"`
	ErrorSample  string             `json:"errorSample,omitempty"`
	RPS          float64            `json:"rps"`
	MeanMs       float64            `json:"meanMs"`
	P50Ms        float64            `json:"p50Ms"`
	P90Ms        float64            `json:"p90Ms"`
	P99Ms        float64            `json:"p99Ms"`
	MaxMs        float64            `json:"maxMs"`
	BytesPerRsp  float64            `json:"bytesPerResponse"`
	CPU          *cpuDelta          `json:"cpu,omitempty"`
	CPUPerReqUs  map[string]float64 `json:"cpuMicrosPerRequest,omitempty"`
	SignedIn     bool               `json:"signedIn,omitempty"` // a read sent with -auth's token
	RSSKiB       int64              `json:"rssKiB,omitempty"`   // -rss process's VmRSS right after the window
	PeakRSSKiB   int64              `json:"peakRssKiB,omitempty"`
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

type runConfig struct {
	concurrency int
	duration    time.Duration
	warmup      time.Duration
	timeout     time.Duration
	cpuSets     []procSet
	tokens      []string // worker i of a write target signs with tokens[i]
}

const runUsage = `Usage: loadgen run [flags] TARGET...

Measures each target in turn: a warm-up, then a measured window, with C workers each sending its
next request as soon as the previous answer is read (closed loop). Only 200 answers (and 201 to a
POST) count as successes; anything else is an error, and any error makes the run exit non-zero.

A TARGET is one of
  NAME=URL                          GET URL, anonymously
  'NAME=METHOD[+METHOD...] URL'     each worker sends the methods in turn (e.g. POST+DELETE),
                                    one request each, as its own user (see -tokens)
URLs must be http:// on a loopback host. Requests other than GET carry worker i's token from
-tokens ("Authorization: Token ..."), and POST, PUT and PATCH the target's -body.

Example:
  loadgen run -c 32 -tokens tokens.txt \
    -body 'comments={"comment":{"body":"hello"}}' \
    ceiling=http://127.0.0.1:18090/ceiling \
    'likes=POST+DELETE http://127.0.0.1:18080/api/articles/SLUG/favorite' \
    'comments=POST http://127.0.0.1:18080/api/articles/SLUG/comments'

Flags:
`

func runMain(args []string) error {
	fs := flag.NewFlagSet("loadgen run", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), runUsage)
		fs.PrintDefaults()
	}
	c := fs.Int("c", 32, fmt.Sprintf("concurrent workers (connections), 1..%d", maxConcurrency))
	d := fs.Duration("d", 10*time.Second, fmt.Sprintf("measured window per target, up to %s", maxDuration))
	w := fs.Duration("warmup", 2*time.Second, fmt.Sprintf("unmeasured warm-up per target, up to %s", maxWarmup))
	timeout := fs.Duration("timeout", 5*time.Second, "per-request timeout; a timeout counts as an error")
	ref := fs.String("ref", "ceiling", "target NAME every req/s is compared with (the 'vs ceiling' column)")
	var goals multiFlag
	fs.Var(&goals, "goal", "NAME[/BASE]=RATIO: report whether NAME reaches RATIO of BASE's req/s (default BASE: -ref), e.g. article=0.5 or article-signed/article=0.5 (repeatable)")
	jsonOut := fs.String("json", "", "also write the results as JSON to this file")
	signed := fs.String("signed", "", "NAME[,NAME...]: read targets sent signed in, worker i with line i of -tokens (the anonymous read's signed-in twin)")
	tokenFile := fs.String("tokens", "", "file of access tokens, one per line: worker i of a write target signs with line i (needs at least -c distinct tokens)")
	var bodyFlags multiFlag
	fs.Var(&bodyFlags, "body", "NAME=JSON: the body target NAME sends with POST, PUT and PATCH (repeatable)")
	var urlFlags multiFlag
	fs.Var(&urlFlags, "urls", "NAME=FILE: read target NAME cycles through the URLs in FILE, one per line, worker i starting at line i (repeatable)")
	var authFlags multiFlag
	fs.Var(&authFlags, "auth", "NAME=FILE: every worker of read target NAME signs with the first token in FILE (one signed-in reader; repeatable)")
	slowOK := fs.Bool("slow-ok", false, "a target with no request inside its window (each took longer) is reported with 0 req/s instead of failing the run; errors still fail it")
	rssPID := fs.Int("rss", 0, "PID: record this process's resident memory (VmRSS, VmHWM from /proc) right after each target's window")
	var cpuFlags multiFlag
	fs.Var(&cpuFlags, "cpu", "LABEL=PID[,PID...], LABEL=comm:NAME or LABEL=tree:PID (the process and its descendants): report the CPU these processes use per request (repeatable; Linux)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := runConfig{concurrency: *c, duration: *d, warmup: *w, timeout: *timeout}
	switch {
	case cfg.concurrency < 1 || cfg.concurrency > maxConcurrency:
		return fmt.Errorf("-c must be 1..%d", maxConcurrency)
	case cfg.duration <= 0 || cfg.duration > maxDuration:
		return fmt.Errorf("-d must be in (0, %s]", maxDuration)
	case cfg.warmup < 0 || cfg.warmup > maxWarmup:
		return fmt.Errorf("-warmup must be in [0, %s]", maxWarmup)
	case cfg.timeout <= 0 || cfg.timeout > 30*time.Second:
		return errors.New("-timeout must be in (0, 30s]")
	case fs.NArg() == 0:
		fs.Usage()
		return errNoTargets
	case fs.NArg() > maxTargets:
		return fmt.Errorf("at most %d targets", maxTargets)
	}
	targets, err := parseTargets(fs.Args(), bodyFlags)
	if err != nil {
		return err
	}
	if err := markSigned(targets, *signed); err != nil {
		return err
	}
	if cfg.tokens, err = workerTokens(targets, *tokenFile, cfg.concurrency); err != nil {
		return err
	}
	if err := attachReaders(targets, authFlags); err != nil {
		return err
	}
	if err := attachURLs(targets, urlFlags); err != nil {
		return err
	}
	if *rssPID < 0 {
		return errors.New("-rss must be a pid")
	}
	cfg.cpuSets = []procSet{{Label: "loadgen", pids: []int{os.Getpid()}}}
	for _, s := range cpuFlags {
		ps, err := parseProcSet(s)
		if err != nil {
			return err
		}
		cfg.cpuSets = append(cfg.cpuSets, ps)
	}

	var results []result
	for _, t := range targets {
		fmt.Fprintf(os.Stderr, "run: %-10s %s %s  (c=%d, warm-up %s, measure %s)\n", t.Name, strings.Join(t.Methods, "+"), t.URL, cfg.concurrency, cfg.warmup, cfg.duration)
		r := measure(t, cfg)
		if *rssPID > 0 {
			if r.RSSKiB, r.PeakRSSKiB, err = readRSS(*rssPID); err != nil {
				return fmt.Errorf("-rss: %w", err)
			}
		}
		fmt.Fprintf(os.Stderr, "run: %-10s %.0f req/s, p50 %s ms, p99 %s ms, %d errors\n", t.Name, r.RPS, ms(r.P50Ms), ms(r.P99Ms), r.Errors)
		results = append(results, r)
	}

	printTables(os.Stdout, results, cfg, *ref)
	for _, g := range goals {
		if err := printGoal(os.Stdout, results, *ref, g); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		raw, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(raw, '\n'), 0o644); err != nil {
			return err
		}
	}
	return checkResults(results, *slowOK)
}

// checkResults fails a run in which a request failed, or (unless slowOK) a target had no request
// both start and finish inside its window: such numbers are not valid. With slowOK a silent target
// is a measurement too — slower than the window — which the scale section reports as such.
func checkResults(results []result, slowOK bool) error {
	for _, r := range results {
		if r.Errors > 0 || (r.Requests == 0 && !slowOK) {
			return fmt.Errorf("%s: %d errors, %d successful requests (first error: %s); the numbers above are not valid", r.Name, r.Errors, r.Requests, r.ErrorSample)
		}
	}
	return nil
}

// workerStats is what one worker saw inside the measured window.
type workerStats struct {
	lat      []time.Duration
	bytes    int64
	errs     int
	firstErr string
	okAll    int // 200 answers, inside the window or not
	lastOK   int // the cycle position of the last 200 answer (-1: none)
}

// measure runs one target: C workers in a closed loop for warm-up plus duration. Only requests
// that both start and finish inside the measured window count, so neither the warm-up nor the
// requests cut off at the end bias the figures.
func measure(t target, cfg runConfig) result {
	tr := &http.Transport{
		MaxIdleConns:        cfg.concurrency,
		MaxIdleConnsPerHost: cfg.concurrency,
		MaxConnsPerHost:     cfg.concurrency,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true, // the server does not compress either; keep the bytes comparable
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: cfg.timeout}

	start := time.Now()
	mStart := start.Add(cfg.warmup)
	mEnd := mStart.Add(cfg.duration)

	var cpuA, cpuB cpuSample
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		time.Sleep(time.Until(mStart))
		cpuA = takeCPUSample(cfg.cpuSets)
		time.Sleep(time.Until(mEnd))
		cpuB = takeCPUSample(cfg.cpuSets)
	}()

	stats := make([]workerStats, cfg.concurrency)
	var wg sync.WaitGroup
	for i := range stats {
		ws := &stats[i]
		ws.lat = make([]time.Duration, 0, 1<<14)
		ws.lastOK = -1
		token := t.Token
		if t.signs() {
			token = cfg.tokens[i]
		}
		wg.Go(func() {
			send, err := newSender(t, token, i*len(t.URLs)/cfg.concurrency)
			if err != nil {
				ws.errs, ws.firstErr = 1, err.Error()
				return
			}
			for k := 0; ; k++ {
				t0 := time.Now()
				if !t0.Before(mEnd) {
					return
				}
				n, err := doOne(client, send(k))
				t1 := time.Now()
				if err != nil {
					time.Sleep(10 * time.Millisecond) // no hot spin against a refusing server
				} else {
					ws.okAll++
					ws.lastOK = k % max(len(t.Methods), 1)
				}
				if t0.Before(mStart) || t1.After(mEnd) {
					continue
				}
				if err != nil {
					if ws.errs == 0 {
						ws.firstErr = err.Error()
					}
					ws.errs++
					continue
				}
				ws.lat = append(ws.lat, t1.Sub(t0))
				ws.bytes += n
			}
		})
	}
	wg.Wait()
	<-sampled

	r := result{Name: t.Name, Request: t.Path, Writes: t.writes(), Signed: t.Signed, SignedIn: t.Token != "", URL: t.URL, Concurrency: cfg.concurrency, Seconds: cfg.duration.Seconds()}
	var all []time.Duration
	var bytes int64
	for _, ws := range stats {
		all = append(all, ws.lat...)
		bytes += ws.bytes
		r.Errors += ws.errs
		r.OKTotal += ws.okAll
		if ws.lastOK == 0 {
			r.EndedOnFirst++
		}
		if r.ErrorSample == "" {
			r.ErrorSample = ws.firstErr
		}
	}
	slices.Sort(all)
	r.Requests = len(all)
	r.RPS = float64(len(all)) / cfg.duration.Seconds()
	if len(all) > 0 {
		var sum time.Duration
		for _, l := range all {
			sum += l
		}
		r.MeanMs = toMs(sum / time.Duration(len(all)))
		r.P50Ms = toMs(percentile(all, 0.50))
		r.P90Ms = toMs(percentile(all, 0.90))
		r.P99Ms = toMs(percentile(all, 0.99))
		r.MaxMs = toMs(all[len(all)-1])
		r.BytesPerRsp = float64(bytes) / float64(len(all))
	}
	if d, ok := diffCPU(cpuA, cpuB, cfg.cpuSets); ok {
		r.CPU = &d
		if r.Requests > 0 {
			r.CPUPerReqUs = map[string]float64{}
			var tracked float64
			for label, s := range d.Seconds {
				r.CPUPerReqUs[label] = s * 1e6 / float64(r.Requests)
				tracked += s
			}
			r.CPUPerReqUs["kernel irq"] = d.MachineIRQ * 1e6 / float64(r.Requests)
			r.CPUPerReqUs["other"] = max(0, d.MachineBusy-d.MachineIRQ-tracked) * 1e6 / float64(r.Requests)
		}
	}
	return r
}

// newSender returns the k-th request of a worker of t: t.Methods[k%len] in turn, or with -urls
// t.URLs[(start+k)%len] (workers start spread over the file, so with a file longer than a window's
// requests no URL repeats: no cache of recent answers is hit by another worker's same query). Requests without a body are built once and reused; a request with a body is
// built anew each time, since the transport may still hold the previous one's body when Do returns.
func newSender(t target, token string, start int) (func(k int) *http.Request, error) {
	if len(t.URLs) > 0 {
		reqs := make([]*http.Request, len(t.URLs))
		for j, u := range t.URLs {
			req, err := http.NewRequest(http.MethodGet, u, nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Accept", "application/json")
			if token != "" {
				req.Header.Set("Authorization", "Token "+token)
			}
			reqs[j] = req
		}
		return func(k int) *http.Request { return reqs[(start+k)%len(reqs)] }, nil
	}
	methods := t.Methods
	if len(methods) == 0 {
		methods = []string{http.MethodGet}
	}
	reqs := make([]*http.Request, len(methods))
	for j, m := range methods {
		req, err := http.NewRequest(m, t.URL, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Token "+token)
		}
		if hasBody(m) && t.Body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		reqs[j] = req
	}
	return func(k int) *http.Request {
		req := reqs[k%len(reqs)]
		if !hasBody(req.Method) || t.Body == nil {
			return req
		}
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(t.Body))
		r.ContentLength = int64(len(t.Body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(t.Body)), nil }
		return r
	}, nil
}

// doOne sends req and reads the whole body; anything but 200 (or 201 to a POST: a create) is an
// error (its method and status, and the start of the answer, make the error sample).
func doOne(client *http.Client, req *http.Request) (int64, error) {
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK && (req.Method != http.MethodPost || resp.StatusCode != http.StatusCreated) {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return int64(len(head)), fmt.Errorf("%s: status %d: %s", req.Method, resp.StatusCode, strings.TrimSpace(string(head)))
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return n, err
	}
	return n, nil
}

// percentile returns the q-quantile of sorted (nearest rank).
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func toMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(v float64) string {
	if v < 1 {
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func printTables(w io.Writer, results []result, cfg runConfig, ref string) {
	var refRPS float64
	for _, r := range results {
		if r.Name == ref {
			refRPS = r.RPS
		}
	}
	fmt.Fprintf(w, "Closed loop, %d connections, %s warm-up then %s measured per row, one row after another.",
		cfg.concurrency, cfg.warmup, cfg.duration)
	var writes []string
	for _, r := range results {
		if r.Writes {
			writes = append(writes, r.Name)
		}
	}
	var signedReads []string
	for _, r := range results {
		if r.Signed && !r.Writes {
			signedReads = append(signedReads, r.Name)
		}
	}
	if len(signedReads) > 0 {
		fmt.Fprintf(w, " The signed-in reads (%s) are sent by each connection as its own user.", strings.Join(signedReads, ", "))
	}
	if len(writes) > 0 {
		fmt.Fprintf(w, " Other reads are anonymous; in the write rows (%s) each connection is its own signed-in user, cycling through the methods shown (each one a request).",
			strings.Join(writes, ", "))
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintln(w, "| Case | Request | req/s | p50 ms | p90 ms | p99 ms | max ms | errors | bytes/resp | vs "+ref+" |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range results {
		vs := "–"
		if refRPS > 0 {
			vs = fmt.Sprintf("%.0f%%", 100*r.RPS/refRPS)
		}
		fmt.Fprintf(w, "| %s | `%s` | %.0f | %s | %s | %s | %s | %d | %.0f | %s |\n",
			r.Name, r.Request, r.RPS, ms(r.P50Ms), ms(r.P90Ms), ms(r.P99Ms), ms(r.MaxMs), r.Errors, r.BytesPerRsp, vs)
	}

	// CPU per request, by process group, when /proc was readable.
	labels := make([]string, 0, len(cfg.cpuSets)+1)
	for _, s := range cfg.cpuSets {
		if s.Label != "loadgen" {
			labels = append(labels, s.Label)
		}
	}
	labels = append(labels, "loadgen", "kernel irq", "other")
	var haveCPU bool
	for _, r := range results {
		haveCPU = haveCPU || r.CPUPerReqUs != nil
	}
	if !haveCPU {
		return
	}
	fmt.Fprintf(w, "\nCPU time per request in µs, by process (from /proc: \"kernel irq\" is irq+softirq time, mostly loopback TCP, charged to no process; \"other\" is the rest of the machine's busy time), how many of the %d cores were busy, and how much the hypervisor stole:\n\n", runtime.NumCPU())
	fmt.Fprintf(w, "| Case | %s | cores busy | steal |\n", strings.Join(labels, " | "))
	fmt.Fprintf(w, "|---|%s--:|--:|\n", strings.Repeat("--:|", len(labels)))
	for _, r := range results {
		if r.CPUPerReqUs == nil {
			continue
		}
		cells := make([]string, len(labels))
		for i, l := range labels {
			cells[i] = fmt.Sprintf("%.0f", r.CPUPerReqUs[l])
		}
		fmt.Fprintf(w, "| %s | %s | %.2f | %.0f%% |\n", r.Name, strings.Join(cells, " | "), r.CPU.MachineBusy/r.Seconds,
			100*r.CPU.MachineSteal/(r.Seconds*float64(runtime.NumCPU())))
	}
}

func printGoal(w io.Writer, results []result, ref, goal string) error {
	name, raw, ok := strings.Cut(goal, "=")
	ratio, err := strconv.ParseFloat(raw, 64)
	if !ok || err != nil || ratio <= 0 {
		return fmt.Errorf("-goal %q: want NAME[/BASE]=RATIO", goal)
	}
	if n, base, ok := strings.Cut(name, "/"); ok {
		name, ref = n, base
	}
	var got, base *result
	for i := range results {
		switch results[i].Name {
		case name:
			got = &results[i]
		case ref:
			base = &results[i]
		}
	}
	if got == nil || base == nil || base.RPS == 0 {
		return fmt.Errorf("-goal %q: need measured targets %q and %q", goal, name, ref)
	}
	have := got.RPS / base.RPS
	verdict := "met"
	if have < ratio {
		verdict = "NOT met"
	}
	fmt.Fprintf(w, "\n**%s / %s = %.0f / %.0f req/s = %.2f** (goal ≥ %.2f: %s).\n", name, ref, got.RPS, base.RPS, have, ratio, verdict)
	return nil
}
