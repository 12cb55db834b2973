package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds inkwell's metrics.
type Registry struct {
	reg     *prometheus.Registry
	http    *prometheus.HistogramVec
	jobs    *prometheus.HistogramVec
	log     *slog.Logger
	timeout time.Duration
}

// New returns a registry with the Go runtime and process collectors.
func New(log *slog.Logger) *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "inkwell_http_request_duration_seconds",
		Help:    "HTTP requests by route template, method and status.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"route", "method", "status"})
	jobs := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "inkwell_job_duration_seconds",
		Help:    "Job runs by queue, kind and outcome (done, retry, dead, lease_lost, cancelled, unrecorded).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"queue", "kind", "outcome"})
	reg.MustRegister(h, jobs)
	return &Registry{reg: reg, http: h, jobs: jobs, log: log, timeout: 2 * time.Second}
}

// ObserveJob records one job run (job.JobObserver). The runner passes a closed set: its queue,
// a kind it has a handler for (else "unknown") and one of its outcomes.
func (r *Registry) ObserveJob(queue, kind, outcome string, d time.Duration) {
	r.jobs.WithLabelValues(queue, kind, outcome).Observe(d.Seconds())
}

// ObserveRequest records one HTTP request (web.RequestObserver). route must be a route template
// or one fixed value for requests no route matched (the router's contract); the method and the
// status are brought into closed sets here, whatever the caller passes.
func (r *Registry) ObserveRequest(route, method string, status int, d time.Duration) {
	r.http.WithLabelValues(route, methodLabel(method), statusLabel(status)).Observe(d.Seconds())
}

// methodLabel is method when it is one of the standard HTTP methods, else "OTHER". The method is
// whatever token a client sends, of any length, and every distinct label value is a series kept
// until the process restarts: 50 requests with 20 KB method names once grew /metrics by 15 MB.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// statusLabel is the status code, or "other" outside 100..599 (no valid answer has one).
func statusLabel(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status)
}

// Handler serves the metrics in the Prometheus text format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{ErrorLog: slogAdapter{r.log}})
}

type scrapedCollector struct {
	descs   []*prometheus.Desc
	fn      func(ctx context.Context, emit func(desc *prometheus.Desc, v float64, labels ...string)) error
	log     *slog.Logger
	timeout time.Duration
}

func (s *scrapedCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range s.descs {
		ch <- d
	}
}

func (s *scrapedCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	err := s.fn(ctx, func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	})
	if err != nil {
		s.log.Warn("metrics scrape query failed", "err", err)
	}
}

type slogAdapter struct{ log *slog.Logger }

func (a slogAdapter) Println(v ...any) { a.log.Warn("metrics handler", "err", v) }
