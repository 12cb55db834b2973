package metrics

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric is one entry of inkwell's metric catalogue: its name, help and label names, declared
// once in this package (catalogue_*.go), since dashboards, deploy/alerts.yml and the tests refer
// to them by name. The composition root binds each to the value it reads (Count, CountFunc,
// Gauge, Scrape); the label values it passes follow the declared label names, in order.
type Metric struct {
	name, help string
	labels     []string
	kind       kind
	desc       *prometheus.Desc // scraped metrics only: their label values vary by scrape
}

type kind int

const (
	counterKind kind = iota // only grows; read at scrape time from an adapter's counter
	gaugeKind               // a value computed at scrape time
	scrapedKind             // a gauge whose series (label values) a store query finds at scrape time
)

func (k kind) String() string {
	return [...]string{"counter", "gauge", "scraped gauge"}[k]
}

// declared is the catalogue, in declaration order, for the test that checks it as a whole.
var declared []Metric

func declare(m Metric) Metric {
	declared = append(declared, m)
	return m
}

func counter(name, help string, labels ...string) Metric {
	return declare(Metric{name: name, help: help, labels: labels, kind: counterKind})
}

func gauge(name, help string, labels ...string) Metric {
	return declare(Metric{name: name, help: help, labels: labels, kind: gaugeKind})
}

func scraped(name, help string, labels ...string) Metric {
	return declare(Metric{name: name, help: help, labels: labels, kind: scrapedKind, desc: prometheus.NewDesc(name, help, labels, nil)})
}

// Name is the metric's name as Prometheus shows it.
func (m Metric) Name() string { return m.name }

// constLabels pairs m's label names with one series' values; a mismatch is a wiring mistake,
// found when the app is built (every test that wires it).
func (m Metric) constLabels(want kind, values []string) prometheus.Labels {
	if m.kind != want {
		panic(fmt.Sprintf("metrics: %s is a %s, registered as a %s", m.name, m.kind, want))
	}
	if len(values) != len(m.labels) {
		panic(fmt.Sprintf("metrics: %s has labels %v, registered with values %v", m.name, m.labels, values))
	}
	if len(values) == 0 {
		return nil
	}
	l := make(prometheus.Labels, len(values))
	for i, name := range m.labels {
		l[name] = values[i]
	}
	return l
}

// Count exposes c, a counter an adapter keeps as v, read at scrape time.
func (r *Registry) Count(c Metric, v *atomic.Int64, labelValues ...string) {
	r.CountFunc(c, func() float64 { return float64(v.Load()) }, labelValues...)
}

// CountFunc exposes c, a cumulative count a library keeps (pgxpool, go-redis pool stats), read at
// scrape time. A count that only grows is a counter, never a gauge: rate() needs the type, and a
// gauge named *_total is what `promtool check metrics` refuses.
func (r *Registry) CountFunc(c Metric, f func() float64, labelValues ...string) {
	r.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: c.name, Help: c.help, ConstLabels: c.constLabels(counterKind, labelValues),
	}, f))
}

// Gauge exposes g, a value computed at scrape time.
func (r *Registry) Gauge(g Metric, f func() float64, labelValues ...string) {
	r.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: g.name, Help: g.help, ConstLabels: g.constLabels(gaugeKind, labelValues),
	}, f))
}

// Scrape registers a collector that queries a store at scrape time (queue depth, stream lag) for
// the scraped metrics ms: fn emits their values; a failing query only costs that scrape its values.
func (r *Registry) Scrape(ms []Metric, fn func(ctx context.Context, emit func(m Metric, v float64, labelValues ...string)) error) {
	descs := make([]*prometheus.Desc, len(ms))
	for i, m := range ms {
		if m.kind != scrapedKind {
			panic(fmt.Sprintf("metrics: %s is a %s, registered as a %s", m.name, m.kind, scrapedKind))
		}
		descs[i] = m.desc
	}
	r.reg.MustRegister(&scrapedCollector{descs: descs, log: r.log, timeout: r.timeout,
		fn: func(ctx context.Context, emit func(*prometheus.Desc, float64, ...string)) error {
			return fn(ctx, func(m Metric, v float64, labelValues ...string) { emit(m.desc, v, labelValues...) })
		}})
}

// Bool is a gauge's value for a condition: 1 while it holds.
func Bool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
