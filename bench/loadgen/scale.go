package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"
)

// scaleGoals are the "scale" section's goals (issue #14): the same list rows on a small and a
// large database, judged as ratios so they travel between machines.
type scaleGoals struct {
	small, large string  // the two data sizes' labels, e.g. 1k and 1M
	ref          string  // the ceiling row
	list         string  // the global first page: its large figure is judged against the ceiling
	feed32       string  // the row whose large p99 at 32 connections is judged
	minRatio     float64 // each row's large req/s ≥ minRatio × its small req/s
	minCeiling   float64 // list at large ≥ minCeiling × the ceiling's req/s
	maxP99Ms     float64 // feed32's p99 at large, ms
	maxRSS       float64 // the server's RSS after the large loads ≤ maxRSS × after the small ones
}

func scaleMain(args []string) error {
	fs := flag.NewFlagSet("loadgen scale", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: loadgen scale -small FILE -large FILE [flags]

Reads the JSON of 'loadgen run -json' runs over the same rows on a small and on a large database
(-small and -large repeat: their rows are concatenated), and prints one markdown table with both
figures, the large/small ratio of each row and the large list row's fraction of the ceiling,
then each goal with PASS or FAIL. Failing goals do not make it exit non-zero.

Flags:
`)
		fs.PrintDefaults()
	}
	var smallFiles, largeFiles multiFlag
	fs.Var(&smallFiles, "small", "JSON of a run on the small database (repeatable)")
	fs.Var(&largeFiles, "large", "JSON of a run on the large database (repeatable)")
	g := scaleGoals{}
	fs.StringVar(&g.small, "small-label", "1k", "the small data size's name in the table")
	fs.StringVar(&g.large, "large-label", "1M", "the large data size's name in the table")
	fs.StringVar(&g.ref, "ref", "ceiling", "the ceiling row (in either run; the large one's preferred)")
	fs.StringVar(&g.list, "list", "list", "the global first page row, judged against the ceiling")
	fs.StringVar(&g.feed32, "feed32", "feed", "the row whose p99 at 32 connections on the large data is judged")
	fs.Float64Var(&g.minRatio, "min-ratio", 0.8, "goal: every row's large req/s ≥ this × its small req/s (0.8: within 1.25×)")
	fs.Float64Var(&g.minCeiling, "min-ceiling", 0.3, "goal: the large list row's req/s ≥ this × the ceiling's")
	maxP99 := fs.Duration("max-p99", 20*time.Millisecond, "goal: the -feed32 row's p99 on the large data")
	fs.Float64Var(&g.maxRSS, "max-rss", 1.2, "goal: the server's RSS after the large loads ≤ this × after the small ones")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(smallFiles) == 0 || len(largeFiles) == 0 || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("give -small FILE and -large FILE, and no arguments")
	}
	g.maxP99Ms = toMs(*maxP99)
	small, err := readResults(smallFiles)
	if err != nil {
		return err
	}
	large, err := readResults(largeFiles)
	if err != nil {
		return err
	}
	return writeScaleReport(os.Stdout, small, large, g)
}

func readResults(files []string) ([]result, error) {
	var all []result
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var rs []result
		if err := json.Unmarshal(raw, &rs); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, rs...)
	}
	return all, nil
}

var cursorValue = regexp.MustCompile(`cursor=[^&]+`)

// writeScaleReport prints the rows both runs measured, in the small run's order, and the goals.
func writeScaleReport(w io.Writer, small, large []result, g scaleGoals) error {
	find := func(rs []result, name string) *result {
		for i := range rs {
			if rs[i].Name == name {
				return &rs[i]
			}
		}
		return nil
	}
	ceiling := find(large, g.ref)
	if ceiling == nil {
		ceiling = find(small, g.ref)
	}
	if ceiling == nil || ceiling.RPS == 0 {
		return fmt.Errorf("no measured %q row in either run", g.ref)
	}
	type pair struct{ s, l *result }
	var rows []pair
	for i := range small {
		if l := find(large, small[i].Name); l != nil && small[i].Name != g.ref {
			rows = append(rows, pair{&small[i], l})
		}
	}
	if len(rows) == 0 {
		return errors.New("the two runs have no row in common")
	}
	S, L := g.small, g.large
	fmt.Fprintf(w, "| Case | Request | %s req/s | %s p50 ms | %s p99 ms | %s req/s | %s p50 ms | %s p99 ms | %s/%s req/s | %s vs %s | RSS after, MiB (%s / %s) |\n",
		S, S, S, L, L, L, L, S, L, g.ref, S, L)
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	fmt.Fprintf(w, "| %s | `%s` | | | | %.0f | %s | %s | | 100%% | |\n", g.ref, ceiling.Request, ceiling.RPS, ms(ceiling.P50Ms), ms(ceiling.P99Ms))
	var below []string // rows under the ratio goal, or else the lowest one
	lowest := rows[0]
	for _, p := range rows {
		ratio := ratioOf(p.l.RPS, p.s.RPS)
		if ratio < ratioOf(lowest.l.RPS, lowest.s.RPS) {
			lowest = p
		}
		if ratio < g.minRatio {
			below = append(below, fmt.Sprintf("%s %.3f", p.s.Name, ratio))
		}
		req := "`" + cursorValue.ReplaceAllString(p.s.Request, "cursor=…") + "`"
		if p.s.SignedIn {
			req += " (signed in)"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f | %.1f%% | %s / %s |\n",
			p.s.Name, req, figures(p.s), figures(p.l), ratio, 100*p.l.RPS/ceiling.RPS, mib(p.s.RSSKiB), mib(p.l.RSSKiB))
	}
	if c32 := find(large, g.feed32); c32 != nil && find(small, g.feed32) == nil {
		fmt.Fprintf(w, "| %s | `%s` (%d connections) | | | | %s | | %.1f%% | – / %s |\n",
			c32.Name, cursorValue.ReplaceAllString(c32.Request, "cursor=…"), c32.Concurrency, figures(c32), 100*c32.RPS/ceiling.RPS, mib(c32.RSSKiB))
	}

	verdict := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "FAIL"
	}
	fmt.Fprintf(w, "\nGoals (%s vs %s):\n\n", L, S)
	detail := fmt.Sprintf("lowest: %s %.3f", lowest.s.Name, ratioOf(lowest.l.RPS, lowest.s.RPS))
	if len(below) > 0 {
		detail = "below: " + strings.Join(below, ", ")
	}
	fmt.Fprintf(w, "- every row at %s ≥ %.2f of its %s req/s (within %.2f×): **%s** (%s)\n",
		L, g.minRatio, S, 1/g.minRatio, verdict(len(below) == 0), detail)
	if list := find(large, g.list); list != nil {
		frac := list.RPS / ceiling.RPS
		fmt.Fprintf(w, "- %s at %s ≥ %.2f of the %s: **%s** (%.0f / %.0f req/s = %.3f)\n",
			g.list, L, g.minCeiling, g.ref, verdict(frac >= g.minCeiling), list.RPS, ceiling.RPS, frac)
	} else {
		fmt.Fprintf(w, "- %s at %s ≥ %.2f of the %s: **FAIL** (not measured)\n", g.list, L, g.minCeiling, g.ref)
	}
	if f := find(large, g.feed32); f != nil && f.Concurrency == 32 && f.Requests == 0 {
		fmt.Fprintf(w, "- %s at %s, 32 connections: p99 ≤ %s ms: **FAIL** (no request finished inside the %gs window)\n",
			f.Name, L, ms(g.maxP99Ms), f.Seconds)
	} else if f != nil && f.Concurrency == 32 {
		fmt.Fprintf(w, "- %s at %s, 32 connections: p99 ≤ %s ms: **%s** (p99 %s ms)\n",
			f.Name, L, ms(g.maxP99Ms), verdict(f.P99Ms <= g.maxP99Ms), ms(f.P99Ms))
	} else {
		fmt.Fprintf(w, "- %s at %s, 32 connections: p99 ≤ %s ms: **FAIL** (no such row at 32 connections)\n", g.feed32, L, ms(g.maxP99Ms))
	}
	rs, rl := maxRSS(small, g.ref), maxRSS(large, g.ref)
	if rs > 0 && rl > 0 {
		fmt.Fprintf(w, "- server RSS after the loads at %s ≤ %.2f × at %s: **%s** (largest after any row: %s vs %s MiB = %.2f)\n",
			L, g.maxRSS, S, verdict(float64(rl) <= g.maxRSS*float64(rs)), mib(rl), mib(rs), float64(rl)/float64(rs))
	} else {
		fmt.Fprintf(w, "- server RSS after the loads at %s ≤ %.2f × at %s: **FAIL** (not recorded: run with -rss PID)\n", L, g.maxRSS, S)
	}
	return nil
}

// figures is a row's req/s, p50 and p99 cells; a row none of whose requests finished inside the
// window (loadgen run -slow-ok) has no latencies to show, only that they were longer.
func figures(r *result) string {
	if r.Requests == 0 {
		return fmt.Sprintf("0 | > %gs | > %gs", r.Seconds, r.Seconds)
	}
	return fmt.Sprintf("%.0f | %s | %s", r.RPS, ms(r.P50Ms), ms(r.P99Ms))
}

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// maxRSS is the largest RSS the server had after a row's load; the ceiling's load is not the
// server's, so its row does not count.
func maxRSS(rs []result, ref string) int64 {
	var m int64
	for _, r := range rs {
		if r.Name != ref {
			m = max(m, r.RSSKiB)
		}
	}
	return m
}

func mib(kib int64) string {
	if kib == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", float64(kib)/1024)
}
