package metrics

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCatalogue: every metric is declared once, with help, and a counter's name says it is one
// (promtool's rule: *_total for counters and only for them).
func TestCatalogue(t *testing.T) {
	if len(declared) < 70 {
		t.Fatalf("the catalogue holds %d metrics; the declarations did not all register", len(declared))
	}
	seen := map[string]bool{}
	for _, m := range declared {
		if seen[m.name] {
			t.Errorf("%s is declared twice", m.name)
		}
		seen[m.name] = true
		if !strings.HasPrefix(m.name, "inkwell_") {
			t.Errorf("%s lacks the inkwell_ prefix", m.name)
		}
		if strings.TrimSpace(m.help) == "" {
			t.Errorf("%s has no help", m.name)
		}
		if total := strings.HasSuffix(m.name, "_total"); total != (m.kind == counterKind) {
			t.Errorf("%s is a %s: only counters, and every counter, end in _total", m.name, m.kind)
		}
	}
}

// TestBindingsExposeTheDeclaredNamesAndLabels: what the registry serves is the declaration with
// the label values the binding passed.
func TestBindingsExposeTheDeclaredNamesAndLabels(t *testing.T) {
	r := New(slog.New(slog.DiscardHandler))
	var hits atomic.Int64
	hits.Store(3)
	r.Count(CacheHits, &hits, "user")
	r.Gauge(RedisBreakerOpen, func() float64 { return Bool(true) })
	r.Scrape([]Metric{StreamLag}, func(_ context.Context, emit func(Metric, float64, ...string)) error {
		emit(StreamLag, 7, "s", "g")
		return nil
	})
	body := scrape(t, r)
	for _, want := range []string{
		"# HELP inkwell_cache_hits_total Read-through cache hits.\n# TYPE inkwell_cache_hits_total counter\ninkwell_cache_hits_total{cache=\"user\"} 3\n",
		"# TYPE inkwell_redis_breaker_open gauge\ninkwell_redis_breaker_open 1\n",
		"# TYPE inkwell_stream_lag gauge\ninkwell_stream_lag{group=\"g\",stream=\"s\"} 7\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack\n%s\nin\n%s", want, body)
		}
	}
}

// TestBindingMistakesPanic: binding a metric as another kind, or with the wrong number of label
// values, is caught when the app is wired, not by a dashboard that stays empty.
func TestBindingMistakesPanic(t *testing.T) {
	r := New(slog.New(slog.DiscardHandler))
	var v atomic.Int64
	for name, bind := range map[string]func(){
		"a gauge as a counter":       func() { r.Count(RedisBreakerOpen, &v) },
		"a counter as a gauge":       func() { r.Gauge(CacheHits, func() float64 { return 0 }, "user") },
		"a counter as scraped":       func() { r.Scrape([]Metric{CacheHits}, nil) },
		"too few label values":       func() { r.Count(CacheHits, &v) },
		"label values on a constant": func() { r.Count(OutboxRelayed, &v, "x") },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			bind()
		})
	}
}

// TestTwoRegistriesShareTheCatalogue: in-process fleets (the e2e suite) wire one registry per
// instance from the same package-level declarations.
func TestTwoRegistriesShareTheCatalogue(t *testing.T) {
	for i := range 2 {
		r := New(slog.New(slog.DiscardHandler))
		var v atomic.Int64
		r.Count(OutboxRelayed, &v)
		r.Scrape([]Metric{OutboxBacklog}, func(_ context.Context, emit func(Metric, float64, ...string)) error {
			emit(OutboxBacklog, float64(i))
			return nil
		})
		if body := scrape(t, r); !strings.Contains(body, "inkwell_outbox_relayed_total 0\n") || !strings.Contains(body, "inkwell_outbox_backlog "+strconv.Itoa(i)+"\n") {
			t.Errorf("registry %d serves\n%s", i, body)
		}
	}
}
